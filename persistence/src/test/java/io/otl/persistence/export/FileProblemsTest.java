package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An export's file moved into place where a folder of its name stands: the message names that folder,
 * not the temporary file (trial t73: "cannot write out/x.jsonl: out/x.jsonl.tmp: Is a directory").
 */
class FileProblemsTest {

  @Test
  void aMoveOntoAFolderNamesTheFolder(@TempDir Path dir) throws Exception {
    Path target = Files.createDirectories(dir.resolve("x.jsonl"));
    Files.writeString(target.resolve("inside"), "keeps the folder non-empty");
    Path tmp = Files.writeString(dir.resolve("x.jsonl.tmp"), "{}\n");
    IOException e = assertThrows(IOException.class,
        () -> Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE));
    assertEquals(target + ": " + ((java.nio.file.FileSystemException) e).getReason(), FileProblems.describe(e));
  }

  /** {@code export --out /proc/nope}: /proc is there, and refuses the folder (trial-api). */
  @Test
  void aFolderThatExistsButRefusesANewEntryIsNamedAsSuch(@TempDir Path dir) {
    String refused = dir.resolve("nope").toString();
    assertEquals(refused + " cannot be created: its folder " + dir + " exists but takes no new file or folder"
        + " (a system folder such as /proc or /sys, or a special file system); choose a folder of your own",
        FileProblems.describe(new java.nio.file.NoSuchFileException(refused)));
  }

  @Test
  void aMissingFolderOnTheWayIsNamed(@TempDir Path dir) {
    String deep = dir.resolve("a").resolve("b").resolve("x.jsonl").toString();
    assertEquals(deep + " cannot be created: the folder " + dir.resolve("a") + " does not exist",
        FileProblems.describe(new java.nio.file.NoSuchFileException(deep)));
  }
}
