package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Issue #14.5: agent labels on /metrics are the top N by volume plus one "other". */
class AgentLabelsTest {
  @Test
  void theLargestAgentsKeepTheirLabelAndTheRestAreSummedAsOther() {
    Map<String, Double> pool = new HashMap<>();
    for (int i = 0; i < 10_000; i++) pool.put("agent-" + i, (double) i);
    Set<String> top = AgentLabels.top(pool, 3);
    assertEquals(Set.of("agent-9999", "agent-9998", "agent-9997"), top);
    Map<String, Double> series = AgentLabels.labelled(pool, top, Double::sum);
    assertEquals(4, series.size(), series.keySet().toString());
    double rest = 0;
    for (int i = 0; i < 9997; i++) rest += i;
    assertEquals(rest, series.get("agent=\"other\""));
    assertEquals(9999.0, series.get("agent=\"agent-9999\""));
    Map<String, Double> jobs = AgentLabels.labelled(pool, top, Double::sum, "state", "RUNNING");
    assertEquals(rest, jobs.get("agent=\"other\",state=\"RUNNING\""));
  }

  @Test
  void fewerAgentsThanTheLimitHaveNoOther() {
    Map<String, Double> pool = Map.of("a", 1.0, "b", 2.0);
    assertEquals(Set.of("agent=\"a\"", "agent=\"b\""),
        AgentLabels.labelled(pool, AgentLabels.top(pool, 50), Double::sum).keySet());
  }
}
