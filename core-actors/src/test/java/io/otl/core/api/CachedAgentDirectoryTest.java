package io.otl.core.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The metrics sampler listed the agents (three journal scans) every sample; through this cache it lists
 * them at most once per refresh window, and a journal failure keeps the last good list.
 */
class CachedAgentDirectoryTest {
  private static final Duration REFRESH = Duration.ofSeconds(60);

  /** A journal held in memory that counts its listings and can be made to fail them. */
  private static final class CountingDirectory implements AgentDirectory {
    final List<String> coordinators = new ArrayList<>();
    final List<String> models = new ArrayList<>();
    final AtomicInteger coordinatorListings = new AtomicInteger();
    final AtomicInteger modelListings = new AtomicInteger();
    volatile boolean failing;

    @Override
    public CompletionStage<List<String>> agentIds() {
      coordinatorListings.incrementAndGet();
      return failing ? CompletableFuture.failedFuture(new IllegalStateException("journal down"))
          : CompletableFuture.completedFuture(List.copyOf(coordinators));
    }

    @Override
    public CompletionStage<List<String>> modelAgentIds() {
      modelListings.incrementAndGet();
      return failing ? CompletableFuture.failedFuture(new IllegalStateException("journal down"))
          : CompletableFuture.completedFuture(List.copyOf(models));
    }

    @Override
    public CompletionStage<Boolean> exists(String persistenceId) {
      return CompletableFuture.completedFuture(false);
    }
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get();
  }

  /** What the sampler asks each sample: the coordinators, then all known agents. */
  private static List<String> sample(AgentDirectory d) throws Exception {
    get(d.agentIds());
    return get(d.knownAgentIds());
  }

  @Test
  void oneListingPerWindowHoweverManySamplesAndANewAgentAfterTheWindow() throws Exception {
    CountingDirectory journal = new CountingDirectory();
    journal.coordinators.add("a");
    journal.models.add("m");
    AtomicLong now = new AtomicLong(1_000);
    CachedAgentDirectory cached = new CachedAgentDirectory(journal, REFRESH, now::get);

    assertEquals(List.of("a", "m"), sample(cached), "the first sample lists at once");
    assertEquals(1, journal.coordinatorListings.get());
    assertEquals(1, journal.modelListings.get());

    journal.coordinators.add("b");  // created after the listing
    for (int i = 0; i < 5; i++) {
      now.addAndGet(Duration.ofSeconds(10).toNanos());  // five more samples, 10 s apart: within the window
      assertEquals(List.of("a", "m"), sample(cached));
    }
    assertEquals(1, journal.coordinatorListings.get(), "listed once in the window");
    assertEquals(1, journal.modelListings.get());

    now.addAndGet(Duration.ofSeconds(10).toNanos());  // the window over (60 s): listed again, the new agent shows
    assertEquals(List.of("a", "b", "m"), sample(cached));
    assertEquals(List.of("a", "b"), get(cached.agentIds()));
    assertEquals(2, journal.coordinatorListings.get());
    assertEquals(2, journal.modelListings.get());
  }

  @Test
  void aFailedRefreshKeepsTheLastListAndTheNextWindowListsAgain() throws Exception {
    CountingDirectory journal = new CountingDirectory();
    journal.coordinators.add("a");
    AtomicLong now = new AtomicLong(0);
    CachedAgentDirectory cached = new CachedAgentDirectory(journal, REFRESH, now::get);
    assertEquals(List.of("a"), sample(cached));

    journal.failing = true;
    journal.coordinators.add("b");
    now.addAndGet(REFRESH.toNanos());
    assertEquals(List.of("a"), get(cached.agentIds()), "the last good list");
    assertEquals(List.of("a"), sample(cached), "the failure is not retried every sample");
    assertEquals(2, journal.coordinatorListings.get());

    journal.failing = false;
    now.addAndGet(REFRESH.toNanos());
    assertEquals(List.of("a", "b"), sample(cached));
    assertEquals(3, journal.coordinatorListings.get());
  }

  @Test
  void aFailedFirstListingFailsAndTheNextCallListsAgain() throws Exception {
    CountingDirectory journal = new CountingDirectory();
    journal.coordinators.add("a");
    journal.failing = true;
    CachedAgentDirectory cached = new CachedAgentDirectory(journal, REFRESH, () -> 0L);
    ExecutionException e = assertThrows(ExecutionException.class, () -> get(cached.agentIds()));
    assertEquals("journal down", e.getCause().getMessage());

    journal.failing = false;
    assertEquals(List.of("a"), get(cached.agentIds()), "no list to keep: listed again at once");
    assertEquals(2, journal.coordinatorListings.get());
  }

  /** A young journal (no agent yet) is listed every call, so the first agent's series show at the next sample. */
  @Test
  void anEmptyListIsNotKeptSoTheFirstAgentShowsAtTheNextCall() throws Exception {
    CountingDirectory journal = new CountingDirectory();
    CachedAgentDirectory cached = new CachedAgentDirectory(journal, REFRESH, () -> 0L);
    assertEquals(List.of(), sample(cached));
    assertEquals(List.of(), sample(cached));
    assertEquals(4, journal.coordinatorListings.get(), "listed each call while empty");

    journal.coordinators.add("first");
    assertEquals(List.of("first"), sample(cached), "no window to wait for");
    int modelListings = journal.modelListings.get();
    journal.coordinators.add("second");
    journal.models.add("model-only");
    assertEquals(List.of("first"), sample(cached), "from then on, the window: for the still empty models too");
    assertEquals(5, journal.coordinatorListings.get());
    assertEquals(modelListings, journal.modelListings.get());
  }
}
