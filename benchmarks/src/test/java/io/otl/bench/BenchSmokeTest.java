package io.otl.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.DriverManager;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Every workload once at a tiny size, asserting that what was acknowledged is what was stored (and
 * that W5 recovers every entity whole). No time is asserted: benchmarks are run by hand (Bench).
 * PostgreSQL: OTL_BENCH_PG_URL, else the benchmark cluster on 5433 if it runs, else OTL_TEST_PG_URL
 * (default 127.0.0.1:5432/test); skipped loudly without one, failed when OTL_REQUIRE_PG is set.
 */
class BenchSmokeTest {

  @Test
  void everyWorkloadStoresWhatItAcknowledgesAtTinySize() throws Exception {
    String url = pgUrl();
    Args args = new Args(new String[] {
        "--pg-url", url, "--results-dir", "target/smoke-results",
        "--sessions", "20", "--events", "6", "--concurrency", "8",
        "--seconds", "1", "--warmup", "1", "--rates", "20", "--cpu-rate", "20",
        "--small-session", "50", "--large-session", "120", "--pool-size", "300", "--transitions", "10",
        "--active", "20", "--passivate-after", "1s", "--passivation-wait", "60"}, 0);
    Map<String, Result> byName = Bench.run("all", args).stream()
        .collect(Collectors.toMap(r -> r.workload, r -> r));
    assertEquals(List.of("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "baseline").stream().sorted().toList(),
        byName.keySet().stream().sorted().toList());
    for (String w : List.of("W1", "W2", "W3", "W6", "W7")) {
      assertEquals(Boolean.TRUE, byName.get(w).figures.get("countsCorrect"), w + ": " + byName.get(w).figures);
    }
    assertEquals(120L, ((Number) byName.get("W1").figures.get("eventsAccepted")).longValue());
    assertEquals(0L, ((Number) byName.get("W4").figures.get("non202Total")).longValue(), byName.get("W4").figures.toString());
    assertEquals(0L, ((Number) byName.get("W8").figures.get("non200Total")).longValue(), byName.get("W8").figures.toString());
    assertEquals(300 + io.otl.core.coordinator.TrainingCoordinator.SNAPSHOT_EVERY,
        ((Number) byName.get("W5").figures.get("coordinator.poolSize")).intValue());
    assertEquals(120, ((Number) byName.get("W5").figures.get("session120.eventsSeen")).intValue());
    assertTrue(((Number) byName.get("baseline").figures.get("baselineRowsPerSec")).doubleValue() > 0);
  }

  private static String pgUrl() {
    String explicit = System.getenv("OTL_BENCH_PG_URL");
    List<String> candidates = explicit != null && !explicit.isBlank() ? List.of(explicit)
        : List.of("jdbc:postgresql://127.0.0.1:5433/bench",
            System.getenv().getOrDefault("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test"));
    for (String url : candidates) {
      try (var c = DriverManager.getConnection(url, "postgres", "")) {
        if (c.isValid(2)) return url;
      } catch (Exception e) {
        // next
      }
    }
    String message = "no PostgreSQL for the benchmark smoke test at " + candidates;
    if (System.getenv("OTL_REQUIRE_PG") != null) throw new AssertionError(message + " and OTL_REQUIRE_PG is set");
    System.err.println("!!! SKIPPING benchmark smoke test: " + message);
    Assumptions.abort(message);
    return null;
  }
}
