/**
 * Trinity-RFT integration (design §5): HTTP clients implementing the domain's training ports.
 *
 * <ul>
 *   <li>{@link io.otl.node.trinity.RayJobsBackend} ({@code backend = ray-jobs}): renders the Trinity
 *       YAML ({@link io.otl.node.trinity.TrinityConfigRenderer}) next to the exported dataset as
 *       {@code <jobId>.trinity.yaml}, submits {@code trinity run --config <yaml>} through the Ray
 *       Jobs REST API with {@code submission_id = jobId}, polls, stops and reads logs. Output model:
 *       {@code <checkpoint_root_dir>/<agentId>/<jobId>/global_step_N/actor/huggingface} (highest
 *       N) and the metrics file {@code global_step_N/eval_metrics.json} ({@link
 *       io.otl.node.trinity.CheckpointLocator}).
 *   <li>{@link io.otl.node.trinity.TrinityProxyBackend} ({@code backend = trinity-proxy}): {@code
 *       POST /feedback}, {@code POST /commit}, {@code GET /metrics}, {@code GET /health} of a
 *       Trinity {@code serve} proxy.
 * </ul>
 *
 * <p>Configuration ({@link io.otl.node.trinity.TrinitySettings#fromConfig}): {@code
 * agentscope.training.training-runner.backend}, {@code .trinity-endpoint} and the optional {@code
 * .trinity.request-timeout}, {@code .trinity.auth-token}, {@code .trinity.entrypoint-num-gpus},
 * {@code .trinity.node-num}, {@code .trinity.gpu-per-node}.
 *
 * <p>Failures are {@link io.otl.core.training.TrainingBackendException}s whose message names the
 * method, path, status and an excerpt of the body; connection refused and timeouts are {@code
 * UNAVAILABLE} (retryable). The bearer token is never part of a message or a {@code toString}.
 */
package io.otl.node.trinity;
