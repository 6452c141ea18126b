package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.api.ModelRouter;
import io.otl.core.api.ModelVersions;
import io.otl.core.api.TrainingCoordinators;
import io.otl.core.model.ModelVersion;
import io.otl.core.api.StableRoute;
import io.otl.http.ApiErrors;
import io.otl.http.ApiMetrics;
import io.otl.http.gateway.GatewayRoutes;
import io.otl.http.gateway.GatewaySettings;
import io.otl.http.ApiRoutes;
import io.otl.http.Auth;
import io.otl.http.MetricsRegistry;
import io.otl.http.ModelRoutes;
import io.otl.http.AuditRoutes;
import io.otl.http.SessionRoutes;
import io.otl.http.TrainingRoutes;
import io.otl.http.otlp.OtlpRoutes;
import io.otl.core.serving.Serving;
import io.otl.node.serving.ServingWiring;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionSettings;
import io.otl.http.HealthRoutes;
import io.otl.http.HttpServer;
import io.otl.http.ReadinessCheck;
import io.otl.persistence.DataFolder;
import io.otl.persistence.JournalDirectory;
import io.otl.persistence.audit.AuditReader;
import io.otl.persistence.kafka.KafkaIngest;
import io.otl.persistence.kafka.KafkaPublisher;
import io.otl.persistence.kafka.KafkaSettings;
import io.otl.persistence.JournalIdentity;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.nio.file.Path;
import io.otl.node.config.ClusterAddressKeys;
import io.otl.node.config.ChunkSizeLimit;
import io.otl.node.config.NodeConfig;
import io.otl.node.config.NodeSettings;
import io.otl.node.config.SlowAnswers;
import io.otl.node.config.TrainingSettings;
import io.otl.http.HttpSettings;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node of the training control plane (design §7.3): forms or joins the cluster, starts the
 * entities and, unless turned off, the HTTP API. Agents embed it with {@link #start(Config)} and
 * use {@link #dataCollector()}, {@link #modelRouter()} and the coordinator and model views ({@link
 * #trainingCoordinators()}, {@link #modelVersions()}) without any HTTP hop.
 */
public final class TrainingNode implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TrainingNode.class);

  private final ActorSystem<Void> system;
  private final JournalSettings journal;
  private final DataCollector dataCollector;
  private final ModelRouter modelRouter;
  private TrainingCoordinators trainingCoordinators;
  private ModelVersions modelVersions;
  private final HttpServer.Listening httpBinding;
  /** The separate OTLP listener (otlp.port), or null. */
  private HttpServer.Listening otlpBinding;
  private final AtomicBoolean stopping;
  /** The claimed folder of an embedded journal (empty for PostgreSQL); released when the node stops. */
  private Optional<DataFolder> folder = Optional.empty();
  private CompletionStage<Duration> journalWarmUp;
  private Optional<KafkaIngest> kafkaIngest = Optional.empty();

  private TrainingNode(ActorSystem<Void> system, JournalSettings journal, DataCollector dataCollector,
      ModelRouter modelRouter, HttpServer.Listening httpBinding, AtomicBoolean stopping) {
    this.system = system;
    this.journal = journal;
    this.dataCollector = dataCollector;
    this.modelRouter = modelRouter;
    this.httpBinding = httpBinding;
    this.stopping = stopping;
  }

  /** Starts a node on the defaults (application.conf / reference.conf, OTL_* variables). */
  public static TrainingNode start() {
    return start(ConfigFactory.empty());
  }

  /**
   * Starts a node with {@code overrides} laid over the defaults. Fails (and leaves nothing running)
   * when the configuration is invalid or the journal database cannot be reached; the message names
   * the setting to fix.
   */
  public static TrainingNode start(Config overrides) {
    return start(Optional.empty(), overrides);
  }

  /**
   * Starts a node from an AgentScope config file ({@code .yml}, {@code .json}, {@code .toml} or
   * {@code .conf}, design §8) with {@code overrides} above it.
   */
  public static TrainingNode start(Optional<Path> configFile, Config overrides) {
    return start(configFile, overrides, Clock.systemUTC());
  }

  /**
   * As {@link #start(Optional, Config)}, with the clock every entity takes its time from: tests
   * and simulations move it by hand (step durations, idle timeouts, cron slots).
   */
  public static TrainingNode start(Optional<Path> configFile, Config overrides, Clock clock) {
    CommonPool.warnIfTooSmall(log);
    PekkoHttpNoiseFilter.install();
    Config base = NodeConfig.resolve(configFile, overrides.withFallback(ConfigFactory.defaultApplication()),
        System.getenv());
    NodeSettings settings = NodeSettings.from(base);
    JournalSettings configured = settings.journal();
    Optional<DataFolder> folder = DataFolder.claim(configured, "node");
    JournalSettings journal = folder.map(DataFolder::journal).orElse(configured);
    ActorSystem<Void> system = null;
    try {
      JournalIdentity identity = JournalSchema.ensure(journal);
      folder.ifPresent(DataFolder::tighten);
      Config nodeConfig = withSeedNodesFromEnv(JournalIdentityCheck.config(identity, journal)
          .withFallback(ServingAgreementCheck.config(settings.serving(), settings.model()))
          .withFallback(journal.pekkoConfig()).withFallback(base));
      SeedLease.Arrangement seeds = SeedLease.arrange(nodeConfig, ClusterSettings.fromConfig(nodeConfig), journal);
      Config config = ChunkSizeLimit.aboveBodyLimits(SlowAnswers.requestsDoneAboveDeadline(
          SlowAnswers.idleTimeoutAboveAnswers(seeds.config(), settings.gateway()), settings.http().shutdownDeadline()),
          settings.http().otlp().maxDecodedBytes(),
          settings.gateway().filter(GatewaySettings::enabled).map(GatewaySettings::maxBodyBytes).orElse(0L));
      system = ListenerBind.bind(clusterListener(config),
          () -> ActorSystem.create(Behaviors.empty(), ClusterAddressKeys.SYSTEM, config));
      JournalIdentityCheck.register(system.classicSystem());
      SeedLease.start(system, journal, seeds);
      TrainingNode node = startOn(system, journal, settings, seeds.settings(), clock);
      node.folder = folder;
      if (folder.isPresent()) {
        DataFolder f = folder.get();
        ActorSystem<Void> sys = system;
        CoordinatedShutdown.get(sys).addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "unpublish-node",
            () -> {
              f.unpublish();
              return CompletableFuture.completedFuture(org.apache.pekko.Done.getInstance());
            });
        sys.getWhenTerminated().thenRun(f::close);
        if (node.httpBinding != null) f.publish(settings.http().host(), node.httpPort());
      }
      return node;
    } catch (Exception e) {
      // Exception, not RuntimeException: pekko's Await (the cluster port's bind-timeout) throws the checked
      // TimeoutException undeclared, and it left the data folder claimed and the system running.
      if (system != null) system.terminate();
      folder.ifPresent(DataFolder::close);
      // Refused while still starting: the refusal, not what its shutdown broke, is the cause.
      Optional<String> refused = system == null ? Optional.empty()
          : JournalIdentityCheck.refusal(system.classicSystem());
      if (refused.isPresent()) throw new JoinRefusedException(refused.get(), e);
      throw e;
    }
  }

  /** The port the cluster listener binds: artery's bind.port when set (behind NAT), else its canonical port. */
  private static String clusterBindPort(Config config) {
    String bind = config.hasPath(BIND_PORT) ? config.getString(BIND_PORT) : "";
    return bind.isBlank() ? config.getString(ClusterAddressKeys.PORT) : bind;
  }

  private static String clusterPortSetting(Config config) {
    return config.hasPath(BIND_PORT) && !config.getString(BIND_PORT).isBlank() ? BIND_PORT
        : "OTL_CLUSTER_PORT (" + ClusterAddressKeys.PORT + ")";
  }

  /** The cluster listener: its port, and its host, artery's bind.hostname when set (behind NAT), else the canonical one. */
  private static ListenerBind.Listener clusterListener(Config config) {
    boolean bindHost = config.hasPath(BIND_HOST) && !config.getString(BIND_HOST).isBlank();
    // pekko waits for this bind (Await): past its bind-timeout it throws, and the user is told which setting.
    return new ListenerBind.Listener("the cluster", clusterBindPort(config), clusterPortSetting(config),
        config.getString(bindHost ? BIND_HOST : CANONICAL_HOST),
        bindHost ? BIND_HOST : "OTL_HOSTNAME (" + CANONICAL_HOST + ")", !bindHost,
        BIND_TIMEOUT + " = " + config.getString(BIND_TIMEOUT));
  }

  private static final String BIND_PORT = "pekko.remote.artery.bind.port";
  private static final String BIND_TIMEOUT = "pekko.remote.artery.bind.bind-timeout";
  private static final String HTTP_HOST_SETTING = "OTL_HTTP_HOST (agentscope.training.http.host)";
  private static final String BIND_HOST = "pekko.remote.artery.bind.hostname";
  private static final String CANONICAL_HOST = "pekko.remote.artery.canonical.hostname";

  private static TrainingNode startOn(ActorSystem<Void> system, JournalSettings journal, NodeSettings settings,
      ClusterSettings clusterSettings, Clock clock) {
    Cluster cluster = Cluster.get(system);
    // The persistence plugins are prepared once this node is Up, before it takes over anyone's shards.
    CompletionStage<Duration> journalWarmUp = JournalWarmUp.startWhenUp(system);
    journalWarmUp.whenComplete((took, failure) -> {
      if (failure == null) log.info("journal warmed up in {} ms", took.toMillis());
      else log.warn("journal warm-up failed ({}); the first recoveries on this node will prepare it", failure.toString());
    });
    ClusterMembership.join(system, system.settings().config(), clusterSettings);
    TrinitySimulator simulator = settings.simulator()
        .map(s -> ListenerBind.bind(new ListenerBind.Listener("the Trinity simulator's", s.port(),
                "OTL_SIMULATOR_PORT (agentscope.training.simulator.port)", s.host(),
                "agentscope.training.simulator.host"),
            () -> TrinitySimulator.start(system, s, settings.serving().baseModel())))
        .orElse(null);
    // With simulator.port = 0 the default trinity-endpoint says port 0: jobs go where the simulator bound.
    TrainingSettings training = simulator == null ? settings.training()
        : settings.training().withTrinity(settings.training().trinity().onPickedPort(simulator.baseUrl()));
    HttpSettings http = settings.http();
    SessionSettings sessionSettings = settings.sessions();
    ClusterSharding sharding = ClusterSharding.get(system);
    // A node that just (re)joined gets no shards while settled members can take them: after a crash
    // its start-up would hold up the sessions placed on it (SettledMembersFirst, docs/operations.md).
    SettledMembersFirst.Placement placement = SettledMembersFirst.placement(system, sharding,
        clusterSettings.newMemberGrace());
    sharding.init(placement.on(Entity.of(AgentSession.ENTITY_TYPE_KEY,
            ctx -> AgentSession.create(ctx.getEntityId(), sessionSettings, clock, ctx.getShard()))
        .withStopMessage(new AgentSession.Stop())));
    // agents.<agentId> { model-update { … } }: the entity id is the agent id (validated at start-up).
    Serving serving = ServingWiring.serving(settings.serving(), settings.model(), Optional.ofNullable(simulator));
    ServingWiring.warnOfOtherBaseModels(serving, training);
    ApiMetrics metrics = new ApiMetrics(new MetricsRegistry());
    RolloutCounts.start(system, metrics, http.metricsTopAgents());
    sharding.init(placement.on(Entity.of(ModelVersion.ENTITY_TYPE_KEY,
        ctx -> ModelVersion.create(ctx.getEntityId(), settings.rolloutsFor(ctx.getEntityId()), clock, serving))));

    var trainingBackend = TrainingWiring.start(system, sharding, placement, training,
        settings.serving().trainsLora(), http.askTimeout(), sessionSettings.weights(), clock);

    Duration askTimeout = http.askTimeout();
    JournalDirectory directory = new JournalDirectory(journal,
        system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()));
    // New sessions and agents whose ids hold an API key are refused before an entity starts for them.
    io.otl.core.api.KeyLikeIds keyLikeIds = new io.otl.core.api.KeyLikeIds(directory::exists);
    io.otl.persistence.JournalSessionOwners owners = sessionOwners(system, journal);
    // Reads of unknown sessions, and what a new session would refuse, are answered before its entity
    // starts: sharding journals every start (trial t169).
    DataCollector collector = new DataCollector(sharding, askTimeout, keyLikeIds, new io.otl.core.api.StoredSessions(
        owners, new io.otl.core.session.NewSessionRefusals(sessionSettings, clock), STORED_SESSIONS_KNOWN));
    ModelRouter router = new ModelRouter(sharding, askTimeout, keyLikeIds);

    AtomicBoolean stopping = new AtomicBoolean(false);
    // Stopping: new requests get 503 (Retry-After) for http.stop-drain while the port stays open, and
    // only then is it closed. A connection that reached the port's accept queue just before it closes
    // is reset by the kernel, unanswered; draining first lets clients (and load balancers, which see
    // /health/ready turn 503) move on with an answer instead.
    Duration stopDrain = http.stopDrain();
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "mark-stopping",
        () -> {
          stopping.set(true);
          String reason = CoordinatedShutdown.get(system).getShutdownReason()
              .map(r -> r.getClass().getSimpleName().replace("$", "")).orElse("asked");
          if (!http.enabled()) {
            // Embedded with HTTP off (docs/api.md): no port to drain. The line spoke of 503s and an HTTP
            // port the application does not have, and close() waited out the drain for nobody.
            log.info("stopping ({}): leaving the cluster (HTTP off: nothing to drain)", reason);
            return CompletableFuture.completedFuture(org.apache.pekko.Done.getInstance());
          }
          // pekko's own lines name no port or time limit; an operator watching a SIGTERM saw nothing of
          // the node's between "Running CoordinatedShutdown" and the cluster's exit.
          log.info("stopping ({}): new requests get 503 for {} ms (http.stop-drain), then the HTTP port closes and "
              + "in-flight requests get up to {} ms (http.shutdown-deadline)",
              reason, stopDrain.toMillis(), http.shutdownDeadline().toMillis());
          CompletableFuture<org.apache.pekko.Done> drained = new CompletableFuture<>();
          system.scheduler().scheduleOnce(stopDrain, () -> drained.complete(org.apache.pekko.Done.getInstance()),
              system.executionContext());
          return drained;
        });

    KafkaSettings kafka = settings.kafka();
    if (kafka.groupInstanceId().isEmpty()) {
      var self = cluster.selfMember().address();
      kafka = kafka.withGroupInstanceId(KafkaSettings.derivedGroupInstanceId(self.getHost().orElse("local"),
          self.getPort().orElse(0)));
    }
    KafkaIngest kafkaIngest = null;
    if (kafka.enabled()) {
      KafkaIngest ingest = KafkaIngest.start(system, collector, kafka);
      kafkaIngest = ingest;
      KafkaPublisher.startTrajectories(system, kafka);
      KafkaPublisher.startModelUpdates(system, kafka);
      KafkaIngestMetrics.register(metrics, ingest);
      log.info("Kafka on: ingesting {} from {}", kafka.topics().agentEvents(), kafka.bootstrapServers());
    }

    EntityMetrics.start(system, sharding, directory, metrics, http.metricsSampleInterval(),
        askTimeout, http.metricsTopAgents());
    if (training.trinity().backend().equals(io.otl.node.trinity.TrinityProxyBackend.TYPE)) {
      // design §5.2: the proxy's liveness is its GET /health, shown on /metrics (it was read by no one)
      io.otl.node.trinity.ProxyLiveness.start(system, training.trinity().endpoint(), metrics,
          http.metricsSampleInterval());
    }

    HttpServer.Listening binding = null;
    HttpServer.Listening otlpBinding = null;
    if (http.enabled()) {
      List<ReadinessCheck> checks = List.of(journalCheck(journal), clusterCheck(cluster));
      // The port the API is bound to (http.port 0 picks one), for refusing a version registered at it.
      java.util.concurrent.atomic.AtomicInteger boundPort = new java.util.concurrent.atomic.AtomicInteger(http.port());
      Auth auth = http.auth().auth(settings.gateway().filter(GatewaySettings::enabled)
          .map(g -> g.apiKeys().values()).orElse(List.of()));
      int maxEvents = http.maxEventsPerRequest();
      // A write to a session waits (at most an ask timeout) for this node's gateway turns of it not yet recorded.
      io.otl.http.gateway.TurnsInFlight turns = settings.gateway().filter(GatewaySettings::enabled)
          .map(g -> new io.otl.http.gateway.TurnsInFlight(askTimeout, g.timeout().plus(askTimeout)))
          .orElse(null);
      SessionRoutes sessionRoutes = new SessionRoutes(collector, maxEvents, metrics, http.maxJsonDepth(), turns);
      OtlpRoutes otlp = new OtlpRoutes(collector, metrics, maxEvents, http.otlp().maxDecodedBytes(),
          sessionSettings.desensitizer(), sessionSettings.maxTextLength());
      GatewayRoutes gateway = settings.gateway().filter(GatewaySettings::enabled)
          .map(g -> gateway(system, g, collector, router, sharding, askTimeout, metrics, sessionSettings, owners,
              turns, directory))
          .orElse(null);
      // Each agent's settings as its entities use them (its file section, its run-time overrides of then).
      AuditReader audit = new AuditReader(system, settings::rolloutsFor,
          agentId -> training.forAgent(agentId).resolver());
      Route routes = ApiRoutes.build(new HealthRoutes(checks, stopping::get), metrics, auth,
          http.maxInFlight(), stopping::get, List.of(
              sessionRoutes.route(),
              new io.otl.http.AgentRoutes(directory).route(),
              new ModelRoutes(sharding, askTimeout, directory, serving.baseModel(), sessionSettings.desensitizer(),
                  owners, endpoint -> io.otl.http.gateway.ServingUrls.reachesListener(endpoint, http.host(),
                      boundPort.get())).route(),
              new io.otl.http.JobLogRoutes(sharding, askTimeout, directory, trainingBackend).route(),
              new TrainingRoutes(sharding, askTimeout, directory, NodePolicyCheck.of(settings)).route(),
              new AuditRoutes(audit).route(),
              new io.otl.http.ExportRoutes(new NodeExports(system, training.filters())).route(),
              new io.otl.http.AuditTimelineRoutes(new NodeTimelines(audit,
                  system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()))).route(),
              otlp.route(),
              // Per-version figures of this node's gateway: an operator's read, behind the API's token.
              gateway == null ? org.apache.pekko.http.javadsl.server.Directives.reject() : gateway.trafficRoute()),
          List.of(sessionRoutes.feedbackRoute()),
          gateway == null ? null : gateway.route(),
          // OTel exporters send uncompressed by default: the raw body may be as large as a gzip one decoded.
          java.util.Map.of("/v1/traces", http.otlp().maxDecodedBytes(), "/v1/traces/", http.otlp().maxDecodedBytes()),
          gateway == null ? request -> false : gateway::answersModelPath);
      binding = ListenerBind.bind(new ListenerBind.Listener("the HTTP API's", http.port(),
              "OTL_HTTP_PORT (agentscope.training.http.port)", http.host(), HTTP_HOST_SETTING),
          () -> HttpServer.start(system, http.host(), http.port(), routes, http.shutdownDeadline(),
              http.maxConnectionsPerAddress(), metrics).toCompletableFuture().join());
      boundPort.set(binding.localAddress().getPort());
      if (http.otlp().ownPort()) {
        // There is no otlp.host: the OTLP port listens on http.host.
        otlpBinding = ListenerBind.bind(new ListenerBind.Listener("the OTLP receiver's", http.otlp().port(),
                "OTL_OTLP_PORT (agentscope.training.otlp.port)", http.host(), HTTP_HOST_SETTING),
            () -> HttpServer.start("OTLP receiver (POST /v1/traces)", system, http.host(), http.otlp().port(),
                otlp.standalone(auth),
                http.shutdownDeadline(), http.maxConnectionsPerAddress(), metrics).toCompletableFuture().join());
        log.info("OTLP/HTTP traces receiver (POST /v1/traces) on its own port {}", otlpBinding.localAddress().getPort());
      }
    }
    log.info("training node up: journal {}, cluster {}, {}{}", journal, cluster.selfMember().address(),
        trainingTarget(training.trinity()),
        simulator == null ? "" : ", Trinity SIMULATOR on port " + simulator.port());
    system.getWhenTerminated().thenRun(() -> log.info("training node stopped: left the cluster as {}",
        cluster.selfMember().address()));
    TrainingNode node = new TrainingNode(system, journal, collector, router, binding, stopping);
    node.trainingCoordinators = new TrainingCoordinators(sharding, askTimeout, directory);
    node.modelVersions = new ModelVersions(sharding, askTimeout, directory, sessionSettings.desensitizer());
    node.otlpBinding = otlpBinding;
    node.journalWarmUp = journalWarmUp;
    node.kafkaIngest = Optional.ofNullable(kafkaIngest);
    return node;
  }

  /**
   * Where this node's training jobs go, for the start-up line: the simulator also starts when a
   * config file points trinity-endpoint elsewhere, and "Trinity SIMULATOR on port N" alone read as if
   * jobs ran there. Scheme, host, port and path only: user info or a query may hold a credential.
   */
  static String trainingTarget(io.otl.node.trinity.TrinitySettings trinity) {
    return "training jobs to " + trinity.backend() + " at " + trinity.endpoint().shown();
  }


  /** Sessions a node remembers as stored, whose reads and feedback skip the journal read (about 100 bytes each). */
  private static final int STORED_SESSIONS_KNOWN = 100_000;

  /** Connections (and threads) of the session-owner reads. */
  private static final int OWNER_READ_CONNECTIONS = 4;

  /**
   * Who owns a session and which version it started on, read from the journal: the gateway's owner
   * check of a session's first call, the route of a running session (gateway and route read), and
   * whether a session read or refused is stored at all.
   */
  private static io.otl.persistence.JournalSessionOwners sessionOwners(ActorSystem<?> system,
      JournalSettings journal) {
    // One indexed read on threads of its own, so that it waits neither behind the journal's writes
    // nor behind other blocking work.
    java.util.concurrent.ExecutorService ownerReads = java.util.concurrent.Executors.newFixedThreadPool(
        OWNER_READ_CONNECTIONS, r -> {
          Thread t = new Thread(r, "gateway-session-owners");
          t.setDaemon(true);
          return t;
        });
    io.otl.persistence.JournalSessionOwners owners = new io.otl.persistence.JournalSessionOwners(journal,
        system.classicSystem(), OWNER_READ_CONNECTIONS, ownerReads);
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceStop(), "gateway-session-owners", () -> {
      owners.close();
      ownerReads.shutdown();
      return CompletableFuture.completedFuture(org.apache.pekko.Done.getInstance());
    });
    return owners;
  }

  /** The inference gateway (design §7.5). */
  private static GatewayRoutes gateway(ActorSystem<?> system, GatewaySettings settings, DataCollector collector,
      ModelRouter router, ClusterSharding sharding, Duration askTimeout, ApiMetrics metrics, SessionSettings sessions,
      io.otl.core.api.SessionOwners owners, io.otl.http.gateway.TurnsInFlight turns,
      io.otl.core.api.AgentDirectory directory) {
    log.info("inference gateway on: /v1/chat/completions, {}", settings);
    StableRoute stable = new StableRoute(sharding, askTimeout);
    // Asked of the journal first, as the API's model reads: an agent with no version yet (any X-Agent-Id a
    // client sends) starts no entity for a list of models.
    java.util.function.Function<String, java.util.concurrent.CompletionStage<Optional<java.time.Instant>>> created =
        agent -> directory.exists(io.otl.core.model.ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agent)
            .thenCompose(exists -> exists ? stable.stableRegisteredAt(agent)
                : CompletableFuture.completedFuture(Optional.empty()));
    return new GatewayRoutes(system, settings, collector, router, stable,
        metrics, sessions.desensitizer(), sessions.maxTextLength(),
        new io.otl.http.gateway.GatewayTraffic(java.time.Instant.now()),
        owners, turns, sessions.sampler(), created);
  }

  /** The agent-events ingestion, when kafka.enabled (its counters, for the benchmarks). */
  public Optional<KafkaIngest> kafkaIngest() {
    return kafkaIngest;
  }

  public DataCollector dataCollector() {
    return dataCollector;
  }

  /** Which model version serves a session; sticky per session (design §3.3). */
  public ModelRouter modelRouter() {
    return modelRouter;
  }

  /** The coordinator views (design §7.3): training status, jobs, the manual trigger, cancel. */
  public TrainingCoordinators trainingCoordinators() {
    return trainingCoordinators;
  }

  /** The model views (design §7.3): versions, states, ratios, metrics; manual promote and rollback. */
  public ModelVersions modelVersions() {
    return modelVersions;
  }

  public ActorSystem<Void> system() {
    return system;
  }

  /**
   * The cluster's journal identity or serving settings are not this node's: it did not join (see
   * {@link JournalIdentityCheck}, {@link ServingAgreementCheck}).
   */
  public static final class JoinRefusedException extends IllegalStateException {
    JoinRefusedException(String why, Throwable cause) {
      super("refused to join the cluster: " + why, cause);
    }
  }

  /**
   * Why this node stopped without joining, when the cluster's journal identity or serving settings
   * were not its own ({@link JournalIdentityCheck}, {@link ServingAgreementCheck}); empty otherwise.
   */
  public Optional<String> joinRefusal() {
    return JournalIdentityCheck.refusal(system.classicSystem());
  }

  public JournalSettings journal() {
    return journal;
  }

  /** The start-up recovery that prepares the persistence plugins ({@link JournalWarmUp}). */
  CompletionStage<Duration> journalWarmUp() {
    return journalWarmUp;
  }

  /** The port the HTTP API is bound to, or -1 when HTTP is off. */
  public int httpPort() {
    return httpBinding == null ? -1 : httpBinding.localAddress().getPort();
  }

  /** The port of the separate OTLP/HTTP listener, or -1 when {@code otlp.port} is not set. */
  public int otlpPort() {
    return otlpBinding == null ? -1 : otlpBinding.localAddress().getPort();
  }

  /** Leaves the cluster and stops, letting in-flight requests finish. */
  public CompletionStage<org.apache.pekko.Done> shutdown() {
    return CoordinatedShutdown.get(system).runAll(CoordinatedShutdown.unknownReason());
  }

  @Override
  public void close() {
    try {
      shutdown().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS).join();
    } finally {
      folder.ifPresent(DataFolder::close);
    }
  }

  private static Config withSeedNodesFromEnv(Config config) {
    List<String> seeds = ClusterAddressKeys.seedNodes(System.getenv("OTL_SEED_NODES"));
    if (seeds.isEmpty()) return config;
    return config.withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(seeds));
  }

  /**
   * The journal table answers a query that reads no row (not just the database server: a schema renamed
   * or a table moved away left readiness UP while every write failed, trial t108); checked on a
   * blocking thread, at most every second.
   */
  private static ReadinessCheck journalCheck(JournalSettings journal) {
    String probe = JournalSchema.journalTableProbe(journal);
    java.util.concurrent.atomic.AtomicBoolean wasDown = new java.util.concurrent.atomic.AtomicBoolean();
    return new CachedCheck("journal", Duration.ofSeconds(1), () -> CompletableFuture.supplyAsync(() -> {
      try (var c = JournalSchema.connect(journal); var st = c.createStatement()) {
        st.setQueryTimeout(2);
        st.executeQuery(probe).close();
        if (wasDown.compareAndSet(true, false)) log.info("readiness: the journal answers again");
        return ReadinessCheck.Result.up(journal.kind().name().toLowerCase(Locale.ROOT));
      } catch (Exception e) {
        // The health routes need no token, and the driver's text names the database's host, port, schema and
        // tables (trial t108): the body says what kind of failure, the log (once per outage) what it was.
        if (!wasDown.getAndSet(true)) log.warn("readiness: the journal does not answer: {}", e.toString());
        return ReadinessCheck.Result.down("journal unreachable: " + failureKind(e));
      }
    }));
  }

  /** A JDBC failure's SQLState (e.g. {@code SQLState 08001}), else the exception's class name. */
  private static String failureKind(Exception e) {
    java.sql.SQLException sql = ApiErrors.databaseCause(e);
    return sql != null && sql.getSQLState() != null ? "SQLState " + sql.getSQLState() : e.getClass().getSimpleName();
  }

  private static ReadinessCheck clusterCheck(Cluster cluster) {
    return new ReadinessCheck() {
      public String name() {
        return "cluster";
      }

      public CompletionStage<Result> check() {
        MemberStatus status = cluster.selfMember().status();
        boolean up = status == MemberStatus.up() || status == MemberStatus.weaklyUp();
        return CompletableFuture.completedFuture(new Result(up, "member " + status));
      }
    };
  }

  /** Remembers a check's result for a while so probes do not hammer the database. */
  private static final class CachedCheck implements ReadinessCheck {
    private final String name;
    private final Duration ttl;
    private final java.util.function.Supplier<CompletionStage<Result>> probe;
    private volatile CompletionStage<Result> last;
    private volatile long lastAt;

    CachedCheck(String name, Duration ttl, java.util.function.Supplier<CompletionStage<Result>> probe) {
      this.name = name;
      this.ttl = ttl;
      this.probe = probe;
    }

    public String name() {
      return name;
    }

    public CompletionStage<Result> check() {
      long now = System.nanoTime();
      if (last == null || now - lastAt > ttl.toNanos()) {
        last = probe.get();
        lastAt = now;
      }
      return last;
    }
  }
}
