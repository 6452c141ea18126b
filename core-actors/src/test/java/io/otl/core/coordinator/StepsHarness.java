package io.otl.core.coordinator;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.entity.Plan;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.Effect;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import org.apache.pekko.actor.typed.internal.ActorContextImpl;
import org.apache.pekko.actor.typed.internal.AdaptMessage;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The coordinator's command handlers ({@link JobSteps}, {@link ProxyLoop}, {@link ScheduleTrigger}, and
 * {@link TrainingCoordinator} itself through {@link Handled}) on Pekko's synchronous {@link
 * BehaviorTestKit} context, without an actor system or a journal:
 * a handler's plan is inspected, its after-effects run as the entity runs them once persisted,
 * the results its port calls pipe to the entity are read from the self inbox and its timers
 * from the recorded effects. The ports are the in-memory {@link Fakes}.
 */
final class StepsHarness {
  static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  final ManualClock clock = new ManualClock(NOW);
  final Fakes.Exporter exporter = new Fakes.Exporter();
  final Fakes.Backend backend = new Fakes.Backend();
  final Fakes.Online online = new Fakes.Online();
  final Fakes.Sink sink = new Fakes.Sink();
  final BehaviorTestKit<Command> kit;
  final CoordinatorRuntime rt;
  final ProxyLoop proxy;
  final JobSteps steps;
  /** The entity itself on the same context, with its own runtime and run-time policy resolver. */
  final TrainingCoordinator coordinator;
  /** How often a handler looked at the threshold trigger. */
  int thresholdLooks;

  /** {@code overrides} of training-runner over reference.conf, e.g. {@code backend = trinity-proxy}. */
  StepsHarness(String overrides) {
    this(overrides, null);
  }

  /** With ModelVersion asked "no rollout in progress" through {@code probe} (null: not asked). */
  StepsHarness(String overrides, RolloutProbe probe) {
    TrainingPolicy policy = policy(overrides);
    TrainingCoordinator.Ports ports = new TrainingCoordinator.Ports(exporter, backend, online, sink, probe);
    AtomicReference<CoordinatorRuntime> made = new AtomicReference<>();
    AtomicReference<TrainingCoordinator> entity = new AtomicReference<>();
    kit = BehaviorTestKit.create(Behaviors.<Command>setup(ctx -> Behaviors.withTimers(timers -> {
      made.set(new CoordinatorRuntime("a", policy, PolicyOverrides.fixed(policy), ports, clock, ctx, timers));
      entity.set(new TrainingCoordinator("a", policy, PolicyOverrides.over(config(overrides), null), ports, clock,
          ctx, timers));
      return Behaviors.empty();
    })));
    rt = made.get();
    coordinator = entity.get();
    // The handlers run on the test's thread as the entity runs them while it handles a message:
    // Pekko lets the context be used only from the thread that handles the actor's message.
    ((ActorContextImpl<?>) rt.ctx).setCurrentActorThread();
    proxy = new ProxyLoop(rt);
    steps = new JobSteps(rt, proxy, p -> thresholdLooks++);
  }

  static Config config(String overrides) {
    return ConfigFactory.parseString("training-runner { " + overrides + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training"));
  }

  static TrainingPolicy policy(String overrides) {
    return TrainingPolicy.fromConfig(config(overrides));
  }

  /** The plan's after-effects, run on its state as the entity runs them once the events are persisted. */
  static <P extends Plan<State, Event>> P persisted(P p) {
    p.afterEffects().forEach(a -> a.accept(p.state()));
    return p;
  }

  /** The internal commands the port calls piped to the entity so far (taken from the inbox). */
  List<Command> piped() {
    List<Command> out = new ArrayList<>();
    for (Object m : kit.selfInbox().getAllReceived()) {
      // pipeToSelf delivers the stage's outcome with its mapping; the entity's mailbox applies it
      out.add(m instanceof AdaptMessage<?, ?> a ? (Command) a.adapt() : (Command) m);
    }
    return out;
  }

  /** The timers started so far (taken from the recorded effects), as "key after delay". */
  List<String> timers() {
    List<String> out = new ArrayList<>();
    for (Effect e : kit.getAllEffects()) {
      if (e instanceof Effect.TimerScheduled<?> t) {
        Object msg = t.msg();
        out.add(t.key() + " after " + t.duration() + ": "
            + (msg instanceof Enum<?> ? msg.getClass().getSimpleName() : msg));
      } else if (e instanceof Effect.TimerCancelled c) {
        out.add("cancel " + c.key());
      }
    }
    return out;
  }
}
