package io.otl.persistence.export;

import io.otl.core.coordinator.DatasetLineage;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A training job's datasets with continual training (issue #16):
 *
 * <ol>
 *   <li>the job's new trajectories are split: those in the agent's held-out set ({@link HeldOut},
 *       {@code eval-fraction}) go to the job's eval file (RL task shape: prompt and recorded
 *       answer, what an evaluation needs), never to the training file ({@link JobDatasetFiles}:
 *       {@code <dir>/<jobId>/test.jsonl} beside {@code train.jsonl});
 *   <li>a replay sample of trajectories earlier jobs trained on joins the rest ({@link
 *       ReplaySampler}: {@code replay-fraction} of the dataset, weighted by age with {@code
 *       data-half-life}, seeded by the job id);
 *   <li>the training file drops exact and near duplicates ({@link Dedup}), counted by reason;
 *   <li>the start checkpoint: with {@code start-from = stable}, the current stable version's
 *       checkpoint when a job trained it; else (no stable, or one registered by hand) the base
 *       model, and the lineage says so.
 * </ol>
 *
 * Everything is read from the journal, so a repeated export of the same job writes the same files.
 */
public final class JobDatasetExport {
  private static final Logger LOG = LoggerFactory.getLogger(JobDatasetExport.class);

  /** The training file, the evaluation file (null when no trajectory was held out) and the lineage. */
  public record Result(ExportResult train, ExportResult eval, DatasetLineage lineage) {}

  private final DatasetExport export;
  private final ContinualSettings settings;

  public JobDatasetExport(DatasetExport export, ContinualSettings settings) {
    this.export = java.util.Objects.requireNonNull(export, "export");
    this.settings = java.util.Objects.requireNonNull(settings, "settings");
  }

  /**
   * A job's files for its training {@code algorithm} (design §5): its format, and for ppo and grpo
   * only tasks whose recorded answer passed sft-min-reward, since the rendered workflow scores a
   * rollout against that answer alone (distillation needs only the prompts: it keeps them all).
   */
  public CompletionStage<Result> export(String agentId, String jobId, List<String> sessionIds, String algorithm,
      Path dir) {
    String a = algorithm == null ? "" : algorithm.trim().toLowerCase(java.util.Locale.ROOT);
    return export(agentId, jobId, sessionIds, ExportFormat.forAlgorithm(algorithm), dir,
        a.equals("ppo") || a.equals("grpo"));
  }

  public CompletionStage<Result> export(
      String agentId, String jobId, List<String> sessionIds, ExportFormat format, Path dir) {
    return export(agentId, jobId, sessionIds, format, dir, false);
  }

  private CompletionStage<Result> export(String agentId, String jobId, List<String> sessionIds, ExportFormat format,
      Path dir, boolean referencesMustPass) {
    List<String> ids = List.copyOf(new LinkedHashSet<>(sessionIds));
    List<String> eval = new ArrayList<>();
    List<String> fresh = new ArrayList<>();
    for (String id : ids) (HeldOut.isHeldOut(id, settings.evalFraction()) ? eval : fresh).add(id);
    Set<String> taken = new HashSet<>(ids);
    var history = TrainingHistory.trainedBefore(export.system(), export.rows(), agentId, jobId);
    var stable = settings.startFrom() == ContinualSettings.StartFrom.STABLE
        ? TrainingHistory.stable(export.system(), export.rows(), agentId)
        : CompletableFuture.completedFuture(Optional.<TrainingHistory.Stable>empty());
    return history.thenCombine(stable, (before, st) -> new Object[] {before, st}).thenCompose(pair -> {
      @SuppressWarnings("unchecked")
      List<ReplaySampler.Candidate> before = (List<ReplaySampler.Candidate>) pair[0];
      @SuppressWarnings("unchecked")
      Optional<TrainingHistory.Stable> st = (Optional<TrainingHistory.Stable>) pair[1];
      List<ReplaySampler.Candidate> candidates = before.stream()
          .filter(c -> !taken.contains(c.sessionId()) && !HeldOut.isHeldOut(c.sessionId(), settings.evalFraction()))
          .toList();
      int k = ReplaySampler.count(fresh.size(), settings.replayFraction(), candidates.size());
      // Ages from the newest earlier export: a journal fact, so a repeated export samples the same.
      Instant now = candidates.stream().map(ReplaySampler.Candidate::at).max(Instant::compareTo).orElse(Instant.EPOCH);
      List<String> replay = ReplaySampler.sample(candidates, k, now, settings.dataHalfLife(), jobId).stream()
          .map(ReplaySampler.Candidate::sessionId).toList();
      CompletionStage<ExportResult> evalStage = eval.isEmpty()
          ? CompletableFuture.completedFuture(null)
          : export.forEval(agentId, eval, dir, jobId);
      return evalStage.thenCompose(evalResult -> {
        boolean evalWritten = evalResult != null && evalResult.count() > 0 && evalResult.fileWritten();
        DatasetLineage lineage = lineage(st, replay, evalWritten ? evalResult : null);
        ExportExclusions upfront = new ExportExclusions();
        upfront.excludeUpfront(ExportExclusions.HELD_OUT, eval);
        List<String> train = new ArrayList<>(fresh);
        train.addAll(replay);
        return export.forJob(agentId, train, format, dir, jobId, upfront, lineage, referencesMustPass).thenApply(r -> {
          try {
            if (r.fileWritten()) {
              JobDatasetFiles.writeCard(dir, jobId, r.sha256(), evalWritten ? evalResult.sha256() : null);
            } else if (evalWritten) {
              // No training rows (the job fails its pre-flight): the held-out file stays, with a card of its own.
              JobDatasetFiles.writeEvalOnlyCard(dir, jobId, evalResult.sha256());
            }
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot write the dataset card of " + jobId, e);
          }
          LOG.info("agent {}: job {} dataset: {} lines ({} new, {} replayed, {} held out for eval), start from {}",
              agentId, jobId, r.count(), fresh.size(), replay.size(), eval.size(),
              lineage.startVersion() == null ? "base model" : lineage.startVersion());
          return new Result(r, evalWritten ? evalResult : null, lineage);
        });
      });
    });
  }

  private DatasetLineage lineage(Optional<TrainingHistory.Stable> stable, List<String> replay, ExportResult eval) {
    String from;
    String version = null;
    String checkpoint = null;
    String note;
    if (settings.startFrom() == ContinualSettings.StartFrom.BASE) {
      from = "base";
      note = "start-from = base: starting from the base model";
    } else if (stable.isEmpty()) {
      from = "base";
      // "No stable version" read as a contradiction: GET /v1/models answers v0, the base model, as the stable.
      note = "start-from = stable, but no trained version of the agent is stable yet (only v0, the base model):"
          + " falling back to the base model";
    } else if (stable.get().sourceJobId() == null) {
      from = "base";
      note = "start-from = stable, but stable " + stable.get().version()
          + " was not trained by a job (no checkpoint of ours): falling back to the base model";
    } else {
      from = "stable";
      version = stable.get().version();
      checkpoint = stable.get().artifact();
      note = "continuing from stable " + version + " (trained by " + stable.get().sourceJobId() + ")";
    }
    return new DatasetLineage(from, version, checkpoint, note, replay.size(), replay,
        eval == null ? null : eval.path(), eval == null ? 0 : eval.count(), eval == null ? null : eval.sha256(),
        eval == null ? List.of() : eval.sessionIds());
  }
}
