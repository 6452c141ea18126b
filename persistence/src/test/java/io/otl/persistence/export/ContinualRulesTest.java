package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The pure rules of continual training: held-out split, replay sample, deduplication, settings. */
class ContinualRulesTest {
  private static final Instant NOW = Instant.parse("2026-11-30T00:00:00Z");
  private static final Duration HALF_LIFE = Duration.ofDays(14);

  @Test
  void heldOutDependsOnTheSessionIdOnlyAndHonoursTheFraction() {
    int held = 0;
    for (int i = 0; i < 20_000; i++) {
      boolean h = HeldOut.isHeldOut("s-" + i, 0.1);
      assertEquals(h, HeldOut.isHeldOut("s-" + i, 0.1), "stable for the same id");
      if (h) {
        held++;
        assertTrue(HeldOut.isHeldOut("s-" + i, 0.3), "a larger fraction keeps every held-out session");
      }
    }
    assertTrue(held > 1_800 && held < 2_200, "about 10 % held out, was " + held);
    assertFalse(HeldOut.isHeldOut("s-1", 0.0));
  }

  @Test
  void replayCountMakesReplayTheConfiguredShareOfTheDataset() {
    assertEquals(2, ReplaySampler.count(8, 0.2, 100)); // 2 of 10 = 20 %
    assertEquals(25, ReplaySampler.count(100, 0.2, 100));
    assertEquals(3, ReplaySampler.count(100, 0.2, 3), "never more than there is");
    assertEquals(0, ReplaySampler.count(8, 0.0, 100));
    assertEquals(0, ReplaySampler.count(0, 0.2, 100), "nothing new: no job to pad");
    assertEquals(1, ReplaySampler.count(1, 0.2, 5), "at least one when any replay is asked for");
  }

  @Test
  void weightsHalveEveryHalfLife() {
    assertEquals(1.0, ReplaySampler.weight(Duration.ZERO, HALF_LIFE), 1e-12);
    assertEquals(0.5, ReplaySampler.weight(HALF_LIFE, HALF_LIFE), 1e-12);
    assertEquals(0.25, ReplaySampler.weight(HALF_LIFE.multipliedBy(2), HALF_LIFE), 1e-12);
  }

  @Test
  void sampleIsDeterministicBySeedWhateverTheCandidateOrder() {
    List<ReplaySampler.Candidate> candidates = new ArrayList<>();
    for (int i = 0; i < 200; i++) candidates.add(new ReplaySampler.Candidate("old-" + i, NOW.minus(Duration.ofHours(i * 7L))));
    List<ReplaySampler.Candidate> a = ReplaySampler.sample(candidates, 20, NOW, HALF_LIFE, "job-2-agent");
    List<ReplaySampler.Candidate> shuffled = new ArrayList<>(candidates);
    Collections.shuffle(shuffled, new Random(7));
    assertEquals(a, ReplaySampler.sample(shuffled, 20, NOW, HALF_LIFE, "job-2-agent"));
    assertEquals(20, a.size());
    assertEquals(20, a.stream().map(ReplaySampler.Candidate::sessionId).distinct().count(), "without replacement");
    assertFalse(a.equals(ReplaySampler.sample(candidates, 20, NOW, HALF_LIFE, "job-3-agent")), "another job, another sample");
  }

  @Test
  void newerTrajectoriesAreReplayedMoreOftenInProportionToTheirWeight() {
    // Two candidates, one fresh (weight 1) and one two half-lives old (weight 0.25): with k = 1 the
    // fresh one wins with probability 1 / 1.25 = 0.8 over the seeds (Efraimidis–Spirakis).
    List<ReplaySampler.Candidate> two = List.of(
        new ReplaySampler.Candidate("fresh", NOW), new ReplaySampler.Candidate("old", NOW.minus(HALF_LIFE.multipliedBy(2))));
    int fresh = 0;
    int runs = 20_000;
    for (int i = 0; i < runs; i++) {
      if (ReplaySampler.sample(two, 1, NOW, HALF_LIFE, "job-" + i).get(0).sessionId().equals("fresh")) fresh++;
    }
    double share = fresh / (double) runs;
    assertTrue(share > 0.78 && share < 0.82, "fresh share " + share);
  }

  @Test
  void dedupDropsExactThenNearDuplicatesButNotIdsOrMetadata() {
    Dedup d = new Dedup();
    String a = "{\"messages\":[{\"role\":\"user\",\"content\":\"Book a flight\"},{\"role\":\"assistant\",\"content\":\"Booked.\"}]}";
    String sameOtherIds = "{\"messages\":[{\"role\":\"user\",\"content\":\"Book a flight\"},{\"role\":\"assistant\",\"content\":\"Booked.\",\"tool_calls\":[]}],\"metadata\":{\"sessionId\":\"x\"}}";
    String near = "{\"messages\":[{\"role\":\"user\",\"content\":\"book a  FLIGHT!\"},{\"role\":\"assistant\",\"content\":\"Booked\"}]}";
    String other = "{\"messages\":[{\"role\":\"user\",\"content\":\"Book a hotel\"},{\"role\":\"assistant\",\"content\":\"Booked.\"}]}";
    assertEquals(Optional.empty(), d.check(a));
    assertEquals(Optional.of(Dedup.EXACT), d.check(a));
    assertEquals(Optional.of(Dedup.EXACT), d.check(sameOtherIds.replace(",\"tool_calls\":[]", "")));
    assertEquals(Optional.of(Dedup.NEAR), d.check(near));
    assertEquals(Optional.empty(), d.check(other));
  }

  @Test
  void settingsHaveDefaultsAndRefuseBadValuesNamingTheKey() {
    ContinualSettings s = ContinualSettings.fromConfig(ConfigFactory.empty());
    assertEquals(ContinualSettings.DEFAULTS, s);
    assertEquals(ContinualSettings.StartFrom.STABLE, s.startFrom());
    ContinualSettings base = ContinualSettings.fromConfig(ConfigFactory.parseString(
        "start-from = base, replay-fraction = 0, data-half-life = 3d, eval-fraction = 0.25"));
    assertEquals(ContinualSettings.StartFrom.BASE, base.startFrom());
    assertEquals(Duration.ofDays(3), base.dataHalfLife());
    for (String bad : List.of("start-from = newest", "replay-fraction = 1", "eval-fraction = -0.1",
        "data-half-life = 0s", "data-half-life = soon", "replay-fraction = lots")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ContinualSettings.fromConfig(ConfigFactory.parseString(bad)));
      assertTrue(e.getMessage().startsWith(bad.substring(0, bad.indexOf(' '))), e.getMessage());
    }
  }
}
