package io.otl.node;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.persistence.AbstractPersistentActor;
import org.apache.pekko.persistence.RecoveryCompleted;
import scala.Option;

/**
 * Recovers one persistence id that is never written, once, when the node has joined: the journal and
 * snapshot plugins are created, their first queries prepared and their code paths loaded before the
 * node takes part in a fail-over (issue #22, docs/operations.md "Where the seconds go").
 *
 * <p>Why: Pekko creates the persistence plugins on first use. A node restarted after a crash gets no
 * shards for a while ({@link SettledMembersFirst}), so that first use was its next fail-over as a
 * survivor: in R4 (load 18) every remembered shard placed on such a node waited up to 2.7-3 s for its
 * entity ids, all finishing at one instant 2.2 s after the plugins were created, where a node that had
 * served since its start took 0.2-0.3 s on average.
 *
 * <p>Writes nothing: the actor only recovers, and stops when recovery ends.
 */
final class JournalWarmUp extends AbstractPersistentActor {
  /** Never written; a recovery of it reads an empty snapshot and an empty event range. */
  static final String PERSISTENCE_ID = "otl-journal-warm-up";

  private final CompletableFuture<Duration> done;
  private final long startedNanos = System.nanoTime();

  private JournalWarmUp(CompletableFuture<Duration> done) {
    this.done = done;
  }

  /**
   * Starts the warm-up once this node is Up (joining is the start-up's most fragile moment: a node
   * starved of CPU then misses heartbeats and is downed, so the warm-up does not compete with it; a
   * restarted node gets no shards for a while after Up, time enough). Completes with how long the
   * recovery took, or with the journal's failure.
   */
  static CompletionStage<Duration> startWhenUp(ActorSystem<?> system) {
    CompletableFuture<Duration> done = new CompletableFuture<>();
    ExtendedActorSystem classic = (ExtendedActorSystem) system.classicSystem();
    // A system actor: the node's typed guardian accepts no top-level actors from outside.
    Cluster.get(classic).registerOnMemberUp(() -> classic.systemActorOf(
        Props.create(JournalWarmUp.class, () -> new JournalWarmUp(done)), "otl-journal-warm-up"));
    return done;
  }

  @Override
  public String persistenceId() {
    return PERSISTENCE_ID;
  }

  @Override
  public Receive createReceiveRecover() {
    return receiveBuilder()
        .match(RecoveryCompleted.class, r -> {
          done.complete(Duration.ofNanos(System.nanoTime() - startedNanos));
          getContext().stop(getSelf());
        })
        .matchAny(event -> { }) // nothing is ever written under this id
        .build();
  }

  @Override
  public Receive createReceive() {
    return receiveBuilder().build();
  }

  @Override
  public void onRecoveryFailure(Throwable cause, Option<Object> event) {
    done.completeExceptionally(cause);
  }

  @Override
  public void postStop() {
    done.completeExceptionally(new IllegalStateException("journal warm-up stopped before its recovery ended"));
  }
}
