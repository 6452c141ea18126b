"""Writes the monitor output of a Trinity-RFT bench run, the way Trinity writes it.

trinity/utils/monitor.py TensorboardMonitor: SummaryWriter(<cache_dir>/tensorboard/<role>) from
torch.utils.tensorboard, and log(data, step) = add_scalar(key, value, step) for every key.
trinity/cli/launcher.py bench(): role (explorer.name) = "benchmark"; cache_dir =
<checkpoint_job_dir>/monitor (config.py). trinity/explorer/explorer.py benchmark(): with
eval_on_startup, _finish_eval_step(prefix="bench") logs model_path at step 0, then every
global_step_N at step N, each as {"bench/<taskset>/finished_task_count": n,
**gather_eval_metrics(metrics, "bench/<taskset>"), "time/eval": t}, where gather_eval_metrics
gives "bench/<taskset>/<key>" (mean over tasks; "<key>/mean" etc. with detailed_stats) for every
numeric key of the runs' metrics: the reward function's result (accuracy_reward: "accuracy") and
"time/run_execution".

Usage: trinity_bench_monitor.py <job_dir> <taskset> <spec.json>, where spec.json is
{"detailed": bool, "steps": {"<step>": {"<metric>": [per-task values]}}, "training": bool}.
"training" also writes a training run's explorer monitor (rollout/* and eval/* tags), which the
converter must ignore.
"""
import json
import os
import sys

import numpy as np
from torch.utils.tensorboard import SummaryWriter


class TensorboardMonitor:
    """trinity.utils.monitor.TensorboardMonitor, without Trinity's Config."""

    def __init__(self, cache_dir, role):
        self.tensorboard_dir = os.path.join(cache_dir, "tensorboard", role)
        os.makedirs(self.tensorboard_dir, exist_ok=True)
        self.logger = SummaryWriter(self.tensorboard_dir)

    def log(self, data, step):
        for key in data:
            self.logger.add_scalar(key, data[key], step)

    def close(self):
        self.logger.close()


def gather_eval_metrics(metric_list, prefix, detailed_stats):
    """trinity.utils.monitor.gather_eval_metrics, with numpy in place of pandas."""
    metric = {}
    for col in metric_list[0]:
        values = np.array([m[col] for m in metric_list], dtype=float)
        if detailed_stats:
            stats = {"mean": values.mean(), "max": values.max(), "min": values.min(), "std": values.std(ddof=1)}
            for name, v in stats.items():
                metric[f"{prefix}/{col}/{name}"] = v.item()
        else:
            metric[f"{prefix}/{col}"] = values.mean()
    return metric


def main(job_dir, taskset, spec_file):
    with open(spec_file) as f:
        spec = json.load(f)
    cache_dir = os.path.join(job_dir, "monitor")
    if spec.get("training"):
        explorer = TensorboardMonitor(cache_dir, "explorer")
        explorer.log({"rollout/accuracy/mean": 0.01, "rollout/model_version": 1}, 1)
        explorer.log({f"eval/{taskset}/accuracy": 0.02}, 2)
        explorer.close()
    monitor = TensorboardMonitor(cache_dir, "benchmark")
    for step, per_metric in sorted(spec["steps"].items(), key=lambda kv: int(kv[0])):
        tasks = len(next(iter(per_metric.values())))
        runs = [{k: v[i] for k, v in per_metric.items()} | {"time/run_execution": 1.5} for i in range(tasks)]
        metric = {f"bench/{taskset}/finished_task_count": len(runs)}
        metric.update(gather_eval_metrics(runs, f"bench/{taskset}", spec.get("detailed", False)))
        metric["time/eval"] = 12.0
        monitor.log(metric, int(step))
    monitor.close()
    print(json.dumps({"written": monitor.tensorboard_dir}))


if __name__ == "__main__":
    main(*sys.argv[1:])
