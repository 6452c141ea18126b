"""Turns a Trinity-RFT bench run's monitor output into the control plane's bench_scores.json.

Written next to the job's configs by the ray-jobs backend and chained after the bench
(`trinity run --config <train> && trinity run --config <bench> && python3 <this> ...`).

Trinity's bench (`mode: bench`, explorer.benchmark) logs its scores only through its monitor:
with `monitor_type: tensorboard`, trinity.utils.monitor.TensorboardMonitor writes them with
torch.utils.tensorboard.SummaryWriter under `<checkpoint_job_dir>/monitor/tensorboard/<role>/`
as scalars `bench/<taskset>/<metric>` (or `.../<metric>/mean` with monitor.detailed_stats), where
<metric> is a key of the reward function's result (e.g. `accuracy` of accuracy_reward), at step 0
for `model.model_path` (eval_on_startup: the stable or base the job started from) and at step N
for the checkpoint `global_step_N`. The candidate is the highest N with a Hugging Face checkpoint
(what the control plane hands over), the stable is step 0.

Output, read by io.otl.node.trinity.CheckpointLocator: {"evalPath", "evalSha256", "evalCount",
"candidateModel", "stableModel", "candidateStep", "source", "trinityMetrics": {step: {tag: value}},
"candidate": {metric: value}, "stable": {metric: value}} with our metric names (--metric
ours=theirs). When a score is missing, "candidate"/"stable" are left out and "problem" says why:
the gate then finds no evidence (NO_EVIDENCE) instead of a made-up one. Exit code 0 either way,
so a finished training is never lost over its evaluation; 2 for bad arguments.
Needs only the `tensorboard` package, which Trinity's own monitor imports.
"""

import argparse
import hashlib
import json
import math
import os
import re
import sys

STEP_DIR = re.compile(r"global_step_(\d+)$")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--job-dir", required=True, help="<checkpoint_root_dir>/<project>/<name>")
    p.add_argument("--taskset", required=True, help="the bench eval taskset's name")
    p.add_argument("--eval-file", required=True, help="the held-out set the bench scored")
    p.add_argument("--stable-model", default="", help="model.model_path of the bench config")
    p.add_argument("--metric", action="append", default=[], help="ours=trinity, e.g. task-success-rate=accuracy")
    p.add_argument("--out", help="default: <job-dir>/bench_scores.json")
    args = p.parse_args(argv)
    mapping = {}
    for m in args.metric:
        ours, sep, theirs = m.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            p.error(f"--metric must be ours=trinity, was {m!r}")
        mapping[ours.strip()] = theirs.strip()
    if not mapping:
        p.error("at least one --metric ours=trinity is needed")
    args.mapping = mapping
    return args


def scalars(tensorboard_dir, prefix):
    """{step: {tag: value}} of every scalar under prefix; a later write of the same tag and step wins."""
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.util import tensor_util

    latest = {}
    for root, _dirs, files in os.walk(tensorboard_dir):
        for name in sorted(files):
            if "tfevents" not in name:
                continue
            for event in event_file_loader.EventFileLoader(os.path.join(root, name)).Load():
                if not event.HasField("summary"):
                    continue
                for value in event.summary.value:
                    if not value.tag.startswith(prefix):
                        continue
                    if value.HasField("simple_value"):
                        number = float(value.simple_value)
                    elif value.HasField("tensor"):
                        number = float(tensor_util.make_ndarray(value.tensor).item())
                    else:
                        continue
                    key = (event.step, value.tag)
                    if key not in latest or latest[key][0] <= event.wall_time:
                        latest[key] = (event.wall_time, number)
    by_step = {}
    for (step, tag), (_t, number) in latest.items():
        by_step.setdefault(step, {})[tag] = number
    return by_step


def candidate_step(job_dir):
    """The highest N of global_step_N/actor/huggingface, as CheckpointLocator picks it."""
    best = None
    for name in os.listdir(job_dir) if os.path.isdir(job_dir) else []:
        m = STEP_DIR.match(name)
        if m and os.path.isdir(os.path.join(job_dir, name, "actor", "huggingface")):
            best = max(best or 0, int(m.group(1)))
    return best


def candidate_model(job_dir, step):
    """The step's model as CheckpointLocator names it: its LoRA adapter when it has one."""
    actor = os.path.join(os.path.abspath(job_dir), f"global_step_{step}", "actor")
    adapter = os.path.join(actor, "lora_adapter")
    if os.path.isfile(os.path.join(adapter, "adapter_config.json")):
        return adapter
    return os.path.join(actor, "huggingface")


def scores(step_scalars, prefix, mapping):
    """Our metric names from Trinity's tags; None when a mapped metric is missing or not finite."""
    out = {}
    for ours, theirs in mapping.items():
        for tag in (prefix + theirs, prefix + theirs + "/mean"):
            v = step_scalars.get(tag)
            if v is not None and math.isfinite(v):
                out[ours] = v
                break
    return out


def main(argv):
    args = parse_args(argv)
    out_path = args.out or os.path.join(args.job_dir, "bench_scores.json")
    with open(args.eval_file, "rb") as f:
        data = f.read()
    eval_count = sum(1 for line in data.decode("utf-8").splitlines() if line.strip())
    prefix = f"bench/{args.taskset}/"
    problem = None
    try:
        by_step = scalars(os.path.join(args.job_dir, "monitor", "tensorboard"), prefix)
    except ImportError as e:  # not a Trinity environment: say so in the file, keep the training
        by_step, problem = {}, f"cannot read the bench's tensorboard files: {e}"
    step = candidate_step(args.job_dir)
    result = {
        "evalPath": os.path.abspath(args.eval_file),
        "evalSha256": hashlib.sha256(data).hexdigest(),
        "evalCount": eval_count,
        "candidateModel": candidate_model(args.job_dir, step) if step else "",
        "stableModel": args.stable_model,
        "candidateStep": step,
        "source": "tensorboard",
        "trinityMetrics": {str(s): tags for s, tags in sorted(by_step.items())},
    }
    if problem:
        pass
    elif step is None:
        problem = f"no global_step_N/actor/huggingface under {args.job_dir}"
    elif step not in by_step:
        problem = f"no bench scores of checkpoint global_step_{step} ({prefix}* at step {step})"
    elif 0 not in by_step:
        problem = f"no bench scores of {args.stable_model or 'model.model_path'} ({prefix}* at step 0)"
    else:
        candidate = scores(by_step[step], prefix, args.mapping)
        stable = scores(by_step[0], prefix, args.mapping)
        common = sorted(set(candidate) & set(stable))
        if not common:
            problem = (f"none of {sorted(args.mapping.values())} among the bench metrics "
                       f"{sorted(t[len(prefix):] for t in by_step[step])}")
        else:
            result["candidate"] = {k: candidate[k] for k in common}
            result["stable"] = {k: stable[k] for k in common}
    if problem:
        result["problem"] = problem
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2, sort_keys=False)
    os.replace(tmp, out_path)
    print(("bench scores: " + problem) if problem else
          f"bench scores of global_step_{step} and step 0 written to {out_path}: "
          f"candidate {result['candidate']}, stable {result['stable']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
