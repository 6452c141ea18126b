package io.otl.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.coordinator.TrainingCoordinator;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The journal read for audits (design §1, §7.1 "audit", §7.4): an entity's ordered events, paged,
 * its state as of a time, and lineage. Read-only: implementations never write and never address
 * the live entities. Implemented in the persistence module ({@code io.otl.persistence.audit.AuditReader});
 * the HTTP edge and the command line see only this interface.
 *
 * <p>Every stage fails with {@link NotFound} for an unknown entity (or a time before it existed)
 * and with {@link IllegalArgumentException} for an invalid id.
 */
public interface AuditLog {

  /** Largest page. */
  int MAX_LIMIT = 1000;

  /** The audited kinds; {@code wire} is the name in URLs and on the command line. */
  enum Kind {
    SESSION("session"),
    COORDINATOR("coordinator"),
    MODEL("model"),
    JOB("job");

    private final String wire;

    Kind(String wire) {
      this.wire = wire;
    }

    public String wire() {
      return wire;
    }

    public static Optional<Kind> parse(String name) {
      if (name == null) return Optional.empty();
      String n = name.toLowerCase(Locale.ROOT);
      for (Kind k : values()) if (k.wire.equals(n)) return Optional.of(k);
      return Optional.empty();
    }

    /** "session, coordinator, model, job". */
    public static String allowed() {
      return String.join(", ", List.of(SESSION.wire, COORDINATOR.wire, MODEL.wire, JOB.wire));
    }
  }

  /**
   * One event of the journal.
   *
   * @param seqNr its sequence number in the entity's journal (for a job: in its coordinator's)
   * @param at the event's own {@code at} (for a session event: when it happened, as the client
   *     said), else the journal's write time
   * @param type the event class's simple name, e.g. {@code VersionRolledBack}
   * @param event the event as JSON (ISO-8601 dates)
   */
  record Entry(long seqNr, Instant at, String type, JsonNode event) {}

  /**
   * @param next the cursor of the following page (the last seqNr of this one), null at the end
   */
  record Page(String kind, String id, List<Entry> events, Long next) {}

  /**
   * Up to {@code limit} events after {@code afterSeqNr} (0 = from the start), oldest first.
   *
   * @param until when not null, only events the system knew at that time (see {@link
   *     #stateAsOf}); the page ends there
   */
  CompletionStage<Page> page(Kind kind, String id, long afterSeqNr, int limit, Instant until);

  default CompletionStage<Page> page(Kind kind, String id, long afterSeqNr, int limit) {
    return page(kind, id, afterSeqNr, limit, null);
  }

  /**
   * The entity's state as of {@code asOf}, replayed from its first event with the entity's own
   * pure event handler, as the JSON-able view its GET route answers with (session: the session
   * shape; coordinator: {@code io.otl.wire.Views.coordinator} (wire-json); model: {@code ModelsView}; job: the job shape).
   * Fails with {@link NotFound} when the entity did not exist yet at {@code asOf}.
   */
  CompletionStage<Object> stateAsOf(Kind kind, String id, Instant asOf);

  /** Lineage of the versions of {@code agentId} ({@code version} null: all of them). */
  CompletionStage<ModelLineage> modelLineage(String agentId, String version);

  /** Which jobs took this session, and the model versions they produced. */
  CompletionStage<SessionLineage> sessionLineage(String sessionId);

  /** What a job trained on and what it produced. */
  CompletionStage<JobLineage> jobLineage(String jobId);

  /**
   * @param requestedSessionIds the trajectories the job took from the pool (JobRequested)
   * @param dataset the exported dataset (DatasetExported; its {@code sessionIds} are the
   *     trajectories actually written), null before export
   * @param candidateVersion the version the job produced, null if none
   */
  record JobLineage(
      String jobId,
      String agentId,
      TrainingCoordinator.JobStatus status,
      Instant requestedAt,
      List<String> requestedSessionIds,
      io.otl.core.coordinator.DatasetManifest dataset,
      String candidateVersion) {}

  /**
   * @param sourceJobId the job named by VersionRegistered, null for a version registered by hand
   * @param job that job's lineage, null when there is no job or its coordinator has no record of it
   */
  record VersionLineage(String version, String state, boolean manual, String artifact, String sourceJobId,
      JobLineage job) {}

  record ModelLineage(String agentId, List<VersionLineage> versions) {}

  /**
   * @param inDataset the session is in the exported dataset (false: requested, but the export left
   *     it out, or no export yet)
   * @param versions the model versions registered from this job
   * @param replayed the job did not take the session from the pool: its export replayed it from an
   *     earlier job's data (continual training), so it trained this job's model too
   * @param heldOutForEval the job held the session out as its evaluation set: never trained on, but
   *     the candidate was benchmarked on it
   * @param excludedFor why the job's export left the session out, by its reason in the dataset's {@code
   *     exclusions} ({@code held-out-for-eval}, {@code duplicate-exact}, {@code below-sft-min-reward} …); null
   *     when it is in the dataset, no dataset is exported yet, or the export recorded no per-session reason
   *     (manifests of earlier builds)
   */
  record SessionJob(String jobId, TrainingCoordinator.JobStatus status, boolean inDataset,
      String candidateVersion, List<String> versions, boolean replayed, boolean heldOutForEval,
      String excludedFor) {}

  record SessionLineage(String sessionId, String agentId, List<SessionJob> jobs) {}

  /** The entity is unknown, or did not exist at the time asked for; the message says which. */
  final class NotFound extends RuntimeException {
    public NotFound(String message) {
      super(message, null, false, false);
    }
  }
}
