package io.otl.persistence.readside;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.persistence.readside.FeedOffsetStore.OffsetAdvanced;
import io.otl.persistence.readside.FeedOffsetStore.State;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FeedOffsetStoreTest {
  private static final Config CONFIG = ConfigFactory.parseString(
          "pekko.persistence.testkit.events.serialize = on\n"
              + "pekko.persistence.testkit.snapshots.serialize = on\n")
      .withFallback(EventSourcedBehaviorTestKit.config())
      .withFallback(ConfigFactory.load());
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration WINDOW = Duration.ofMinutes(5);

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create("FeedOffsetStoreTest", CONFIG);
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void storedOffsetAndRingSurviveARestart() {
    var kit = EventSourcedBehaviorTestKit.<FeedOffsetStore.Command, FeedOffsetStore.Event, State>create(
        testKit.system(), FeedOffsetStore.create("feed-" + UUID.randomUUID(), WINDOW),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    for (int i = 1; i <= 250; i++) {
      long ordering = i * 10L;
      Instant at = T0.plusSeconds(2L * i);
      var r = kit.<Done>runCommand(reply -> new FeedOffsetStore.Advance(ordering, at, reply));
      assertEquals(Done.getInstance(), r.reply());
    }
    State before = kit.getState();
    assertEquals(2500, before.ordering());
    kit.restart();
    assertEquals(before, kit.getState());
    // An older offset (a late acknowledgement) never moves the offset back and persists nothing.
    var back = kit.<Done>runCommand(reply -> new FeedOffsetStore.Advance(5, T0.plusSeconds(600), reply));
    assertTrue(back.hasNoEvents());
    assertEquals(2500, kit.getState().ordering());
  }

  @Test
  void offsetAtAnswersWhereTheFeedWasAWindowAgo() {
    State s = State.empty();
    // every 2 s, 10 orderings further, for 20 minutes
    for (int i = 1; i <= 600; i++) s = s.apply(new OffsetAdvanced(i * 10L, T0.plusSeconds(2L * i)), WINDOW);
    Instant now = T0.plusSeconds(1200);
    long lowWater = s.offsetAt(now.minus(WINDOW));
    // at T0+900s the feed had reached ordering 4500; the ring's spacing is 5 s, so at most 3 points older
    assertTrue(lowWater <= 4500 && lowWater >= 4470, "low water " + lowWater);
    // the ring stays small: ~window/spacing points plus the one older than the window
    assertTrue(s.ring().size() <= FeedOffsetStore.RING_RESOLUTION + 2, "ring size " + s.ring().size());
    // a cutoff before every point: everything is rescanned
    State young = State.empty().apply(new OffsetAdvanced(42, T0), WINDOW);
    assertEquals(0, young.offsetAt(T0.minusSeconds(1)));
    assertEquals(42, young.offsetAt(T0));
    // long after the last write (node down for an hour), the low water is the last stored offset
    assertEquals(6000, s.offsetAt(now.plus(Duration.ofHours(1))));
  }
}
