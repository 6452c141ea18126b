package io.otl.persistence.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.Ids;
import io.otl.core.Sha256;
import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.TrajectoryCompleted;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.JournalRows;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.Offset;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.ActorAttributes;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dataset export (design §6): JSON Lines files Trinity-RFT reads as they are, with a manifest.
 *
 * <p><b>Streaming.</b> Sessions are replayed one by one from the journal table ({@link JournalRows}:
 * the rows of {@code "AgentSession|<id>"} as the read journal would give them), folded with the entity's own
 * {@link AgentSession.State#apply}), converted, written and hashed; at most {@code parallelism}
 * trajectories are in memory at once. What grows with the export: the session ids (kept for the
 * manifest, about 100 bytes each, and those left out, by reason, for the job's lineage) and, for DPO only,
 * one small entry per distinct prompt (a 32-byte hash of the normalised prompt, the ids and rewards of its
 * best and worst trajectory, and the ids of its trajectories).
 *
 * <p><b>Selection.</b> Only COMPLETED sessions of the given agent are exported; other ids are
 * skipped. Then the rules of {@link ExportFilters} (sft-min-reward, min-quality, dpo-min-margin) and
 * the agent's rolled-back model versions ({@link ExportSelection}); every trajectory left out is
 * counted by reason ({@link ExportExclusions}) in the result and the manifest ({@code seen},
 * {@code exclusions}). An export that selects nothing writes no file and no manifest (an existing
 * one of that name is removed) and returns count 0 with the counts. For a time window the sessions come from {@code currentEventsByTag("trajectory")}:
 * every {@link TrajectoryCompleted} of the agent whose server time ({@code recordedAt}, the
 * session's {@code completedAt}) is in {@code [since, until)}, in journal order. The reward written
 * is the latest one (revisions included), since the whole session is replayed.
 *
 * <p><b>Reproducible.</b> Lines are in the order of the given session ids (job mode) or of
 * completion (window mode), and contain no timestamps: the same journal and inputs give a
 * byte-identical file. Only the manifest's {@code createdAt} differs between runs.
 *
 * <p><b>PII.</b> Every written line is scanned with {@code Desensitizer.builtInScanner()}; the
 * manifest reports rule names and line counts, never the matched text. A line the scan finds something in
 * has its training content desensitized by the node's rules first ({@link AsWritten}; never its
 * {@code metadata} or a number: a line whose ids or numbers hold what those rules take is left out, counted
 * by reason), and training files are deduplicated after that, as written.
 *
 * <p><b>DPO.</b> Trajectories are grouped by task ({@link TaskKey}: the client's {@code taskId},
 * else the normalised first user message); per task, chosen = the final answer of the highest
 * reward among those that may be chosen (quality ≥ min-quality, not served by a rolled-back
 * version), rejected = that of the lowest reward among the answers that say something else
 * (compared as {@link JsonlFormats#normalisePrompt} compares prompts; ties: the earlier session). A
 * task gives a line only when the two rewards differ by at least dpo-min-margin. Lines are in order of each task's
 * first appearance; the line carries the conversation before the answers ({@link JsonlFormats#dpo}).
 */
public final class DatasetExport {
  private static final Logger LOG = LoggerFactory.getLogger(DatasetExport.class);
  private static final String BLOCKING = "pekko.actor.default-blocking-io-dispatcher";

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;
  /** Finished reads of one entity (replays, the agent's model and coordinator journals): the table, directly. */
  private final JournalRows rows;
  private final int parallelism;
  private final Clock clock;
  private final ExportFilters filters;
  private final boolean allowPii;
  /** The node's desensitizing rules: a line the final scan finds something in is desensitized by them first. */
  private final Desensitizer rules;

  /** With the filters of the system's {@code agentscope.training.training-runner} (else the defaults). */
  public DatasetExport(ActorSystem<?> system) {
    this(system, 4, Clock.systemUTC());
  }

  public DatasetExport(ActorSystem<?> system, int parallelism, Clock clock) {
    this(system, parallelism, clock, ExportFilters.fromRoot(system.settings().config()));
  }

  /** With the filters the node parsed at start-up. */
  public DatasetExport(ActorSystem<?> system, ExportFilters filters) {
    this(system, 4, Clock.systemUTC(), filters);
  }

  public DatasetExport(ActorSystem<?> system, int parallelism, Clock clock, ExportFilters filters) {
    this(system, parallelism, clock, filters, false);
  }

  private DatasetExport(ActorSystem<?> system, int parallelism, Clock clock, ExportFilters filters, boolean allowPii) {
    if (parallelism < 1) throw new IllegalArgumentException("parallelism must be >= 1");
    this.filters = java.util.Objects.requireNonNull(filters, "filters");
    this.system = system;
    this.journal = PersistenceQuery.get(system.classicSystem())
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    this.rows = JournalRows.get(system);
    this.parallelism = parallelism;
    this.clock = clock;
    this.allowPii = allowPii;
    this.rules = nodeRules(system.settings().config());
  }

  private static Desensitizer nodeRules(com.typesafe.config.Config config) {
    return config.hasPath("agentscope.training.data-collector")
        ? SessionSettings.fromConfig(config.getConfig("agentscope.training")).desensitizer()
        : Desensitizer.builtInScanner();
  }

  /**
   * The same export, keeping the file even when the final scan finds PII (the command line's
   * {@code --allow-pii}). By default such a file is deleted and only the manifest, with the finding
   * counts, is written.
   */
  public DatasetExport allowingPii() {
    return new DatasetExport(system, parallelism, clock, filters, true);
  }

  /**
   * Exports the given sessions (a training job's dataset), in the given order, to
   * {@code <dir>/<name>.jsonl} and {@code <dir>/<name>.manifest.json}.
   */
  public CompletionStage<ExportResult> forSessions(
      String agentId, List<String> sessionIds, ExportFormat format, Path dir, String name) {
    checkAgent(agentId);
    List<String> ids = List.copyOf(new LinkedHashSet<>(sessionIds));
    checkName(name);
    return export(agentId, Source.from(ids), format, dir.resolve(name + ".jsonl"), dir.resolve(name + ".manifest.json"),
        new ExportExclusions(), null, null, false);
  }

  /** A job's held-out set ({@link JobDatasetExport}), to the files {@link JobDatasetFiles} names. */
  CompletionStage<ExportResult> forEval(String agentId, List<String> sessionIds, Path dir, String jobId) {
    checkAgent(agentId);
    checkName(jobId);
    List<String> ids = List.copyOf(new LinkedHashSet<>(sessionIds));
    return export(agentId, Source.from(ids), ExportFormat.RL, JobDatasetFiles.evalFile(dir, jobId),
        JobDatasetFiles.evalManifest(dir, jobId), new ExportExclusions(), null, null, false);
  }

  /**
   * A continual job's training file ({@link JobDatasetExport}): like {@link #forSessions}, with the
   * counts of trajectories already set aside ({@code upfront}), exact and near duplicates dropped
   * (SFT and RL) and the lineage written into the manifest; {@code referencesMustPass}: RL tasks only
   * with a reference answer that passed sft-min-reward (PPO/GRPO, {@link ExportSelection}).
   */
  CompletionStage<ExportResult> forJob(String agentId, List<String> sessionIds, ExportFormat format, Path dir,
      String jobId, ExportExclusions upfront, io.otl.core.coordinator.DatasetLineage lineage,
      boolean referencesMustPass) {
    checkAgent(agentId);
    checkName(jobId);
    List<String> ids = List.copyOf(new LinkedHashSet<>(sessionIds));
    return export(agentId, Source.from(ids), format, JobDatasetFiles.trainFile(dir, jobId),
        JobDatasetFiles.trainManifest(dir, jobId), upfront, new Dedup(), lineage, referencesMustPass);
  }

  ActorSystem<?> system() {
    return system;
  }

  JournalRows rows() {
    return rows;
  }

  /**
   * Exports the agent's sessions completed in {@code [since, until)} (either may be null: open),
   * in completion order.
   */
  public CompletionStage<ExportResult> forWindow(
      String agentId, Instant since, Instant until, ExportFormat format, Path dir, String name) {
    checkAgent(agentId);
    if (since != null && until != null && !since.isBefore(until)) {
      throw new IllegalArgumentException("since (" + since + ") must be before until (" + until + ")");
    }
    checkName(name);
    return export(agentId, completedSessions(agentId, since, until), format, dir.resolve(name + ".jsonl"),
        dir.resolve(name + ".manifest.json"), new ExportExclusions(), null, null, false);
  }

  /** The ids of the agent's sessions completed in {@code [since, until)}, in journal order. */
  public Source<String, NotUsed> completedSessions(String agentId, Instant since, Instant until) {
    return journal.currentEventsByTag(AgentSession.TRAJECTORY_TAG, Offset.sequence(0L))
        .filter(env -> env.event() instanceof TrajectoryCompleted c && agentId.equals(c.agentId())
            && (since == null || !c.recordedAt().isBefore(since))
            && (until == null || c.recordedAt().isBefore(until)))
        .map(env -> sessionId(env.persistenceId()));
  }

  /** One session replayed from the journal with the entity's event handler. */
  public CompletionStage<Trajectory> replay(String sessionId) {
    return rows.events(AgentSession.persistenceId(sessionId).id(), 1)
        .map(EventEnvelope::event)
        .runWith(Sink.fold(new Trajectory.Builder(sessionId), (b, e) -> b.add((AgentSession.Event) e)), system)
        .thenApply(Trajectory.Builder::build);
  }

  // ------------------------------------------------------------------------------------------

  private CompletionStage<ExportResult> export(String agentId, Source<String, NotUsed> ids, ExportFormat format,
      Path file, Path manifest, ExportExclusions exclusions, Dedup dedup,
      io.otl.core.coordinator.DatasetLineage lineage, boolean referencesMustPass) {
    JsonlFile out;
    try {
      out = new JsonlFile(file, rules);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    Skips skips = new Skips(agentId);
    CompletionStage<Object> written = RolledBackVersions.of(system, rows, agentId).thenCompose(rolledBack -> {
      ExportSelection sel = new ExportSelection(agentId, filters, rolledBack, exclusions, referencesMustPass);
      return switch (format) {
        case SFT -> lines(ids, sel, sel::sft, JsonlFormats::sft, out, skips, dedup, exclusions);
        case RL -> lines(ids, sel, sel::rl, JsonlFormats::rl, out, skips, dedup, exclusions);
        case DPO -> dpo(ids, sel, out, skips);
      };
    });
    return written
        .thenApplyAsync(done -> {
          Map<String, Integer> skipped = skips.counts();
          if (out.count() == 0) {
            out.close();
            removeStale(file, manifest);
            return new ExportResult(file.toString(), 0, "", List.of(), List.of(), format.wireName(), null,
                exclusions.seenCount(), exclusions.byReason(), skipped, false, 0,
                skips.withSkippedSessions(exclusions.sessionsByReason()));
          }
          JsonlFile.Written w = out.commit(allowPii);
          if (out.desensitized() > 0) {
            LOG.info("export of agent {} ({}): {} line(s) desensitized as written: stored raw under an earlier build's"
                + " rules", io.otl.core.Ids.shown(agentId), format.wireName(), out.desensitized());
          }
          boolean kept = allowPii || w.piiFindings().isEmpty();
          try {
            writeManifest(manifest, agentId, format, w, exclusions, skipped, kept, lineage, out.desensitized());
          } catch (RuntimeException e) {
            // A file without its manifest (ids, count, SHA-256) is no export: it stayed after "the export
            // failed" (a full disk, a folder of the manifest's name; trial t73), and a reader took it for one.
            FileProblems.deleteQuietly(w.path());
            // Nor may an older manifest stay: it described the file just replaced (review t75).
            if (java.nio.file.Files.isRegularFile(manifest)) FileProblems.deleteQuietly(manifest);
            throw e;
          }
          return new ExportResult(w.path().toString(), w.count(), w.sha256(), w.sessionIds(), w.piiFindings(),
              format.wireName(), manifest.toString(), exclusions.seenCount(), exclusions.byReason(), skipped, kept,
              out.desensitized(), skips.withSkippedSessions(exclusions.sessionsByReason()));
        }, system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()))
        .whenComplete((r, failure) -> {
          if (failure != null) out.close();
        });
  }

  /** SFT and RL: one line per exported trajectory. */
  private CompletionStage<Object> lines(Source<String, NotUsed> ids, ExportSelection sel,
      java.util.function.Predicate<Trajectory> rules, java.util.function.Function<Trajectory, Optional<String>> convert,
      JsonlFile out, Skips skips, Dedup dedup, ExportExclusions exclusions) {
    return ids.mapAsync(parallelism, id -> skips.replay(id, this::replay))
        .filter(Optional::isPresent)
        .map(Optional::get)
        .filter(sel::completed)
        .filter(rules::test)
        .runWith(Sink.<Trajectory>foreach(t -> skips.convert(t, convert).ifPresent(line -> {
                  // Deduplicated as written: two lines an earlier build stored raw, differing only in what the
                  // node's rules take, are one line once desensitized (review t170).
                  AsWritten checked = out.check(line);
                  Optional<String> dropped = !checked.written() ? Optional.of(checked.leftOut())
                      : dedup == null ? Optional.empty() : dedup.check(checked.line());
                  if (dropped.isPresent()) {
                    exclusions.exclude(dropped.get(), t.sessionId());
                  } else {
                    out.write(checked, List.of(t.sessionId()));
                  }
                }))
            .withAttributes(ActorAttributes.dispatcher(BLOCKING)), system)
        .thenApply(done -> done);
  }

  /** DPO: pass 1 keeps the best and worst trajectory per task; pass 2 replays just those. */
  private CompletionStage<Object> dpo(Source<String, NotUsed> ids, ExportSelection sel, JsonlFile out, Skips skips) {
    return ids.mapAsync(parallelism, id -> skips.replay(id, this::replay))
        .filter(Optional::isPresent)
        .map(Optional::get)
        .filter(t -> sel.completed(t) && sel.dpo(t))
        .runWith(Sink.fold(new LinkedHashMap<String, Pair>(), (pairs, t) -> {
          String key = TaskKey.of(t).orElseThrow();
          boolean chosable = sel.canBeChosen(t);
          String answer = Sha256.hex(JsonlFormats.normalisePrompt(t.finalAnswer().orElseThrow()));
          pairs.compute(key, (k, p) -> (p == null ? new Pair() : p).with(t, chosable, answer));
          return pairs;
        }), system)
        .thenCompose(pairs -> {
          List<Pair> usable = new ArrayList<>();
          for (Pair p : pairs.values()) {
            if (p.size == 1) {
              sel.exclude(ExportExclusions.DPO_SINGLE, p.ids);
            } else if (p.bestId == null) {
              sel.exclude(ExportExclusions.DPO_NO_CHOSEN, p.ids);
            } else if (p.rejectedId() == null) {
              sel.exclude(ExportExclusions.DPO_SAME_ANSWER, p.ids);
            } else if (p.best - p.rejected() < sel.dpoMinMargin()) {
              sel.exclude(ExportExclusions.DPO_BELOW_MARGIN, p.ids);
            } else {
              sel.exclude(ExportExclusions.DPO_NOT_BEST_OR_WORST, p.ids.stream()
                  .filter(id -> !id.equals(p.bestId) && !id.equals(p.rejectedId())).toList());
              usable.add(p);
            }
          }
          return Source.from(usable)
              .mapAsync(parallelism, p -> replay(p.bestId).thenCombine(replay(p.rejectedId()), (c, r) -> List.of(c, r)))
              .runWith(Sink.<List<Trajectory>>foreach(cr -> {
                Trajectory chosen = cr.get(0);
                Trajectory rejected = cr.get(1);
                skips.convert(chosen, c -> Optional.of(JsonlFormats.dpo(c, rejected)))
                    .flatMap(line -> out.write(line, List.of(chosen.sessionId(), rejected.sessionId())))
                    .ifPresent(leftOut -> sel.exclude(leftOut, List.of(chosen.sessionId(), rejected.sessionId())));
              }).withAttributes(ActorAttributes.dispatcher(BLOCKING)), system)
              .thenApply(done -> (Object) done);
        });
  }

  /**
   * One task's answers: how many, the best that may be chosen, the worst of all, and the worst
   * whose answer differs from the worst's (ids, rewards and answer hashes only). The rejected side
   * is the worst answer that differs from the chosen one: the worst itself, or, when it says what
   * the chosen says, the other: a task answered alike twice, rewarded differently for other
   * reasons (a timeout, a user who left), would otherwise give a pair with chosen = rejected, which
   * teaches no preference.
   */
  private static final class Pair {
    int size;
    /** Every trajectory of the task, so the ones left out are named with their reason (lineage). */
    final List<String> ids = new ArrayList<>();
    String bestId;
    double best;
    String bestAnswer;
    String worstId;
    double worst;
    String worstAnswer;
    String otherId;
    double other;

    Pair with(Trajectory t, boolean chosable, String answer) {
      size++;
      ids.add(t.sessionId());
      double r = t.reward();
      if (chosable && (bestId == null || r > best)) {
        best = r;
        bestId = t.sessionId();
        bestAnswer = answer;
      }
      if (worstId == null || r < worst) {
        // The old worst is the lowest of everything before, so the lowest that differs from the new one.
        if (worstId != null && !answer.equals(worstAnswer)) {
          otherId = worstId;
          other = worst;
        }
        worst = r;
        worstId = t.sessionId();
        worstAnswer = answer;
      } else if (!answer.equals(worstAnswer) && (otherId == null || r < other)) {
        other = r;
        otherId = t.sessionId();
      }
      return this;
    }

    String rejectedId() {
      return bestAnswer.equals(worstAnswer) ? otherId : worstId;
    }

    double rejected() {
      return bestAnswer.equals(worstAnswer) ? other : worst;
    }
  }

  /** An export that selects nothing leaves no file of its name behind, not even an older one. */
  private static void removeStale(Path file, Path manifest) {
    try {
      Files.deleteIfExists(file);
      Files.deleteIfExists(manifest);
    } catch (IOException e) {
      throw new UncheckedIOException("removing the stale " + file + " failed: " + e.getMessage(), e);
    }
  }

  private void writeManifest(Path manifest, String agentId, ExportFormat format, JsonlFile.Written w,
      ExportExclusions exclusions, Map<String, Integer> skipped, boolean fileWritten,
      io.otl.core.coordinator.DatasetLineage lineage, int desensitized) {
    ObjectNode m = JsonlFormats.JSON.createObjectNode();
    m.put("agentId", agentId);
    m.put("format", format.wireName());
    m.put("count", w.count());
    m.put("sha256", w.sha256());
    w.sessionIds().forEach(m.putArray("sessionIds")::add);
    m.put("createdAt", clock.instant().toString());
    w.piiFindings().forEach(m.putArray("piiFindings")::add);
    m.put("seen", exclusions.seenCount());
    ObjectNode byReason = m.putObject("exclusions");
    new java.util.TreeMap<>(exclusions.byReason()).forEach(byReason::put);
    ObjectNode s = m.putObject("skipped");
    skipped.forEach(s::put);
    if (!fileWritten) m.put("fileWritten", false);
    // Lines the journal holds raw (an earlier build's rules) and the file holds desensitized: the file
    // then differs from what audit and GET /v1/sessions show, which the export command says (trial t167).
    if (desensitized > 0) m.put("desensitizedAsWritten", desensitized);
    if (lineage != null) m.set("lineage", JsonlFormats.JSON.valueToTree(lineage));
    Path tmp = manifest.resolveSibling(manifest.getFileName() + ".tmp");
    try {
      Files.writeString(tmp, JsonlFormats.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m) + "\n");
      Files.move(tmp, manifest, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      FileProblems.deleteQuietly(tmp);
      throw new UncheckedIOException("writing " + manifest + " failed: " + e.getMessage(), e);
    }
  }

  private static void checkAgent(String agentId) {
    String problem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (problem != null) throw new IllegalArgumentException(problem);
  }

  private static void checkName(String name) {
    String problem = Ids.problem("export name", name, 200);
    if (problem != null) throw new IllegalArgumentException(problem);
  }

  static String sessionId(String persistenceId) {
    int bar = persistenceId.indexOf('|');
    return bar < 0 ? persistenceId : persistenceId.substring(bar + 1);
  }
}
