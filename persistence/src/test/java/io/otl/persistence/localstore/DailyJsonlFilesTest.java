package io.otl.persistence.localstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** One line per session and day file, across a restart (a new instance) and a torn last line. */
class DailyJsonlFilesTest {
  private static final LocalDate DAY = LocalDate.of(2026, 11, 30);

  private static String line(String sessionId) {
    return "{\"sessionId\":\"" + sessionId + "\",\"messages\":[]}";
  }

  @Test
  void writesOncePerSessionAndRollsByDay() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "daily-jsonl-" + UUID.randomUUID()));
    DailyJsonlFiles files = new DailyJsonlFiles(dir);
    assertTrue(files.append(DAY, "s1", line("s1")));
    assertFalse(files.append(DAY, "s1", line("s1")), "a redelivery is not written again");
    assertTrue(files.append(DAY.plusDays(1), "s2", line("s2")));
    assertEquals(List.of(line("s1")), Files.readAllLines(dir.resolve("trajectories-2026-11-30.jsonl")));
    assertEquals(List.of(line("s2")), Files.readAllLines(dir.resolve("trajectories-2026-12-01.jsonl")));

    // A restart: a new instance learns what the file holds.
    DailyJsonlFiles restarted = new DailyJsonlFiles(dir);
    assertFalse(restarted.append(DAY, "s1", line("s1")));
    assertTrue(restarted.append(DAY, "s3", line("s3")));
    assertEquals(List.of(line("s1"), line("s3")), Files.readAllLines(dir.resolve("trajectories-2026-11-30.jsonl")));
  }

  @Test
  void aLineTornByACrashIsCutOffAndWrittenWholeOnRedelivery() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "daily-jsonl-" + UUID.randomUUID()));
    Path file = dir.resolve("trajectories-2026-11-30.jsonl");
    Files.writeString(file, line("s1") + "\n" + "{\"sessionId\":\"s2\",\"mess", StandardCharsets.UTF_8);
    DailyJsonlFiles files = new DailyJsonlFiles(dir);
    assertFalse(files.append(DAY, "s1", line("s1")));
    assertTrue(files.append(DAY, "s2", line("s2")));
    assertEquals(List.of(line("s1"), line("s2")), Files.readAllLines(file));
  }
}
