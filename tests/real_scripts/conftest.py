"""The real-scripts tests: a fresh Dynamo per test, one intra-op thread, and a table of graphs.

Each test loads its own fresh copy of a script (harness.py), but Dynamo's caches are keyed by
code object and the model files (nanogpt_model.py, wlm_model.py) are imported once: each test
starts from `torch._dynamo.reset()`. Run with `-s` or read the terminal summary for the graphs
carve compiled per script (information only; bench/real_scripts.py compares with torch.compile).
"""

from __future__ import annotations

import pytest
import torch

from carve.runtime import log as carve_log

GRAPHS: dict[str, tuple[int, int, int]] = {}  # script -> (calls, graphs compiled, graph calls)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    carve_log.reset()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small sizes: one thread is faster on this shared 2-core machine
    yield
    torch.set_num_threads(threads)
    torch._dynamo.reset()


def pytest_terminal_summary(terminalreporter):
    if not GRAPHS:
        return
    terminalreporter.section("carve on the real scripts' functions: graphs (information only)")
    terminalreporter.write_line(f"{'script':28} {'calls':>5} {'graphs':>7} {'graph calls':>12}")
    for name, (calls, graphs, graph_calls) in sorted(GRAPHS.items()):
        terminalreporter.write_line(f"{name:28} {calls:5d} {graphs:7d} {graph_calls:12d}")
