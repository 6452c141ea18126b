package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentRequested;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelState.State;
import java.time.Instant;
import java.util.List;
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
  void aRunningSessionKeepsItsVersionAsTheRatioGrowsUntilThatVersionStopsServing() {
    double[] ratios = {0.05, 0.20, 0.50};
    int startedOnStableInTheGrowingRange = 0;
    for (int i = 0; i < 2_000; i++) {
      String id = "pinned:" + i;
      String first = table(0.05).route(id).orElseThrow().version();
      for (double r : ratios) {
        assertEquals(first, table(r).route(id, first).orElseThrow().version(), id + " moved at ratio " + r);
      }
      if (first.equals("v1") && table(0.50).route(id).orElseThrow().version().equals("v2")) {
        startedOnStableInTheGrowingRange++;
      }
      // A rollback (no candidate) sends a candidate's session to the stable; a promotion (v2 stable,
      // v1 gone) sends the old stable's to the new one.
      assertEquals("v1", new RoutingTable("v1", "e1", null, null, 0).route(id, first).orElseThrow().version());
      assertEquals("v2", new RoutingTable("v2", "e2", null, null, 0).route(id, first).orElseThrow().version());
    }
    assertTrue(startedOnStableInTheGrowingRange > 500, "the bucket alone would have moved these sessions: "
        + startedOnStableInTheGrowingRange);
    // A version the session never had, or none: the bucket decides, as for a new session.
    for (int i = 0; i < 200; i++) {
      String id = "other:" + i;
      assertEquals(table(0.2).route(id), table(0.2).route(id, "v9"));
      assertEquals(table(0.2).route(id), table(0.2).route(id, null));
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

  // ---- the table of an entity state (design §3.3: nothing routes to an unconfirmed deployment) ----

  private static final Instant T0 = ModelJournal.T0;
  private static final long HASH_42 = 0x954c08ad32d6adfdL;

  @Test
  void anIdleAgentRoutesEverySessionToItsStableAtItsRegisteredEndpoint() {
    assertEquals(RoutingTable.EMPTY, RoutingTable.of(ModelVersion.initialState()));
    State s = ModelJournal.replay(ModelJournal.concat(ModelJournal.stable("v1", T0), ModelJournal.ready("v2", T0)));
    assertEquals(new RoutingTable("v1", "http://v1:8000", null, null, 0), RoutingTable.of(s));
  }

  @Test
  void aCandidateInRolloutGetsItsRatioAndItsConfirmedDeploymentsEndpoint() {
    State s = ModelJournal.replay(ModelJournal.concat(ModelJournal.stable("v1", T0), ModelJournal.ready("v2", T0),
        List.of(new DeploymentRequested("v2", "vllm-lora", "http://vllm:8000/v1", "a1-v2-x", "auto-deploy", T0),
            new DeploymentConfirmed("v2", "http://vllm:8000/v1", "a1-v2-x", T0),
            new RolloutStarted("v2", "v1", List.of(0.05, 0.2, 0.5, 1.0), "auto-deploy", T0))));
    assertEquals(new RoutingTable("v1", "http://v1:8000", "v2", "http://vllm:8000/v1", 0.05), RoutingTable.of(s));
  }

  @Test
  void anUnconfirmedDeploymentDoesNotReplaceTheRegisteredEndpoint() {
    State s = ModelJournal.replay(ModelJournal.concat(ModelJournal.stable("v1", T0), List.of(
        new DeploymentRequested("v1", "vllm-lora", "http://vllm:8000/v1", "a1-v1-x", "retry", T0))));
    assertEquals("http://v1:8000", RoutingTable.of(s).stableEndpoint());
  }

  @Test
  void aCandidateWithoutAStableTakesEverySessionAndARatioOfZeroTakesNone() {
    RoutingTable noStable = new RoutingTable(null, null, "v2", "e2", 0.05);
    for (int i = 0; i < 100; i++) {
      assertEquals("v2", noStable.route("s" + i).orElseThrow().version());
    }
    RoutingTable zero = new RoutingTable("v1", "e1", "v2", "e2", 0);
    for (int i = 0; i < 100; i++) {
      assertEquals(new RoutingTable.Target("v1", "e1"), zero.route("s" + i).orElseThrow());
    }
    assertEquals(Optional.empty(), new RoutingTable(null, null, "v2", "e2", 0).route("s1"));
  }

  @Test
  void theBucketIsTheFirst53BitsOfTheSha256OfThePrefixedSessionId() {
    // SHA-256("route:session-42") starts with these 8 bytes (computed outside the JVM, sha256sum).
    assertEquals(HASH_42, RoutingTable.hash64("route:", "session-42"));
    // Its top 53 bits over 2^53: 0x954c08ad32d6adfd >> 11 = 5252921459890901, / 2^53.
    assertEquals(0.5831914351318469, RoutingTable.bucket("session-42"));
    // Below the candidate's ratio means below: at a ratio equal to its bucket the session stays on stable.
    assertEquals("v1", table(0.5831914351318469).route("session-42").orElseThrow().version());
    assertEquals("v2", table(Math.nextUp(0.5831914351318469)).route("session-42").orElseThrow().version());
  }
}
