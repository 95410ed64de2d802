"""Speed of `carve lint` against TorchFix on torch/nn, side by side (wall time, best of N).

    .venv/bin/python bench/lint_bench.py [--repeat 3]

TorchFix must live in its own environment (it pins its own libcst):
    python3 -m venv /tmp/torchfix-venv && /tmp/torchfix-venv/bin/pip install torchfix
The TorchFix row is skipped, with a message, when that is not installed
(override the path with TORCHFIX=/path/to/torchfix).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_TORCHFIX = "/tmp/torchfix-venv/bin/torchfix"


def timed(command: list[str], repeat: int) -> tuple[float, int]:
    best, code = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        best = min(best, time.perf_counter() - start)
    return best, code


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    nn_dir = Path(importlib.util.find_spec("torch").origin).parent / "nn"
    files = list(nn_dir.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"torch/nn: {len(files)} files, {lines} lines, {os.cpu_count()} cores, best of {args.repeat}")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rows = []
    carve = [sys.executable, "-m", "carve", "lint", "--no-progress", "--exit-zero"]
    rows.append(("carve lint --all (every function using torch)", *timed(carve + ["--all", str(nn_dir)], args.repeat)))
    rows.append(("carve lint (compiled functions, default)", *timed(carve + [str(nn_dir)], args.repeat)))
    # A tree whose imports lead elsewhere: three HuggingFace models, whose calls go into
    # transformers' shared modules (modeling_utils, masking_utils, ...), followed by path.
    transformers = importlib.util.find_spec("transformers")
    if transformers is not None and transformers.origin:
        models = Path(transformers.origin).parent / "models"
        trees = [str(models / name) for name in ("llama", "bert", "gpt2") if (models / name).is_dir()]
        count = sum(1 for tree in trees for _ in Path(tree).rglob("*.py"))
        rows.append((f"carve lint --all, transformers llama+bert+gpt2 ({count} files)", *timed(carve + ["--all", *trees], args.repeat)))
    # Public training and model code (tests/lint_corpus_real: nanoGPT, minGPT, pytorch/examples, ...),
    # the corpus carve lint's accuracy is measured on.
    corpus = Path(__file__).resolve().parents[1] / "tests" / "lint_corpus_real"
    if corpus.is_dir():
        count = sum(1 for path in corpus.glob("*.py") if path.name != "cases.py")
        rows.append((f"carve lint --all, real-code corpus ({count} files)", *timed(carve + ["--all", str(corpus)], args.repeat)))
    torchfix = os.environ.get("TORCHFIX", DEFAULT_TORCHFIX)
    if shutil.which(torchfix) or Path(torchfix).exists():
        rows.append(("torchfix", *timed([torchfix, str(nn_dir)], max(1, min(args.repeat, 2)))))
    else:
        print(f"(TorchFix not found at {torchfix}: python3 -m venv /tmp/torchfix-venv && /tmp/torchfix-venv/bin/pip install torchfix)")
    width = max(len(name) for name, _, _ in rows)
    print(f"{'tool'.ljust(width)}  wall (s)  exit")
    for name, seconds, code in rows:
        print(f"{name.ljust(width)}  {seconds:8.2f}  {code}")
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
