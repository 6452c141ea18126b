package io.otl.persistence.export;

import io.otl.core.session.Desensitizer;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a JSON Lines file line by line into a temporary file, hashing (SHA-256) and PII-scanning each line
 * (as written and its escaped strings decoded, {@link LineScan}) as it goes; {@link #commit()} moves it into
 * place. Holds nothing of the lines but the session ids for the manifest.
 *
 * <p>A line the scan finds something in is first desensitized by the node's own rules ({@code rules}) and
 * scanned again; only what is left counts as a finding ({@link AsWritten}: the training content only, never
 * {@code metadata} or a number; a line whose ids or numbers hold what the rules take is left out). Sessions
 * are desensitized when they are stored, by the rules of that build: text an earlier build stored raw, which
 * a later build's rules take (a national phone number, a {@code DB_PASS=} setting, a key after an escaped
 * line break), failed the first job after an upgrade, and the job's trajectories with it (trial t165). The
 * journal keeps what was stored.
 */
final class JsonlFile implements AutoCloseable {
  private final Path target;
  private final Path tmp;
  private final OutputStream out;
  private final MessageDigest sha;
  private final Desensitizer scanner = Desensitizer.builtInScanner();
  /** The node's rules, applied to a line the scan finds something in; a disabled one changes nothing. */
  private final Desensitizer rules;
  private int desensitized;
  private final Map<String, Integer> findings = new TreeMap<>();
  private final List<String> sessionIds = new ArrayList<>();
  private int count;
  private boolean committed;

  /** Scans only: lines are written as given. */
  JsonlFile(Path target) {
    this(target, new Desensitizer(false, List.of(), List.of()));
  }

  JsonlFile(Path target, Desensitizer rules) {
    this.target = target;
    this.rules = rules;
    try {
      Files.createDirectories(target.toAbsolutePath().getParent());
      // Hidden: a job's folder is read by datasets.load_dataset(folder), which skips dot files but
      // would read a temp file a crash left behind as part of the split (train.jsonl.tmp is "train").
      this.tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
      this.out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16);
      this.sha = MessageDigest.getInstance("SHA-256");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + target + ": " + FileProblems.describe(e), e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * {@code line} as this file would write it ({@link AsWritten}): scanned, its training content desensitized by
   * the node's rules when the scan finds something, or left out with a reason. Writes nothing: an export
   * deduplicates what is written, after this (review t170: two lines differing only in PII are one after it).
   */
  AsWritten check(String line) {
    if (line.indexOf('\n') >= 0) throw new IllegalArgumentException("a JSON line contains a newline");
    return AsWritten.of(scanner, rules, line);
  }

  /** Writes a line {@link #check} let through. */
  void write(AsWritten checked, List<String> forSessions) {
    if (!checked.written()) {
      throw new IllegalArgumentException("a line left out (" + checked.leftOut() + ") is not written");
    }
    byte[] bytes = (checked.line() + "\n").getBytes(StandardCharsets.UTF_8);
    try {
      out.write(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException("writing " + tmp + " failed: " + e.getMessage(), e);
    }
    sha.update(bytes);
    for (String rule : checked.findings()) findings.merge(rule, 1, Integer::sum);
    if (checked.desensitized()) desensitized++;
    sessionIds.addAll(forSessions);
    count++;
  }

  /** {@link #check}, then {@link #write(AsWritten, List)}; the reason when the line is left out, else empty. */
  java.util.Optional<String> write(String line, List<String> forSessions) {
    AsWritten checked = check(line);
    if (!checked.written()) return java.util.Optional.of(checked.leftOut());
    write(checked, forSessions);
    return java.util.Optional.empty();
  }

  /**
   * Lines written with their training content desensitized by the node's rules (stored raw by an earlier
   * build's rules); a line left out or dropped as a duplicate is not counted.
   */
  int desensitized() {
    return desensitized;
  }

  /** Lines written so far. */
  int count() {
    return count;
  }

  /** Closes and moves the file into place; returns (path, count, sha256, ids, findings). */
  Written commit() {
    return commit(true);
  }

  /**
   * Closes the file and, when {@code keepWithPii} or the scan found nothing, moves it into place;
   * otherwise deletes it (and an older file of that name), so a file with PII is never left behind.
   */
  Written commit(boolean keepWithPii) {
    try {
      out.close();
      if (!keepWithPii && !findings.isEmpty()) {
        Files.deleteIfExists(tmp);
        Files.deleteIfExists(target);
      } else {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      }
      committed = true;
    } catch (IOException e) {
      throw new UncheckedIOException("writing " + target + " failed: " + FileProblems.describe(e), e);
    }
    List<String> pii = new ArrayList<>();
    findings.forEach((rule, n) -> pii.add(rule + ": " + n + (n == 1 ? " line" : " lines")));
    return new Written(target, count, HexFormat.of().formatHex(sha.digest()), List.copyOf(sessionIds), pii);
  }

  @Override
  public void close() {
    if (committed) return;
    try {
      out.close();
      Files.deleteIfExists(tmp);
    } catch (IOException ignored) {
      // best effort: a failed export leaves no partial file behind
    }
  }

  record Written(Path path, int count, String sha256, List<String> sessionIds, List<String> piiFindings) {}
}
