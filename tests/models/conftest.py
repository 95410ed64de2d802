"""Real models under carve: offline transformers, a fresh Dynamo per test, and the graph table.

Every model is built from a tiny config with random weights: nothing is downloaded
(HF_HUB_OFFLINE=1 is set before transformers is imported). Dynamo's caches are keyed by code
object, and transformers' forward methods are one code object for every model instance, so
each test starts from `torch._dynamo.reset()`: a cache filled by an earlier test would push
later compiles over the recompile limit and make graph counts meaningless.

The tests that compare carve with eager on a transformers or nanoGPT model take the `device`
fixture: "cpu" always, "cuda" when a CUDA device is available (skipped otherwise), so the same
comparisons run on a GPU.

Run with `-s` or look at the terminal summary for the table of graph counts and first-call
times the tests recorded (information only; nothing asserts a timing). In each test carve's
first call comes first: it pays the process's first trace of that model's code (caches of
source, trace rules and fake tensors that torch.compile's call then reuses), so the columns
are not a fair race. `make bench` ("First call on real models") is: a fresh process each.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from carve.runtime import log as carve_log  # noqa: E402
from tests.models.common import TABLE  # noqa: E402


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device (torch.cuda.is_available() is False)"))])
def device(request) -> str:
    """Where the model and its inputs live: "cpu", and "cuda" when available."""
    return request.param


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    carve_log.reset()
    # Tiny tensors: one intra-op thread is faster than two on this shared 2-core machine, and
    # keeps the model tests from fighting other processes for the cores.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    torch._dynamo.reset()


def pytest_terminal_summary(terminalreporter):
    if not TABLE:
        return
    terminalreporter.section("carve on real models: graphs and first-call time (information only; "
                             "carve runs first and warms caches torch.compile then reuses)")
    header = ("model", "eager graphs", "carve graphs", "torch.compile graphs", "carve 1st call s",
              "torch.compile 1st call s")
    rows = [header] + [(r.model, "0", str(r.carve_graphs), str(r.torch_compile_graphs),
                        f"{r.carve_first_call:.2f}", f"{r.torch_compile_first_call:.2f}") for r in TABLE]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        terminalreporter.write_line(" | ".join(cell.ljust(w) for cell, w in zip(row, widths)))
