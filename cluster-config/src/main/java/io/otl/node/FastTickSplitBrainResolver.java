package io.otl.node;

import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.DowningProvider;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.sbr.DownAllNodes;
import org.apache.pekko.cluster.sbr.DowningStrategy;
import org.apache.pekko.cluster.sbr.KeepMajority;
import org.apache.pekko.cluster.sbr.KeepOldest;
import org.apache.pekko.cluster.sbr.SplitBrainResolverBase;
import org.apache.pekko.cluster.sbr.SplitBrainResolverProvider;
import org.apache.pekko.cluster.sbr.SplitBrainResolverSettings;
import org.apache.pekko.cluster.sbr.StaticQuorum;
import org.apache.pekko.remote.artery.ThisActorSystemQuarantinedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.concurrent.duration.Duration;
import scala.concurrent.duration.FiniteDuration;

/**
 * Pekko's split-brain resolver, deciding on a {@link #TICK} instead of its fixed one second.
 *
 * <p>Pekko's resolver decides only on its tick: a crashed node whose {@code stable-after} has run out
 * waits up to a second more to be downed (0.5-0.6 s in R4's timelines, every fail-over). The tick
 * interval is hard-coded there, so this provider runs the same resolver actor (its base class, the
 * strategies and settings Pekko's provider reads from {@code pekko.cluster.split-brain-resolver})
 * with a shorter tick; the tick only compares a deadline, so ten a second cost nothing. Pekko's
 * internal classes are pinned by the Pekko BOM; {@code FastTickSplitBrainResolverTest} breaks if an
 * upgrade changes them. {@code lease-majority} is left to Pekko's provider unchanged (its lease
 * timing is built around the one-second tick).
 */
public final class FastTickSplitBrainResolver extends SplitBrainResolverBase {
  /** How often the resolver looks at its deadline. */
  public static final FiniteDuration TICK = Duration.create(100, TimeUnit.MILLISECONDS);

  private static final Logger log = LoggerFactory.getLogger(FastTickSplitBrainResolver.class);

  private final Cluster cluster = Cluster.get(context().system());

  FastTickSplitBrainResolver(FiniteDuration stableAfter, DowningStrategy strategy) {
    super(stableAfter, strategy);
  }

  @Override
  public FiniteDuration tickInterval() {
    return TICK; // read by the base class's constructor: a constant, not a field
  }

  @Override
  public UniqueAddress selfUniqueAddress() {
    return cluster.selfUniqueAddress();
  }

  @Override
  public String selfDc() {
    return cluster.selfDataCenter();
  }

  @Override
  public void preStart() throws Exception {
    cluster.subscribe(self(), ClusterEvent.initialStateAsEvents(), ClusterEvent.ClusterDomainEvent.class);
    context().system().eventStream().subscribe(self(), ThisActorSystemQuarantinedEvent.class);
    super.preStart();
  }

  @Override
  public void postStop() {
    cluster.unsubscribe(self());
    context().system().eventStream().unsubscribe(self(), ThisActorSystemQuarantinedEvent.class);
    super.postStop();
  }

  @Override
  public void down(UniqueAddress node, DowningStrategy.Decision decision) {
    log.info("SBR is downing [{}] ({})", node, decision);
    cluster.down(node.address());
  }

  /** Configured by {@code pekko.cluster.downing-provider-class}; Pekko instantiates it with the system. */
  public static final class Provider extends DowningProvider {
    private final ActorSystem system;
    private final SplitBrainResolverSettings settings;
    private final SplitBrainResolverProvider pekkos;

    public Provider(ActorSystem system) {
      this.system = system;
      this.settings = new SplitBrainResolverSettings(system.settings().config());
      this.pekkos = new SplitBrainResolverProvider(system);
    }

    @Override
    public FiniteDuration downRemovalMargin() {
      return pekkos.downRemovalMargin();
    }

    @Override
    public Option<Props> downingActorProps() {
      DowningStrategy strategy = strategy();
      if (strategy == null) return pekkos.downingActorProps();
      FiniteDuration stableAfter = settings.DowningStableAfter();
      return Option.apply(Props.create(FastTickSplitBrainResolver.class,
          () -> new FastTickSplitBrainResolver(stableAfter, strategy)));
    }

    /** The strategy Pekko's provider would build, or null for lease-majority. */
    DowningStrategy strategy() {
      Cluster cluster = Cluster.get(system);
      String dc = cluster.selfDataCenter();
      UniqueAddress self = cluster.selfUniqueAddress();
      String name = settings.DowningStrategy();
      if (name.equals(SplitBrainResolverSettings.KeepMajorityName())) {
        return new KeepMajority(dc, settings.keepMajorityRole(), self);
      } else if (name.equals(SplitBrainResolverSettings.StaticQuorumName())) {
        return new StaticQuorum(dc, settings.staticQuorumSettings().size(), settings.staticQuorumSettings().role(),
            self);
      } else if (name.equals(SplitBrainResolverSettings.KeepOldestName())) {
        return new KeepOldest(dc, settings.keepOldestSettings().downIfAlone(), settings.keepOldestSettings().role(),
            self);
      } else if (name.equals(SplitBrainResolverSettings.DownAllName())) {
        return new DownAllNodes(dc, self);
      }
      return null;
    }
  }
}
