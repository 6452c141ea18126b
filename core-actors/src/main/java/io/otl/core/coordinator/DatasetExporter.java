package io.otl.core.coordinator;

import java.util.concurrent.CompletionStage;

/**
 * Port through which the TrainingCoordinator has a job's dataset written (design §6). Implemented
 * outside the domain (it reads the sessions' journals and writes files).
 *
 * <p>Contract: the exporter writes the JSON Lines file and its manifest for {@code
 * request.jobId()}, runs the final PII scan over what it wrote (reporting findings in {@link
 * DatasetManifest#piiFindings()}, never failing the stage for them), and completes with the
 * manifest. It is idempotent: the coordinator repeats the same request after a crash or a failure.
 * The stage fails only when the file could not be written (the coordinator retries with back-off).
 */
public interface DatasetExporter {
  CompletionStage<DatasetManifest> export(ExportRequest request);
}
