package io.otl.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Where the seconds of one R4 kill go: phases read from the node logs (Pekko cluster, split-brain
 * resolver, sharding and Kafka consumer lines, enabled for the R4 nodes by r4-node-logback.xml) and
 * from the harness, each as seconds from the kill. A phase whose line is absent is null: a phase that
 * did not happen (e.g. the coordinator did not live on the dead node) is not a zero.
 */
final class R4Timeline {
  private R4Timeline() {}

  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss,SSS");

  record Line(Instant at, String text) {}

  /** One node log's lines at or after {@code from}, with their timestamps (continuation lines dropped). */
  static List<Line> linesSince(Path log, Instant from) {
    List<Line> out = new ArrayList<>();
    try (var lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
      lines.forEach(l -> {
        if (l.length() < 23 || !Character.isDigit(l.charAt(0))) return;
        try {
          Instant at = LocalDateTime.parse(l.substring(0, 23), TS).atZone(ZoneId.systemDefault()).toInstant();
          if (!at.isBefore(from)) out.add(new Line(at, l));
        } catch (RuntimeException e) {
          // not a log line of ours (e.g. a JVM warning)
        }
      });
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /**
   * The phases of one kill. {@code survivors} and {@code victim}: the nodes' log lines since the kill;
   * {@code victimAddress}: "127.0.0.1:port" of the killed node's cluster address; {@code served} and
   * {@code kafkaResumed}: the harness's seconds (the slowest session's first 200, the committed offsets
   * past the ends at the kill).
   */
  static Map<String, Object> of(Instant kill, List<Line> survivors, List<Line> victim, String victimAddress,
      double served, double kafkaResumed) {
    Instant servedAt = kill.plusNanos((long) (served * 1e9));
    Instant resumedAt = kill.plusNanos((long) (kafkaResumed * 1e9));
    List<Line> all = new ArrayList<>(survivors);
    all.addAll(victim);
    String addr = "@" + victimAddress + "]";
    String addrM = "@" + victimAddress + ",";
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("unreachable", first(kill, survivors, l -> l.contains("Marking node as UNREACHABLE") && l.contains(addrM)));
    t.put("sbrDowningDecision", first(kill, survivors, l -> l.contains("SBR took decision") && l.contains(addr)));
    t.put("leaderRemoving", first(kill, survivors, l -> l.contains("Leader is removing unreachable node") && l.contains(addr)));
    t.put("memberRemoved", first(kill, survivors, l -> l.contains("Member removed [") && l.contains(addr)));
    t.put("sessionCoordinatorActive", first(kill, survivors,
        l -> l.contains("AgentSession: ShardCoordinator was moved to the active state")));
    // Sharding's own debug lines (r4-node-logback.xml): the last shard placed, and the last shard
    // started with its remembered entities, before the slowest session answered.
    t.put("lastShardAllocated", last(kill, survivors, servedAt,
        l -> l.contains("AgentSession: Shard [") && l.contains("allocated at")));
    // Placements the new coordinator sent to the restarted node (it rejoins during them): its sessions
    // wait for the rest of its start-up.
    t.put("placementsOnRestartedNode", count(survivors, servedAt, l -> l.contains("AgentSession: Shard [")
        && l.contains("allocated at") && l.contains("@" + victimAddress + "/")));
    t.put("lastShardInitialized", last(kill, survivors, servedAt, l -> l.contains("AgentSession: Shard initialized")));
    t.put("rememberStoreTimeouts", count(survivors, servedAt, l -> l.contains("Failed to load initial entity ids")
        || l.contains("Remember entity store did not respond")));
    t.put("slowestSessionServed", served);
    t.put("victimNodeUp", first(kill, victim, l -> l.contains("training node up")));
    t.put("victimWelcomed", first(kill, victim, l -> l.contains("Welcome from")));
    t.put("victimConsumerStarted", first(kill, victim, l -> l.contains("Kafka ingestion of topic")));
    t.put("groupRejoinFirst", first(kill, all, l -> l.contains("(Re-)joining group")));
    t.put("partitionsAssignedLast", last(kill, all, resumedAt, l -> l.contains("Notifying assignor about the new Assignment")));
    t.put("ingestRestarts", count(all, resumedAt, l -> l.contains("Kafka ingestion restarts")));
    t.put("kafkaCommittedPastEnd", kafkaResumed);
    return t;
  }

  private static Double first(Instant kill, List<Line> lines, Predicate<String> p) {
    return lines.stream().filter(l -> p.test(l.text())).map(Line::at).min(Instant::compareTo)
        .map(at -> seconds(kill, at)).orElse(null);
  }

  private static Double last(Instant kill, List<Line> lines, Instant until, Predicate<String> p) {
    return lines.stream().filter(l -> !l.at().isAfter(until) && p.test(l.text())).map(Line::at)
        .max(Instant::compareTo).map(at -> seconds(kill, at)).orElse(null);
  }

  private static long count(List<Line> lines, Instant until, Predicate<String> p) {
    return lines.stream().filter(l -> !l.at().isAfter(until) && p.test(l.text())).count();
  }

  private static double seconds(Instant kill, Instant at) {
    return Math.round((at.toEpochMilli() - kill.toEpochMilli()) / 10.0) / 100.0;
  }

  /** One line per kill for the console: phase=seconds, nulls left out. */
  static String format(Map<String, Object> t) {
    StringBuilder b = new StringBuilder();
    t.forEach((k, v) -> {
      if (v != null) b.append(b.isEmpty() ? "" : ", ").append(k).append(' ').append(v);
    });
    return b.toString();
  }
}
