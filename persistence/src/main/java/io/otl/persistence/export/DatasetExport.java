package io.otl.persistence.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.Ids;
import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.TrajectoryCompleted;
import io.otl.core.session.SessionModel.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
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

/**
 * Dataset export (DESIGN §6): JSON Lines files Trinity-RFT reads as they are, with a manifest.
 *
 * <p><b>Streaming.</b> Sessions are replayed one by one from the journal
 * ({@code currentEventsByPersistenceId("AgentSession|<id>")}, folded with the entity's own
 * {@link AgentSession.State#apply}), converted, written and hashed; at most {@code parallelism}
 * trajectories are in memory at once. What grows with the export: the session ids (kept for the
 * manifest, about 100 bytes each) and, for DPO only, one small entry per distinct prompt (a 32-byte
 * hash of the normalised prompt and the ids and rewards of its best and worst trajectory).
 *
 * <p><b>Selection.</b> Only COMPLETED sessions of the given agent are exported; other ids are
 * skipped. For a time window the sessions come from {@code currentEventsByTag("trajectory")}:
 * every {@link TrajectoryCompleted} of the agent whose server time ({@code recordedAt}, the
 * session's {@code completedAt}) is in {@code [since, until)}, in journal order. The reward written
 * is the latest one (revisions included), since the whole session is replayed.
 *
 * <p><b>Reproducible.</b> Lines are in the order of the given session ids (job mode) or of
 * completion (window mode), and contain no timestamps: the same journal and inputs give a
 * byte-identical file. Only the manifest's {@code createdAt} differs between runs.
 *
 * <p><b>PII.</b> Every written line is scanned with {@code Desensitizer.builtInScanner()}; the
 * manifest reports rule names and line counts, never the matched text.
 *
 * <p><b>DPO.</b> Trajectories are grouped by their first user message (normalised, see
 * {@link JsonlFormats#normalisePrompt}); per prompt, chosen = the final assistant answer of the
 * highest reward, rejected = that of the lowest (ties: the earlier session). Prompts whose
 * trajectories all have the same reward (or only one trajectory) give no line. Lines are in order
 * of each prompt's first appearance; the prompt written is the chosen trajectory's first user
 * message as recorded.
 */
public final class DatasetExport {
  private static final String BLOCKING = "pekko.actor.default-blocking-io-dispatcher";

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;
  private final int parallelism;
  private final Clock clock;
  private final boolean allowPii;

  public DatasetExport(ActorSystem<?> system) {
    this(system, 4, Clock.systemUTC());
  }

  public DatasetExport(ActorSystem<?> system, int parallelism, Clock clock) {
    this(system, parallelism, clock, false);
  }

  private DatasetExport(ActorSystem<?> system, int parallelism, Clock clock, boolean allowPii) {
    if (parallelism < 1) throw new IllegalArgumentException("parallelism must be >= 1");
    this.system = system;
    this.journal = PersistenceQuery.get(system.classicSystem())
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    this.parallelism = parallelism;
    this.clock = clock;
    this.allowPii = allowPii;
  }

  /**
   * The same export, keeping the file even when the final scan finds PII (the command line's
   * {@code --allow-pii}). By default such a file is deleted and only the manifest, with the finding
   * counts, is written.
   */
  public DatasetExport allowingPii() {
    return new DatasetExport(system, parallelism, clock, true);
  }

  /**
   * Exports the given sessions (a training job's dataset), in the given order, to
   * {@code <dir>/<name>.jsonl} and {@code <dir>/<name>.manifest.json}.
   */
  public CompletionStage<ExportResult> forSessions(
      String agentId, List<String> sessionIds, ExportFormat format, Path dir, String name) {
    checkAgent(agentId);
    List<String> ids = List.copyOf(new LinkedHashSet<>(sessionIds));
    return export(agentId, Source.from(ids), format, dir, name);
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
    return export(agentId, completedSessions(agentId, since, until), format, dir, name);
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
    return journal.currentEventsByPersistenceId(AgentSession.persistenceId(sessionId).id(), 0L, Long.MAX_VALUE)
        .map(EventEnvelope::event)
        .runWith(Sink.fold(new Trajectory.Builder(sessionId), (b, e) -> b.add((AgentSession.Event) e)), system)
        .thenApply(Trajectory.Builder::build);
  }

  // ------------------------------------------------------------------------------------------

  private CompletionStage<ExportResult> export(
      String agentId, Source<String, NotUsed> ids, ExportFormat format, Path dir, String name) {
    checkName(name);
    Path file = dir.resolve(name + ".jsonl");
    Path manifest = dir.resolve(name + ".manifest.json");
    JsonlFile out;
    try {
      out = new JsonlFile(file);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    Source<String, NotUsed> selected = ids;
    Skips skips = new Skips(agentId);
    CompletionStage<?> written = switch (format) {
      case SFT -> lines(agentId, selected, JsonlFormats::sft, out, skips);
      case RL -> lines(agentId, selected, JsonlFormats::rl, out, skips);
      case DPO -> dpo(agentId, selected, out, skips);
    };
    return written
        .thenApplyAsync(done -> {
          JsonlFile.Written w = out.commit(allowPii);
          boolean kept = allowPii || w.piiFindings().isEmpty();
          Map<String, Integer> skipped = skips.counts();
          writeManifest(manifest, agentId, format, w, skipped, kept);
          return new ExportResult(w.path().toString(), w.count(), w.sha256(), w.sessionIds(), w.piiFindings(),
              format.wireName(), manifest.toString(), skipped, kept);
        }, system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()))
        .whenComplete((r, failure) -> {
          if (failure != null) out.close();
        });
  }

  /** SFT and RL: one line per exported trajectory. */
  private CompletionStage<?> lines(String agentId, Source<String, NotUsed> ids,
      java.util.function.Function<Trajectory, Optional<String>> convert, JsonlFile out, Skips skips) {
    return ids.mapAsync(parallelism, id -> skips.replay(id, this::replay))
        .filter(Optional::isPresent)
        .map(Optional::get)
        .filter(t -> eligible(t, agentId))
        .runWith(Sink.<Trajectory>foreach(t -> skips.convert(t, convert)
                .ifPresent(line -> out.write(line, List.of(t.sessionId()))))
            .withAttributes(ActorAttributes.dispatcher(BLOCKING)), system);
  }

  /** DPO: pass 1 keeps the best and worst trajectory per prompt; pass 2 replays just those. */
  private CompletionStage<?> dpo(String agentId, Source<String, NotUsed> ids, JsonlFile out, Skips skips) {
    return ids.mapAsync(parallelism, id -> skips.replay(id, this::replay))
        .filter(Optional::isPresent)
        .map(Optional::get)
        .filter(t -> eligible(t, agentId) && t.prompt().isPresent() && t.finalAnswer().isPresent())
        .runWith(Sink.fold(new LinkedHashMap<String, Pair>(), (pairs, t) -> {
          pairs.compute(promptKey(t.prompt().get()), (k, p) -> p == null ? Pair.of(t) : p.with(t));
          return pairs;
        }), system)
        .thenCompose(pairs -> Source.from(new ArrayList<>(pairs.values()))
            .filter(Pair::differs)
            .mapAsync(parallelism, p -> replay(p.bestId).thenCombine(replay(p.worstId), (c, r) -> List.of(c, r)))
            .runWith(Sink.<List<Trajectory>>foreach(cr -> {
              Trajectory chosen = cr.get(0);
              Trajectory rejected = cr.get(1);
              skips.convert(chosen, c -> Optional.of(JsonlFormats.dpo(c.prompt().orElseThrow().strip(),
                      c.finalAnswer().orElseThrow(), rejected.finalAnswer().orElseThrow())))
                  .ifPresent(line -> out.write(line, List.of(chosen.sessionId(), rejected.sessionId())));
            }).withAttributes(ActorAttributes.dispatcher(BLOCKING)), system));
  }

  /** Best and worst trajectory of one prompt: ids and rewards only. */
  private static final class Pair {
    String bestId;
    double best;
    String worstId;
    double worst;

    static Pair of(Trajectory t) {
      Pair p = new Pair();
      p.bestId = p.worstId = t.sessionId();
      p.best = p.worst = t.reward();
      return p;
    }

    Pair with(Trajectory t) {
      if (t.reward() > best) {
        best = t.reward();
        bestId = t.sessionId();
      }
      if (t.reward() < worst) {
        worst = t.reward();
        worstId = t.sessionId();
      }
      return this;
    }

    boolean differs() {
      return best > worst;
    }
  }

  private static boolean eligible(Trajectory t, String agentId) {
    return t.state().status() == Status.COMPLETED && agentId.equals(t.state().agentId());
  }

  private static String promptKey(String prompt) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256")
          .digest(JsonlFormats.normalisePrompt(prompt).getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(h);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private void writeManifest(Path manifest, String agentId, ExportFormat format, JsonlFile.Written w,
      Map<String, Integer> skipped, boolean fileWritten) {
    ObjectNode m = JsonlFormats.JSON.createObjectNode();
    m.put("agentId", agentId);
    m.put("format", format.wireName());
    m.put("count", w.count());
    m.put("sha256", w.sha256());
    w.sessionIds().forEach(m.putArray("sessionIds")::add);
    m.put("createdAt", clock.instant().toString());
    w.piiFindings().forEach(m.putArray("piiFindings")::add);
    ObjectNode s = m.putObject("skipped");
    skipped.forEach(s::put);
    if (!fileWritten) m.put("fileWritten", false);
    Path tmp = manifest.resolveSibling(manifest.getFileName() + ".tmp");
    try {
      Files.writeString(tmp, JsonlFormats.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m) + "\n");
      Files.move(tmp, manifest, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
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
