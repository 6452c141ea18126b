package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class RoutingTableTest {

  private static final int SESSIONS = 100_000;

  private static RoutingTable table(double ratio) {
    return new RoutingTable("v1", "http://stable", "v2", "http://candidate", ratio);
  }

  @Test
  void canaryShareOverOneHundredThousandSessionsIsWithinHalfAPointOfTheRatio() {
    for (double ratio : new double[] {0.05, 0.20, 0.50}) {
      RoutingTable t = table(ratio);
      int candidate = 0;
      for (int i = 0; i < SESSIONS; i++) {
        if (t.route("session-" + i).orElseThrow().version().equals("v2")) {
          candidate++;
        }
      }
      double share = (double) candidate / SESSIONS;
      assertEquals(ratio, share, 0.005, "ratio " + ratio + " gave share " + share);
    }
  }

  @Test
  void aSessionOnlyEverMovesFromStableToCandidateAsTheRatioGrows() {
    double[] ratios = {0.05, 0.20, 0.50, 1.0};
    for (int i = 0; i < SESSIONS; i++) {
      String id = "sess:" + i;
      boolean onCandidate = false;
      for (double r : ratios) {
        boolean now = table(r).route(id).orElseThrow().version().equals("v2");
        assertTrue(now || !onCandidate, id + " moved back to stable at ratio " + r);
        onCandidate = now;
      }
      assertTrue(onCandidate, id + " not on candidate at 100 %");
      // Deterministic: the same answer every time.
      assertEquals(table(0.2).route(id), table(0.2).route(id));
    }
  }

  @Test
  void withoutAnyVersionThereIsNoRoute() {
    assertEquals(Optional.empty(), RoutingTable.EMPTY.route("s1"));
    assertEquals("v1", new RoutingTable("v1", "e1", null, null, 0).route("s1").orElseThrow().version());
  }

  @Test
  void bucketsAreUniformInTheUnitInterval() {
    for (int i = 0; i < 1000; i++) {
      double b = RoutingTable.bucket("x" + i);
      assertTrue(b >= 0 && b < 1);
    }
  }
}
