package io.otl.node.testing;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A node's H2 journal in a new folder under {@code target/}, with what the command-line tools need
 * beside it: the journal in {@code data/} (the node's data folder), their {@code --config} files,
 * and {@code out/} for what they write.
 *
 * @param db the node's journal settings ({@link TestDatabases#h2})
 */
public record ToolsJournal(Path folder, Config db) {

  public static ToolsJournal create(String prefix) {
    try {
      Path target = Files.createDirectories(Path.of("target").toAbsolutePath());
      Path folder = Files.createTempDirectory(target, prefix + "-");
      return new ToolsJournal(folder, TestDatabases.h2(folder.resolve("data")));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The node's data folder, which holds the journal. */
  public Path data() {
    return folder.resolve("data");
  }

  /** Writes {@code name} beside the journal: the tools' {@code --config} for it, with {@code settings}. */
  public Path config(String name, String... settings) {
    return TestDatabases.toolsConfig(db, folder.resolve(name), settings);
  }

  /** Where the tools write their files. */
  public Path out() {
    return folder.resolve("out");
  }
}
