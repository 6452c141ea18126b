package io.otl.node.trinity;

import java.util.Objects;

/**
 * Settings of the {@code ray-jobs} backend.
 *
 * @param endpoint the Ray head's dashboard, default port 8265
 * @param entrypointNumGpus GPUs reserved for the {@code trinity run} driver ({@code entrypoint_num_gpus});
 *     0 lets Trinity's own Ray actors take the GPUs
 * @param nodeNum Trinity {@code cluster.node_num}
 * @param gpuPerNode Trinity {@code cluster.gpu_per_node}
 */
public record RayJobsSettings(TrinityEndpoint endpoint, int entrypointNumGpus, int nodeNum, int gpuPerNode) {

  public RayJobsSettings {
    Objects.requireNonNull(endpoint, "endpoint");
    if (entrypointNumGpus < 0 || nodeNum < 1 || gpuPerNode < 1) {
      throw new IllegalArgumentException(
          "need entrypoint-num-gpus >= 0, node-num >= 1, gpu-per-node >= 1; got "
              + entrypointNumGpus + ", " + nodeNum + ", " + gpuPerNode);
    }
  }

  public static RayJobsSettings of(TrinityEndpoint endpoint) {
    return new RayJobsSettings(endpoint, 0, 1, 1);
  }
}
