"""Launching a worker script on 2 CPU processes with gloo, as `torchrun --nproc_per_node=2` does."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORLD_SIZE = 2


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torchrun(worker: str, out: Path, *args: str, timeout: float = 240) -> list[dict[str, Any]]:
    """Run `worker` (a script in this folder) on 2 ranks; return what each rank saved to `out`."""
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={WORLD_SIZE}",
               "--master_addr=127.0.0.1", f"--master_port={free_port()}", str(HERE / worker), str(out), *args]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{worker} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return [torch.load(out / f"rank{rank}.pt", weights_only=False) for rank in range(WORLD_SIZE)]
