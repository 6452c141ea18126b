package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.NodeConfig;
import io.otl.node.config.NodeSettings;
import io.otl.persistence.audit.AuditReader;
import io.otl.persistence.DataFolder;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * A local actor system that reads the journal of a node's configuration without running a node:
 * for the command-line tools (audit, export). Same configuration stack as the node ({@link
 * NodeConfig#resolve}: the {@code --config} file, OTL_DB_* variables, -D properties), provider
 * {@code local}, no cluster, no HTTP, no schema creation: it only reads.
 */
public final class OfflineJournal implements AutoCloseable {
  private final ActorSystem<Void> system;
  private final JournalSettings journal;
  private final NodeSettings settings;
  private final Optional<DataFolder> folder;

  private OfflineJournal(ActorSystem<Void> system, JournalSettings journal, NodeSettings settings,
      Optional<DataFolder> folder) {
    this.system = system;
    this.journal = journal;
    this.settings = settings;
    this.folder = folder;
  }

  public static OfflineJournal start(Optional<Path> configFile) {
    return start(configFile, ConfigFactory.empty());
  }

  /**
   * @param overrides laid over application.conf, below the file and the environment
   * @throws DataFolder.InUse when a node (or another tool) holds the embedded journal's folder: read
   *     through its HTTP API instead ({@link DataFolder.InUse#node()})
   */
  public static OfflineJournal start(Optional<Path> configFile, Config overrides) {
    Config base = NodeConfig.resolve(configFile, overrides.withFallback(ConfigFactory.defaultApplication()),
        System.getenv());
    Config training = base.getConfig("agentscope.training");
    JournalSettings configured = JournalSettings.fromConfig(training);
    // What the audit views show of the configuration (step deadlines, the coordinator's policy),
    // per agent as the node reads it.
    NodeSettings settings = NodeSettings.from(base);
    JournalSchema.requireJournalFile(configured);
    Optional<DataFolder> folder = DataFolder.claim(configured, "audit");
    JournalSettings journal = folder.map(DataFolder::journal).orElse(configured);
    try {
      // Fail at once with the URL (password masked), the user and the setting to fix, as export
      // does; the journal plugin's pool would otherwise time out after 5 s with
      // "IllegalStateException: java.sql.SQLException: … Connection is not available". A database
      // without the journal's table is said as such, not as the first query's SQL error.
      JournalSchema.requireJournalTables(journal);
    } catch (RuntimeException e) {
      folder.ifPresent(DataFolder::close);
      throw e;
    }
    Config offline = ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "local",
        "pekko.loglevel", "WARNING",
        "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"), "offline journal reader");
    Config config = offline.withFallback(journal.pekkoConfig()).withFallback(base);
    try {
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl-offline", config);
      return new OfflineJournal(system, journal, settings, folder);
    } catch (RuntimeException e) {
      folder.ifPresent(DataFolder::close);
      throw e;
    }
  }

  public ActorSystem<Void> system() {
    return system;
  }

  public JournalSettings journal() {
    return journal;
  }

  /** Reads the journal's entities as a node's audit API does, with the configuration's settings. */
  public AuditReader auditReader() {
    return new AuditReader(system, settings::rolloutsFor,
        agentId -> settings.training().forAgent(agentId).resolver());
  }

  @Override
  public void close() {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(Duration.ofSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      // best effort: the process ends anyway
    }
    folder.ifPresent(DataFolder::close);
  }
}
