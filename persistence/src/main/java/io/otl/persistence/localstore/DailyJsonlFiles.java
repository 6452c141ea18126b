package io.otl.persistence.localstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDate;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code <dir>/trajectories-<yyyy-MM-dd>.jsonl}, one JSON object per line, at most one line per
 * session id and file.
 *
 * <p>Writes are appended and forced to disk before {@link #append} returns, so a line the feed
 * acknowledged survives a crash. A crash between the write and the feed's stored offset makes the
 * feed deliver the trajectory again: the session ids already in the day's file (read once per file,
 * then kept for the few most recent days) turn that into a no-op. A line cut short by a crash has
 * no newline; it is cut off when the file is first opened, and its trajectory is redelivered by the
 * feed and written whole.
 */
final class DailyJsonlFiles {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int DAYS_REMEMBERED = 4;

  private final Path dir;
  private final Map<LocalDate, Set<String>> written = new LinkedHashMap<>(8, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<LocalDate, Set<String>> eldest) {
      return size() > DAYS_REMEMBERED;
    }
  };

  DailyJsonlFiles(Path dir) {
    this.dir = dir;
  }

  static String fileName(LocalDate day) {
    return "trajectories-" + day + ".jsonl";
  }

  /** Appends {@code line} (one JSON object, no newline) unless the day's file has the session; true if written. */
  synchronized boolean append(LocalDate day, String sessionId, String line) {
    Path file = dir.resolve(fileName(day));
    try {
      Set<String> ids = written.get(day);
      if (ids == null) {
        ids = load(file);
        written.put(day, ids);
      }
      if (ids.contains(sessionId)) return false;
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.APPEND)) {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) ch.write(bytes);
        ch.force(false);
      }
      ids.add(sessionId);
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  /** The session ids of a day's file, after cutting off a torn last line. */
  private static Set<String> load(Path file) throws IOException {
    Set<String> ids = new HashSet<>();
    if (!Files.exists(file)) return ids;
    byte[] content = Files.readAllBytes(file);
    int end = content.length;
    while (end > 0 && content[end - 1] != '\n') end--;
    if (end < content.length) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ch.truncate(end);
        ch.force(false);
      }
    }
    for (String line : new String(content, 0, end, StandardCharsets.UTF_8).split("\n")) {
      if (line.isBlank()) continue;
      JsonNode node = JSON.readTree(line);
      if (node != null && node.hasNonNull("sessionId")) ids.add(node.get("sessionId").asText());
    }
    return ids;
  }
}
