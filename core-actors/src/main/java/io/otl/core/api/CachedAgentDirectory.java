package io.otl.core.api;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link AgentDirectory} whose listings are answered from the last one, refreshed at most every
 * {@code refresh}: for a caller that lists on a timer (the metrics sampler), not for one that must see
 * an agent created a moment ago (GET /v1/training asks the journal itself). A listing scans the
 * journal's key index on PostgreSQL (a LIKE prefix under a non-C collation cannot use the btree), a
 * cost that grows with every event ever stored; listing it every sample, on every node, paid it three
 * times every 10 s. Agents never leave the journal, so a cached list only lacks agents created since
 * the last listing. The first call lists at once; a failed refresh keeps the last good list; an empty
 * list is not kept until some agent is known.
 */
public final class CachedAgentDirectory implements AgentDirectory {
  private static final Logger log = LoggerFactory.getLogger(CachedAgentDirectory.class);

  private final AgentDirectory source;
  private final Listing coordinators;
  private final Listing models;
  /** Whether any listing has found an agent: until then a listing is not kept (see {@link Listing#get}). */
  private volatile boolean anyAgent;

  /** @param nanoTime a monotonic clock ({@code System::nanoTime}); tests pass their own */
  public CachedAgentDirectory(AgentDirectory source, Duration refresh, LongSupplier nanoTime) {
    this.source = source;
    this.coordinators = new Listing(source::agentIds, refresh.toNanos(), nanoTime);
    this.models = new Listing(source::modelAgentIds, refresh.toNanos(), nanoTime);
  }

  @Override
  public CompletionStage<List<String>> agentIds() {
    return coordinators.get();
  }

  @Override
  public CompletionStage<List<String>> modelAgentIds() {
    return models.get();
  }

  /** Not cached here: an exact lookup on the primary key, and the source already remembers positives. */
  @Override
  public CompletionStage<Boolean> exists(String persistenceId) {
    return source.exists(persistenceId);
  }

  /** One kind of listing: the answer of the current window, shared by every call within it. */
  private final class Listing {
    private final Supplier<CompletionStage<List<String>>> list;
    private final long refreshNanos;
    private final LongSupplier nanoTime;
    private CompletableFuture<List<String>> current;
    private long listedAt;
    private volatile List<String> lastGood;

    Listing(Supplier<CompletionStage<List<String>>> list, long refreshNanos, LongSupplier nanoTime) {
      this.list = list;
      this.refreshNanos = refreshNanos;
      this.nanoTime = nanoTime;
    }

    synchronized CompletionStage<List<String>> get() {
      long now = nanoTime.getAsLong();
      // While no listing has found an agent, the journal is listed on every call: a journal with no agent
      // yet is a young one, cheap to scan, and a first agent (a quickstart's) shows at the next sample, not
      // a window later. Once one agent is known, both listings keep their window (a deployment with
      // coordinators but no model versions would otherwise list the latter every sample for good).
      boolean noneYet = current != null && current.isDone() && !anyAgent;
      if (current != null && now - listedAt < refreshNanos && !noneYet) return current;
      listedAt = now;
      List<String> fallback = lastGood;
      CompletableFuture<List<String>> next = new CompletableFuture<>();
      current = next;
      CompletionStage<List<String>> listing;
      try {
        listing = list.get();
      } catch (RuntimeException e) {
        listing = CompletableFuture.failedFuture(e);
      }
      listing.whenComplete((ids, e) -> {
        if (e == null) {
          lastGood = ids;
          if (!ids.isEmpty()) anyAgent = true;
          next.complete(ids);
        } else if (fallback != null) {
          log.debug("listing agents failed, keeping the last list: {}", e.getMessage());
          next.complete(fallback);
        } else {
          // Nothing to fall back on: the next call lists again rather than repeating this failure
          // for a whole window.
          synchronized (this) {
            if (current == next) current = null;
          }
          next.completeExceptionally(e instanceof CompletionException ? e : new CompletionException(e));
        }
      });
      return next;
    }
  }
}
