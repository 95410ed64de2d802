"""Compiling the same code again must reuse what was compiled, as torch.compile does.

torch.compile keeps Dynamo's cache on the code object, so these patterns trace once:

    for i, block in enumerate(model.blocks):          # per-block compile (FSDP-style recipes)
        model.blocks[i] = torch.compile(block)

    def evaluate(model, batch):                         # a helper that compiles on every call
        return torch.compile(model)(batch)

carve keeps one compiled version per function or module class and options (compiler/api.py,
`_version`); before that, each `carve.compile(...)` built a new CompiledFunction, parsed the
source and traced every region again: one set of graphs per block (4 graphs where
torch.compile makes 1) and a full re-trace on every call of the helper (about 1 s per call on
a tiny Llama, against 2 ms for torch.compile) -- a re-trace storm.
"""

from __future__ import annotations

import copy
import gc
import weakref

import torch

import carve
import carve.api
from carve.testing import CountingBackend
from tests.models.common import dynamo_frames
from tests.models.nanogpt import GPT, GPTConfig

CONFIG = GPTConfig(block_size=16, vocab_size=64, n_layer=4, n_head=2, n_embd=32)

def blocks_compiled_one_by_one(compile_, backend):
    torch.manual_seed(0)
    net = GPT(CONFIG).eval()
    reference = copy.deepcopy(net)
    for i, block in enumerate(net.transformer.h):
        net.transformer.h[i] = compile_(block, backend=backend)
    return net, reference


def test_blocks_compiled_one_by_one_share_their_graphs():
    backend = CountingBackend()
    net, reference = blocks_compiled_one_by_one(carve.compile, backend)
    idx = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0))
    for _ in range(2):
        torch.testing.assert_close(net(idx)[0], reference(idx)[0])
    torch._dynamo.reset()
    tc_backend = CountingBackend()
    tc_net, _ = blocks_compiled_one_by_one(torch.compile, tc_backend)
    tc_net(idx)
    assert 1 <= backend.graphs <= tc_backend.graphs, (backend.graphs, tc_backend.graphs)


def test_compiling_the_model_again_does_not_retrace():
    torch.manual_seed(0)
    net = GPT(CONFIG).eval()
    backend = CountingBackend()
    idx = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0))

    def evaluate(model, batch):
        return carve.compile(model, backend=backend)(batch)[0]

    expected = net(idx)[0]
    torch.testing.assert_close(evaluate(net, idx), expected)
    warm = backend.graphs, dynamo_frames()
    for _ in range(3):
        torch.testing.assert_close(evaluate(net, idx), expected)
    assert (backend.graphs, dynamo_frames()) == warm, "compiling the model again re-traced it"


def test_compiling_a_function_again_does_not_retrace():
    torch.manual_seed(0)
    net = GPT(CONFIG).eval()
    backend = CountingBackend()
    idx = torch.randint(0, 64, (2, 5), generator=torch.Generator().manual_seed(0))

    def sample(generate):
        torch.manual_seed(1)
        return generate(idx, 3, top_k=5)

    expected = sample(net.generate)
    torch.testing.assert_close(sample(carve.compile(net.generate, backend=backend)), expected)
    warm = backend.graphs, dynamo_frames()
    for _ in range(2):  # a server compiling per request
        torch.testing.assert_close(sample(carve.compile(net.generate, backend=backend)), expected)
    assert (backend.graphs, dynamo_frames()) == warm, "compiling generate again re-traced it"
    # Other options are another version: compiled anew, not mixed up with the first.
    other = CountingBackend()
    torch.testing.assert_close(sample(carve.compile(net.generate, backend=other)), expected)
    assert other.graphs >= 1 and backend.graphs == warm[0]


def scale(x, factor):
    return x * factor


def test_versions_per_function_are_bounded():
    """A backend made anew for each compile is a new version each time; the oldest are dropped."""
    x = torch.ones(3)
    for _ in range(carve.api.MAX_VERSIONS + 3):
        torch.testing.assert_close(carve.compile(scale, backend=CountingBackend())(x, 2.0), x * 2)
    assert len(carve.api._nested[scale]) == carve.api.MAX_VERSIONS


def test_functions_made_per_call_are_not_kept_alive():
    """A function defined inside another is made on every call: carve keeps no table entry that
    would keep it, its closure and the tensors the closure holds alive."""
    def make(offset):
        def shift(x):
            return x + offset
        return shift

    offset = torch.randn(256, 256)
    freed = weakref.ref(offset)
    shift = carve.compile(make(offset), backend="eager")
    torch.testing.assert_close(shift(torch.zeros(256, 256)), offset)
    del shift, offset
    gc.collect()
    assert freed() is None
