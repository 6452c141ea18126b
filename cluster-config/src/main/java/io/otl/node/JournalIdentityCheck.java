package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.persistence.JournalIdentity;
import io.otl.persistence.JournalSettings;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.Valid$;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One journal per cluster: a node joins only a cluster whose journal identity (cluster id and schema
 * version, {@link JournalIdentity}) is its own. Plugged into Pekko's join-time configuration check
 * ({@code pekko.cluster.configuration-compatibility-check.checkers} in otl-node.conf), which runs
 * before the joining node is a member, so a refused node has hosted no entity and written nothing.
 *
 * <p>Both sides run this check. The member answering the join only logs a mismatch and lets the
 * joining node decide: Pekko sends a refused joiner a bare "incompatible" without our message, while
 * an accepted answer carries the cluster's identity and database URL, so the joiner can refuse
 * itself with a message naming both databases. Pekko's joiner then stops ({@code enforce-on-join}),
 * and {@link Main} exits non-zero with {@link #refusal(ActorSystem)}.
 */
public final class JournalIdentityCheck extends JoinConfigCompatChecker {
  private static final Logger log = LoggerFactory.getLogger(JournalIdentityCheck.class);

  /** Where TrainingNode puts this node's identity in the ActorSystem's config (sent to the seed nodes). */
  static final String PATH = "otl.journal-identity";
  static final String CLUSTER_ID = PATH + ".cluster-id";
  static final String SCHEMA_VERSION = PATH + ".schema-version";
  /** The journal's URL without password, only for messages: two URLs may name one database. */
  static final String DB_URL = PATH + ".db-url";

  /**
   * Names this node's ActorSystem in its own config (never sent): Pekko creates checkers without
   * their system, and the check needs it to know which side of a join it is on.
   */
  static final String INSTANCE = "otl.journal-identity-instance";

  private static final Map<String, ActorSystem> SYSTEMS = new ConcurrentHashMap<>();
  private static final Map<String, String> REFUSALS = new ConcurrentHashMap<>();

  /** Pekko creates the checker by its no-argument constructor. */
  public JournalIdentityCheck() {}

  /**
   * The config keys carrying a node's journal identity, laid over the node's config before start;
   * {@link #register} the system created from it.
   */
  static Config config(JournalIdentity identity, JournalSettings journal) {
    return ConfigFactory.parseMap(Map.of(
        CLUSTER_ID, identity.clusterId().toString(),
        // The version this build writes, not the one recorded at creation: builds must agree.
        SCHEMA_VERSION, JournalIdentity.SCHEMA_VERSION,
        DB_URL, journal.safeUrl(),
        INSTANCE, UUID.randomUUID().toString()), "journal identity");
  }

  /** Makes {@code system} known to the checks of its cluster extension, until it terminates. */
  static void register(ActorSystem system) {
    Config c = system.settings().config();
    if (!c.hasPath(INSTANCE)) return;
    String instance = c.getString(INSTANCE);
    SYSTEMS.put(instance, system);
    system.getWhenTerminated().thenRun(() -> SYSTEMS.remove(instance));
  }

  /** Why the cluster refused this node, when it did. */
  static Optional<String> refusal(ActorSystem system) {
    Config c = system.settings().config();
    return c.hasPath(INSTANCE) ? Optional.ofNullable(REFUSALS.get(c.getString(INSTANCE))) : Optional.empty();
  }

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(List.of(CLUSTER_ID, SCHEMA_VERSION, DB_URL)).toList();
  }

  @Override
  public ConfigValidation check(Config toCheck, Config actualConfig) {
    Optional<String> mismatch = mismatch(toCheck, actualConfig);
    if (mismatch.isPresent() && isMember(actualConfig)) {
      log.warn("a node with journal database {} asks to join this cluster (journal database {}); it is sent "
          + "the cluster's identity and refuses itself", describe(toCheck), describe(actualConfig));
      return Valid$.MODULE$;
    }
    return judge(mismatch, actualConfig, () -> "", log);
  }

  /**
   * The verdict of one of this node's join checks ({@link ServingAgreementCheck} too): a member
   * answering a join only logs {@code memberWarning} (see the class comment); a joiner refuses
   * itself and keeps why, for {@link #refusal}.
   *
   * @param checker the calling check's logger: an operator filtering by class found the serving check's
   *     warnings under this one's name
   */
  static ConfigValidation judge(Optional<String> mismatch, Config actualConfig,
      java.util.function.Supplier<String> memberWarning, Logger checker) {
    if (mismatch.isEmpty()) return Valid$.MODULE$;
    if (isMember(actualConfig)) {
      // The mismatch is the joiner's: answer with our settings and let it refuse itself (see the class comment).
      checker.warn("{}; it is sent the cluster's settings and refuses itself", memberWarning.get());
      return Valid$.MODULE$;
    }
    // Both checks may refuse, and Pekko may check an answer of each seed node: each reason once.
    if (actualConfig.hasPath(INSTANCE)) {
      REFUSALS.merge(actualConfig.getString(INSTANCE), mismatch.get(),
          (had, more) -> had.contains(more) ? had : had + ". Also: " + more);
    }
    checker.error("refusing to join the cluster: {}", mismatch.get());
    return new Invalid(scala.jdk.javaapi.CollectionConverters.asScala(List.of(mismatch.get())).toList());
  }

  /** True when this node is a member answering a join (then {@code toCheck} is the joiner's config). */
  private static boolean isMember(Config self) {
    ActorSystem system = self.hasPath(INSTANCE) ? SYSTEMS.get(self.getString(INSTANCE)) : null;
    // Not registered yet: the system is still being created, so it is joining, not a member.
    if (system == null) return false;
    MemberStatus status = Cluster.get(system).selfMember().status();
    return status != MemberStatus.removed() && status != MemberStatus.down();
  }

  private static String describe(Config c) {
    return (c.hasPath(DB_URL) ? c.getString(DB_URL) : "(unknown URL)") + " (journal " + c.getString(CLUSTER_ID)
        + ", schema version " + (c.hasPath(SCHEMA_VERSION) ? c.getString(SCHEMA_VERSION) : "unknown") + ")";
  }

  /**
   * Why a node with journal identity {@code self} must not join a cluster with {@code cluster}, or
   * empty when it may. A side without the keys (a build before identities, a test system) is not
   * judged: there is nothing to compare.
   */
  static Optional<String> mismatch(Config cluster, Config self) {
    if (!cluster.hasPath(CLUSTER_ID) || !self.hasPath(CLUSTER_ID)) return Optional.empty();
    String clusterUrl = cluster.hasPath(DB_URL) ? cluster.getString(DB_URL) : "(unknown URL)";
    String selfUrl = self.hasPath(DB_URL) ? self.getString(DB_URL) : "(unknown URL)";
    String clusterId = cluster.getString(CLUSTER_ID);
    String selfId = self.getString(CLUSTER_ID);
    if (!clusterId.equals(selfId)) {
      return Optional.of("this node's journal database " + selfUrl + " (journal " + selfId
          + ") is not the cluster's journal database " + clusterUrl + " (journal " + clusterId + "). "
          + "A cluster has exactly one journal: point agentscope.training.db.url (OTL_DB_URL) at the cluster's "
          + "database, or give this node seed nodes of its own cluster");
    }
    int clusterVersion = cluster.hasPath(SCHEMA_VERSION) ? cluster.getInt(SCHEMA_VERSION) : -1;
    int selfVersion = self.hasPath(SCHEMA_VERSION) ? self.getInt(SCHEMA_VERSION) : -1;
    if (clusterVersion != selfVersion) {
      return Optional.of("this node's journal schema version " + selfVersion + " (database " + selfUrl
          + ") differs from the cluster's schema version " + clusterVersion + " (database " + clusterUrl
          + "). Nodes of one cluster run builds with the same schema version: stop the cluster and restart "
          + "every node on one build (docs/schema-evolution.md)");
    }
    return Optional.empty();
  }
}
