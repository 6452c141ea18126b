package io.otl.persistence.export;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * What went wrong with a file, in words a user can act on. The JDK's file exceptions carry only the
 * path as their message, so "cannot write out/x.jsonl: out" did not say that {@code out} is a file, or
 * that its parent does not exist.
 */
public final class FileProblems {
  private FileProblems() {}

  /**
   * Removes a file an export is leaving behind after a failure, if it can: the failure being reported is
   * the one that matters, and a cleanup that fails too must not hide it.
   */
  public static void deleteQuietly(java.nio.file.Path p) {
    try {
      java.nio.file.Files.deleteIfExists(p);
    } catch (IOException | RuntimeException ignored) {
      // the failure being reported is the one that matters
    }
  }

  public static String describe(IOException e) {
    if (e instanceof FileAlreadyExistsException f) return f.getFile() + " exists and is not a folder";
    if (e instanceof NotDirectoryException f) return f.getFile() + " is not a folder";
    if (e instanceof NoSuchFileException f) return f.getFile() + " cannot be created (no such file or folder above it)";
    if (e instanceof AccessDeniedException f) return f.getFile() + ": permission denied";
    if (e instanceof FileSystemException f) {
      // A move of our temporary file into place names both; what is wrong is the place (a folder of that
      // name: "cannot write x.jsonl: x.jsonl.tmp: Is a directory" pointed at a file the user never made).
      return (f.getOtherFile() != null ? f.getOtherFile() : f.getFile()) + ": "
          + (f.getReason() != null ? f.getReason() : e.getClass().getSimpleName());
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }
}
