package io.otl.core.coordinator;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.otl.core.schedule.CronSchedule;
import io.otl.core.training.TrainingJobSpec;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What the TrainingCoordinator of every agent does, read from {@code
 * agentscope.training.training-runner} (defaults and one comment per key in {@code
 * core-actors/src/main/resources/reference.conf}).
 *
 * <p><b>Triggers.</b> {@link #triggers()} is the configured {@code trigger.type} set. It says which
 * <em>automatic</em> triggers are on ({@code threshold}, {@code scheduled}); a manual trigger
 * (HTTP {@code POST /v1/training/{agentId}/trigger} or the Java API) is always accepted, whether or
 * not {@code manual} is listed: listing it only documents the intent.
 *
 * <p><b>Base model.</b> An empty {@code base-model} is accepted here: the node's validator refuses
 * it at start-up, and the coordinator's pre-flight checklist fails every job without one (design
 * §3.2 "base model set"), so a missing model is visible in the job history instead of crashing
 * the entity.
 *
 * @param backend which Trinity integration trains the agent
 * @param trinityEndpoint base URL of the backend; for {@code trinity-proxy} plus {@code /v1} also
 *     the inference endpoint registered with proxy candidates
 * @param triggers configured trigger types (never empty)
 * @param cron the schedule when {@link TriggerType#SCHEDULED} is on, else null
 * @param zone time zone in which {@link #cron()} is evaluated ({@code trigger.zone}, default UTC)
 * @param minSamples pool size at which the threshold trigger fires (>= 1)
 * @param missedSlots what to do at start-up with a scheduled slot missed while no node ran
 * @param algorithm one of {@link TrainingJobSpec#ALGORITHMS}
 * @param baseModel model the jobs train from; may be empty (then every pre-flight fails)
 * @param hyperparams learning-rate (Double), batch-size (Integer), epochs (Integer), warmup-ratio
 *     (Double), plus any further keys of the {@code hyperparams} section, in config order
 * @param minQuality trajectories below this quality score are filtered out; the pool's mean must
 *     reach it in the pre-flight
 * @param datasetDir where the exporter writes datasets
 * @param checkpointRootDir Trinity's {@code checkpoint_root_dir}
 * @param pollInterval how often a submitted job (or the proxy's metrics) is polled
 * @param submitMinBackoff first back-off after a failed submission, export, cancel or hand-over
 * @param submitMaxBackoff longest back-off
 * @param trainingEnabled {@code agentscope.training.enabled}: when false no trigger (automatic or
 *     manual) starts a job and no requested job is submitted; trajectories are still pooled
 * @param trinityNodeNum {@code trinity.node-num}, the Ray nodes a rendered Trinity config asks for
 *     (read only by the pre-flight's GPU warning, {@link GpuBudget})
 * @param trinityGpuPerNode {@code trinity.gpu-per-node}, the GPUs per node it asks for
 * @param feedbackWindow {@code data-collector.session.feedback-window}: how long after its completion a
 *     session's reward may still be revised, so how long the coordinator must remember a used or
 *     filtered session ({@link SessionForgetting}); 24h when not given
 */
public record TrainingPolicy(
    Backend backend,
    String trinityEndpoint,
    Set<TriggerType> triggers,
    CronSchedule cron,
    ZoneId zone,
    int minSamples,
    MissedSlots missedSlots,
    String algorithm,
    String baseModel,
    Map<String, Object> hyperparams,
    double minQuality,
    String datasetDir,
    String checkpointRootDir,
    Duration pollInterval,
    Duration submitMinBackoff,
    Duration submitMaxBackoff,
    boolean trainingEnabled,
    int trinityNodeNum,
    int trinityGpuPerNode,
    Duration feedbackWindow) {

  /** The default feedback window ({@code data-collector.session.feedback-window}). */
  public static final Duration DEFAULT_FEEDBACK_WINDOW = Duration.ofHours(24);

  /** Configuration path (under {@code agentscope.training}) of these settings. */
  public static final String PATH = "training-runner";

  /**
   * Where a quality score lies (design §3.1.1), so where min-quality must: the policy, the export
   * route's {@code minQuality} and the export command's filters check it alike. Outside it the filter
   * selects nothing (above 1) or everything (below 0) and looks as if it worked.
   */
  public static final String QUALITY_RANGE = "[0, 1]";

  /** Whether {@code v} is a quality score (NaN is not). */
  public static boolean isQuality(double v) {
    return v >= 0 && v <= 1;
  }

  /**
   * Where a reward lies: feedback and result weights are summed and clipped to [-1, 1] (design
   * §3.1.1), so sft-min-reward must be at most 1, and dpo-min-margin, a difference of two rewards,
   * in (0, 2]. Above, the filter selects nothing, every job fails its pre-flight on an empty dataset
   * and the export command exits 3 (trial t43: {@code sft-min-reward = 4}, read as a rating of 4 of
   * 5, which is a reward of 0.5). Below -1 it selects every trajectory, as -1 does: configurations
   * that say "no filter" with -1e9 stay valid.
   */
  public static final String REWARD_RANGE = "[-1, 1]";

  /** What sft-min-reward may be: a threshold some reward meets. */
  public static final String MIN_REWARD_RANGE = "<= 1";

  /** The range of dpo-min-margin: a difference of two rewards, which a pair needs to be one. */
  public static final String REWARD_MARGIN_RANGE = "(0, 2]";

  /** Whether {@code v} is a threshold that some reward meets (NaN is not). */
  public static boolean isReachableMinReward(double v) {
    return v <= 1;
  }

  /** Whether {@code v} is a margin two rewards can differ by (NaN is not). */
  public static boolean isRewardMargin(double v) {
    return v > 0 && v <= 2;
  }

  private static final String PREFIX = "agentscope.training.training-runner.";

  /** What starts a job. */
  public enum TriggerType {
    /** The pool reached {@code min-samples}. */
    THRESHOLD,
    /** A slot of the cron schedule. */
    SCHEDULED,
    /** A user or program asked for it (always allowed). */
    MANUAL;

    /** The configuration name, e.g. {@code threshold}. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** A scheduled slot missed while no node ran. */
  public enum MissedSlots {
    /** The latest missed slot fires once at start-up. */
    FIRE,
    /** Missed slots are recorded as skipped. */
    SKIP
  }

  /** The two Trinity integrations of design §5. */
  public enum Backend {
    RAY_JOBS("ray-jobs"),
    TRINITY_PROXY("trinity-proxy");

    private final String configName;

    Backend(String configName) {
      this.configName = configName;
    }

    /** The configuration name, e.g. {@code ray-jobs}. */
    public String configName() {
      return configName;
    }
  }

  public TrainingPolicy {
    Objects.requireNonNull(backend, "backend");
    trinityEndpoint = trinityEndpoint == null ? "" : trinityEndpoint;
    require(triggers != null && !triggers.isEmpty(), "trigger.type", triggers,
        "one or more of threshold, scheduled, manual");
    triggers = Collections.unmodifiableSet(EnumSet.copyOf(triggers));
    require(!triggers.contains(TriggerType.SCHEDULED) || cron != null, "trigger.cron", null,
        "a 6-field cron expression when trigger.type includes scheduled");
    zone = zone == null ? ZoneId.of("UTC") : zone;
    require(minSamples >= 1, "trigger.min-samples", minSamples, "an integer >= 1");
    Objects.requireNonNull(missedSlots, "missedSlots");
    require(algorithm != null && TrainingJobSpec.ALGORITHMS.contains(algorithm), "algorithm",
        algorithm, "one of sft, ppo, grpo, dpo, distillation");
    baseModel = baseModel == null ? "" : baseModel.trim();
    hyperparams = hyperparams == null ? Map.of()
        : Collections.unmodifiableMap(new LinkedHashMap<>(hyperparams));
    require(isQuality(minQuality), "min-quality", minQuality, "a number in " + QUALITY_RANGE);
    datasetDir = datasetDir == null ? "" : datasetDir;
    checkpointRootDir = checkpointRootDir == null ? "" : checkpointRootDir;
    require(positive(pollInterval), "poll-interval", pollInterval, "a duration > 0");
    require(positive(submitMinBackoff), "submit-retry.min-backoff", submitMinBackoff,
        "a duration > 0");
    require(positive(submitMaxBackoff) && submitMaxBackoff.compareTo(submitMinBackoff) >= 0,
        "submit-retry.max-backoff", submitMaxBackoff, "a duration >= submit-retry.min-backoff");
    require(trinityNodeNum >= 1, "trinity.node-num", trinityNodeNum, "an integer >= 1");
    require(trinityGpuPerNode >= 1, "trinity.gpu-per-node", trinityGpuPerNode, "an integer >= 1");
    feedbackWindow = feedbackWindow == null || feedbackWindow.isNegative() ? DEFAULT_FEEDBACK_WINDOW : feedbackWindow;
  }

  /** A policy with the default feedback window. */
  public TrainingPolicy(Backend backend, String trinityEndpoint, Set<TriggerType> triggers, CronSchedule cron,
      ZoneId zone, int minSamples, MissedSlots missedSlots, String algorithm, String baseModel,
      Map<String, Object> hyperparams, double minQuality, String datasetDir, String checkpointRootDir,
      Duration pollInterval, Duration submitMinBackoff, Duration submitMaxBackoff, boolean trainingEnabled,
      int trinityNodeNum, int trinityGpuPerNode) {
    this(backend, trinityEndpoint, triggers, cron, zone, minSamples, missedSlots, algorithm, baseModel, hyperparams,
        minQuality, datasetDir, checkpointRootDir, pollInterval, submitMinBackoff, submitMaxBackoff, trainingEnabled,
        trinityNodeNum, trinityGpuPerNode, null);
  }

  /**
   * True when this automatic trigger is configured; {@code MANUAL} is always allowed. None is when
   * training is disabled.
   */
  public boolean isEnabled(TriggerType t) {
    if (!trainingEnabled) return false;
    return t == TriggerType.MANUAL || triggers.contains(t);
  }

  /** The configured trigger names in lower case, e.g. {@code [threshold, scheduled]}. */
  public List<String> triggerNames() {
    List<String> names = new ArrayList<>();
    for (TriggerType t : triggers) {
      names.add(t.configName());
    }
    return List.copyOf(names);
  }

  /** Back-off before retry number {@code attempt} (1 = first retry): min·2^(attempt−1), capped. */
  public Duration backoff(int attempt) {
    Duration d = submitMinBackoff;
    for (int i = 1; i < attempt && d.compareTo(submitMaxBackoff) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(submitMaxBackoff) > 0 ? submitMaxBackoff : d;
  }

  /**
   * Reads {@code training-runner} from the {@code agentscope.training} section.
   *
   * @throws IllegalArgumentException naming the full key, the value and what is allowed
   */
  public static TrainingPolicy fromConfig(Config agentscopeTraining) {
    Config c = read("", () -> agentscopeTraining.getConfig(PATH));
    String backendName = read("backend", () -> c.getString("backend"));
    Backend backend = null;
    for (Backend b : Backend.values()) {
      if (b.configName().equals(backendName)) {
        backend = b;
      }
    }
    require(backend != null, "backend", backendName, "ray-jobs or trinity-proxy");

    Set<TriggerType> triggers = parseTriggers(c);
    CronSchedule cron = null;
    String cronText = c.hasPath("trigger.cron") ? read("trigger.cron", () -> c.getString("trigger.cron")) : "";
    if (triggers.contains(TriggerType.SCHEDULED) || !cronText.isBlank()) {
      try {
        cron = CronSchedule.parse(cronText);
      } catch (IllegalArgumentException e) {
        if (triggers.contains(TriggerType.SCHEDULED)) {
          throw new IllegalArgumentException(
              PREFIX + "trigger.cron = \"" + cronText + "\": " + e.getMessage(), e);
        }
        cron = null; // not used; the validator reports it
      }
    }
    ZoneId zone = ZoneId.of("UTC");
    if (c.hasPath("trigger.zone")) {
      String zoneText = read("trigger.zone", () -> c.getString("trigger.zone"));
      try {
        zone = ZoneId.of(zoneText.trim());
      } catch (DateTimeException e) {
        throw new IllegalArgumentException(PREFIX + "trigger.zone = \"" + zoneText
            + "\": must be a time-zone id such as UTC, Europe/Paris or Asia/Shanghai", e);
      }
    }
    String missedText = read("trigger.missed-slots", () -> c.getString("trigger.missed-slots"));
    MissedSlots missed = switch (missedText.trim().toLowerCase(Locale.ROOT)) {
      case "fire" -> MissedSlots.FIRE;
      case "skip" -> MissedSlots.SKIP;
      default -> throw new IllegalArgumentException(
          PREFIX + "trigger.missed-slots = \"" + missedText + "\": must be fire or skip");
    };

    Map<String, Object> hyper = new LinkedHashMap<>();
    double lr = read("hyperparams.learning-rate", () -> c.getDouble("hyperparams.learning-rate"));
    require(lr > 0 && Double.isFinite(lr), "hyperparams.learning-rate", lr, "a number > 0");
    hyper.put("learning-rate", lr);
    int batch = read("hyperparams.batch-size", () -> c.getInt("hyperparams.batch-size"));
    require(batch >= 1, "hyperparams.batch-size", batch, "an integer >= 1");
    hyper.put("batch-size", batch);
    int epochs = read("hyperparams.epochs", () -> c.getInt("hyperparams.epochs"));
    require(epochs >= 1, "hyperparams.epochs", epochs, "an integer >= 1");
    hyper.put("epochs", epochs);
    double warmup = read("hyperparams.warmup-ratio", () -> c.getDouble("hyperparams.warmup-ratio"));
    require(warmup >= 0 && warmup <= 1, "hyperparams.warmup-ratio", warmup, "a number in [0, 1]");
    hyper.put("warmup-ratio", warmup);
    for (Map.Entry<String, ConfigValue> e : c.getConfig("hyperparams").root().entrySet()) {
      hyper.putIfAbsent(e.getKey(), e.getValue().unwrapped());
    }

    return new TrainingPolicy(
        backend,
        read("trinity-endpoint", () -> c.getString("trinity-endpoint")),
        triggers,
        cron,
        zone,
        read("trigger.min-samples", () -> c.getInt("trigger.min-samples")),
        missed,
        read("algorithm", () -> c.getString("algorithm")).trim(),
        read("base-model", () -> c.getString("base-model")),
        hyper,
        read("min-quality", () -> c.getDouble("min-quality")),
        read("dataset-dir", () -> c.getString("dataset-dir")),
        read("checkpoint-root-dir", () -> c.getString("checkpoint-root-dir")),
        read("poll-interval", () -> c.getDuration("poll-interval")),
        read("submit-retry.min-backoff", () -> c.getDuration("submit-retry.min-backoff")),
        read("submit-retry.max-backoff", () -> c.getDuration("submit-retry.max-backoff")),
        !agentscopeTraining.hasPath("enabled") || agentscopeTraining.getBoolean("enabled"),
        c.hasPath("trinity.node-num") ? read("trinity.node-num", () -> c.getInt("trinity.node-num")) : 1,
        c.hasPath("trinity.gpu-per-node") ? read("trinity.gpu-per-node", () -> c.getInt("trinity.gpu-per-node")) : 1,
        // the sessions' setting (validated with them): the coordinator remembers used sessions this long
        agentscopeTraining.hasPath(FEEDBACK_WINDOW) ? agentscopeTraining.getDuration(FEEDBACK_WINDOW) : null);
  }

  private static final String FEEDBACK_WINDOW = "data-collector.session.feedback-window";

  /** The defaults of {@code reference.conf}. */
  public static TrainingPolicy defaults() {
    return fromConfig(ConfigFactory.defaultReference().getConfig("agentscope.training"));
  }

  private static Set<TriggerType> parseTriggers(Config c) {
    ConfigValue v = read("trigger.type", () -> c.getValue("trigger.type"));
    List<String> names = new ArrayList<>();
    if (v.valueType() == ConfigValueType.LIST) {
      for (ConfigValue item : read("trigger.type", () -> c.getList("trigger.type"))) {
        names.add(String.valueOf(item.unwrapped()));
      }
    } else if (v.valueType() == ConfigValueType.STRING) {
      for (String part : ((String) v.unwrapped()).split(",")) {
        names.add(part);
      }
    } else {
      throw new IllegalArgumentException(PREFIX + "trigger.type = " + v.render()
          + ": must be threshold, scheduled or manual; one, a list or a comma-separated string");
    }
    EnumSet<TriggerType> set = EnumSet.noneOf(TriggerType.class);
    for (String raw : names) {
      String name = raw.trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty()) {
        continue;
      }
      TriggerType found = null;
      for (TriggerType t : TriggerType.values()) {
        if (t.configName().equals(name)) {
          found = t;
        }
      }
      if (found == null) {
        throw new IllegalArgumentException(PREFIX + "trigger.type: \"" + raw.trim()
            + "\" is not allowed; allowed: threshold, scheduled, manual");
      }
      set.add(found);
    }
    require(!set.isEmpty(), "trigger.type", v.render(), "one or more of threshold, scheduled, manual");
    return set;
  }

  private static boolean positive(Duration d) {
    return d != null && !d.isNegative() && !d.isZero();
  }

  private static void require(boolean ok, String key, Object value, String allowed) {
    if (!ok) {
      throw new IllegalArgumentException(PREFIX + key + " = " + value + ": must be " + allowed);
    }
  }

  private static <T> T read(String key, Supplier<T> reader) {
    try {
      return reader.get();
    } catch (ConfigException.Missing e) {
      throw new IllegalArgumentException(PREFIX + key + ": missing (see reference.conf)", e);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(PREFIX + key + ": invalid value (" + e.getMessage() + ")", e);
    }
  }
}
