"""Loads job dataset folders as Trinity-RFT's file reader does, in order, in one fresh datasets cache.

Usage: hf_dataset_cache_check.py <folder>...  Each folder's default config (split train) and, when its
card lists one, its eval config (split test) must give exactly the lines of train.jsonl / test.jsonl.
Two jobs of one id (job-1-<agent> of two journals) in two dataset directories have folders of one name:
datasets caches a folder with a card by that name and the card's config, so the second read gave the
first job's rows unless the card tells the two apart. Prints a JSON report on its last line.
"""
import json
import os
import sys
import tempfile

os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="otl-hf-cache-")
from datasets import load_dataset  # noqa: E402


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(folders):
    problems = []
    for folder in folders:
        want = lines(os.path.join(folder, "train.jsonl"))
        got = load_dataset(folder, split="train")
        if got.num_rows != len(want):
            problems.append(f"{folder}: train read {got.num_rows} rows, the file has {len(want)}")
        test = os.path.join(folder, "test.jsonl")
        if os.path.exists(test):
            want = lines(test)
            got = load_dataset(folder, "eval", split="test")
            if got.num_rows != len(want) or [r["prompt"] for r in got] != [r["prompt"] for r in want]:
                problems.append(f"{folder}: eval read {got.num_rows} rows, the file has {len(want)}")
    print(json.dumps({"problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
