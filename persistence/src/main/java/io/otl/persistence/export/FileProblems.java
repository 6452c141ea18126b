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
    if (e instanceof NoSuchFileException f) return noSuchFile(f.getFile());
    if (e instanceof AccessDeniedException f) return f.getFile() + ": permission denied";
    if (e instanceof FileSystemException f) {
      // A move of our temporary file into place names both; what is wrong is the place (a folder of that
      // name: "cannot write x.jsonl: x.jsonl.tmp: Is a directory" pointed at a file the user never made).
      return (f.getOtherFile() != null ? f.getOtherFile() : f.getFile()) + ": "
          + (f.getReason() != null ? f.getReason() : e.getClass().getSimpleName());
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  /**
   * A file or folder that could not be made. Its folder may exist and refuse new entries: {@code --out /proc/nope}
   * read "/proc/nope cannot be created (no such file or folder above it)", though /proc is there (trial-api);
   * else the message names the first folder on the way that is missing.
   */
  private static String noSuchFile(String file) {
    if (file == null) return "no such file or folder";
    java.nio.file.Path parent;
    try {
      parent = java.nio.file.Path.of(file).toAbsolutePath().getParent();
    } catch (java.nio.file.InvalidPathException e) {
      return file + " cannot be created (not a valid path)";
    }
    if (parent == null) return file + " cannot be created";
    if (java.nio.file.Files.isDirectory(parent)) {
      return file + " cannot be created: its folder " + parent + " exists but takes no new file or folder"
          + " (a system folder such as /proc or /sys, or a special file system); choose a folder of your own";
    }
    java.nio.file.Path missing = parent;
    while (missing.getParent() != null && !java.nio.file.Files.exists(missing.getParent())) missing = missing.getParent();
    return file + " cannot be created: the folder " + missing + " does not exist";
  }
}
