"""Repeated layers compiled once (runtime/repeated_blocks.py, compiler/block_screen.py): which
layer classes carve marks as nested compile regions, that the user's classes are exactly as they
were outside carve's calls, and, with Inductor, that a model whose layers are compiled once
gives eager's values, gradients and side effects."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn as nn

import carve
from carve.api import compiled_function_of
from carve.block_screen import compiles_as_one_graph
from carve.explanation import _describe_region
from carve.runtime import cost_check, repeated_blocks

# A region's first calls run its Python to price its compile (runtime/cost_check.py): the calls a
# test makes of the compiled path come after them.
PRICING = cost_check.PYTHON_FIRST_CALLS


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm, self.mlp = nn.LayerNorm(8), Mlp()
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # a side effect Dynamo replays for every layer
        return x + self.mlp(self.norm(x))


class PureBlock(nn.Module):
    """Block without the call counter (a guard that fails on every call)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm, self.mlp = nn.LayerNorm(8), Mlp()

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class InheritedBlock(Block):
    pass  # its forward is Block's: marking it must not leave a forward of its own behind


class PrintingBlock(Block):
    def forward(self, x):
        print("layer", x.shape)
        return super().forward(x)


def helper_that_breaks(x):
    return torch.tanh(x) * abs(x.mean().item())


class HelperBreakBlock(Block):
    def forward(self, x):
        return helper_that_breaks(super().forward(x))  # a call carve resolves: CRV016


# Reached through a dict lookup, which carve's analysis does not resolve: only Dynamo sees the break.
POST_PROCESSING = {"scale": helper_that_breaks}


class HiddenBreakBlock(Block):
    def forward(self, x):
        return POST_PROCESSING["scale"](super().forward(x))


class Stack(nn.Module):
    def __init__(self, block=Block, layers: int = 3) -> None:
        super().__init__()
        self.embed = nn.Linear(8, 8)
        self.layers = nn.ModuleList(block() for _ in range(layers))
        self.head = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))  # torch's own: never marked

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def test_the_classes_marked_are_the_repeated_layers_that_compile_as_one_graph():
    screen = compiles_as_one_graph
    assert repeated_blocks.block_classes([Stack()], screen) == (Block,)
    assert repeated_blocks.block_classes([Stack(layers=1)], screen) == ()        # not repeated
    assert repeated_blocks.block_classes([Stack(PrintingBlock)], screen) == ()   # print breaks the graph
    assert repeated_blocks.block_classes([Stack(HelperBreakBlock)], screen) == ()  # so does a helper it calls
    assert repeated_blocks.block_classes([torch.randn(2), "x"], screen) == ()
    assert compiles_as_one_graph(Block()) and not compiles_as_one_graph(PrintingBlock())
    assert compiles_as_one_graph(HiddenBreakBlock())  # the dict lookup hides the break from the screen


def test_turned_off_no_layer_is_compiled_once(monkeypatch):
    stack = Stack()
    assert repeated_blocks.classes_for((stack,), compiles_as_one_graph) == (Block,)
    monkeypatch.setattr(repeated_blocks, "ENABLED", False)
    assert repeated_blocks.classes_for((Stack(),), compiles_as_one_graph) == ()
    assert repeated_blocks.classes_for((stack,), compiles_as_one_graph) == ()


def test_marking_restores_each_class_exactly():
    own, inherited = Block.__dict__["forward"], InheritedBlock.forward
    with repeated_blocks.marked((Block, InheritedBlock)):
        assert Block.forward is not own and "forward" in InheritedBlock.__dict__
        with repeated_blocks.marked((Block,)):  # nested captures
            pass
        assert Block.forward is not own
    assert Block.__dict__["forward"] is own
    assert "forward" not in InheritedBlock.__dict__ and InheritedBlock.forward is inherited


def test_marking_wraps_the_forward_the_class_has_now():
    """A forward reassigned between carve's calls (a patched layer) is what runs inside the next
    one, never the forward marked before it."""

    class Patched(Block):
        pass

    with repeated_blocks.marked((Patched,)):
        pass
    x = torch.randn(2, 8)

    def doubled(self, x):
        return Block.forward(self, x) * 2

    Patched.forward = doubled
    layer = Patched()
    expected = layer(x)
    with repeated_blocks.marked((Patched,)):
        assert Patched.forward.__marked_compile_region_fn__ is doubled
        torch.testing.assert_close(layer(x), expected)
        with repeated_blocks.marked((Patched,)):  # nested: the enclosing mark is kept, not wrapped again
            assert Patched.forward.__marked_compile_region_fn__ is doubled
    assert Patched.__dict__["forward"] is doubled


def test_without_inductor_nothing_is_marked():
    model = Stack()
    compiled = carve.compile(model, backend="eager")
    x = torch.randn(2, 8)
    torch.testing.assert_close(compiled(x), Stack.forward(model, x))
    assert Block.__dict__["forward"].__name__ == "forward"


class OwnStack(Stack):
    """Stack with a forward of its own: its compiled region is not the one Stack's earlier calls
    sent to Python (Block's call counter fails a guard on every call: a region that compiles on
    most of its calls runs as Python)."""

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class SteadyStack(Stack):
    """Stack with a forward of its own, which no other test's calls have weighed or sent to Python."""

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def _compare_with_eager(block, x, stack=Stack):
    """Inference (layers compiled once) then training (layers inline), each against eager."""
    torch.manual_seed(0)
    model = stack(block)
    eager = stack(block)
    eager.load_state_dict(model.state_dict())
    compiled = carve.compile(model)
    with torch.no_grad():
        for batch in [x] * PRICING + [x, x * 2, x[:1]]:  # the Python calls that price the compile first
            torch.testing.assert_close(compiled(batch), eager(batch))
    assert all(region.graphs for region in compiled_function_of(compiled).regions)  # compiled, not Python
    for batch in (x, x * 2):
        expected, got = eager(batch), compiled(batch)
        torch.testing.assert_close(got, expected)
        expected.sum().backward()
        got.sum().backward()
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    assert [layer.calls for layer in model.layers] == [layer.calls for layer in eager.layers] == [5 + PRICING] * 3
    return compiled


@pytest.mark.inductor
def test_layers_compiled_once_give_eagers_values_gradients_and_side_effects():
    compiled = _compare_with_eager(Block, torch.randn(4, 8))
    (region,) = compiled_function_of(compiled).regions
    assert "layers compiled once each: Block" in _describe_region(region)  # what carve.explain says
    assert Block.__dict__["forward"].__name__ == "forward"  # the user's class, as it was


@pytest.mark.inductor
def test_no_grad_calls_after_a_steady_training_state_still_compile_the_layers_once():
    """Training calls put the region in its steady state (straight into Dynamo's code); an
    inference call after them takes the path that compiles repeated layers once."""
    torch.manual_seed(0)
    model, eager = SteadyStack(PureBlock), SteadyStack(PureBlock)
    eager.load_state_dict(model.state_dict())
    compiled = carve.compile(model)
    x = torch.randn(4, 8)
    # past the cost check's timed calls (a model's forward is compiled from its first call)
    for step in range(cost_check.WARM_CALLS + 2 * cost_check.SAMPLES + 2):
        torch.testing.assert_close(compiled(x * step), eager(x * step))
    (region,) = compiled_function_of(compiled).regions
    assert region._steady and "PureBlock" not in region.capture.layers_compiled_once
    with torch.no_grad():
        for batch in (x, x[:1]):
            torch.testing.assert_close(compiled(batch), eager(batch))
    assert region.capture.layers_compiled_once == ("PureBlock",)


@pytest.mark.inductor
def test_a_layer_that_breaks_where_carve_cannot_see_is_compiled_inline(caplog):
    carve_log = logging.getLogger("carve")
    carve_log.addHandler(caplog.handler)  # carve's logger may not propagate once CARVE_LOGS configured it
    try:
        with caplog.at_level(logging.INFO, logger="carve"):
            _compare_with_eager(HiddenBreakBlock, torch.randn(4, 8), stack=OwnStack)
    finally:
        carve_log.removeHandler(caplog.handler)
    assert sum("HiddenBreakBlock cannot be compiled once each" in r.getMessage() for r in caplog.records) >= 1


class ScaledBlock(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.scale = scale  # each layer its own constant: a guard that differs per layer

    def forward(self, x):
        return torch.tanh(self.linear(x)) * self.scale


class ScaledStack(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ScaledBlock(0.5 + i / 10) for i in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@pytest.mark.inductor
def test_more_layers_than_dynamos_default_reuse_entries_each_reading_its_own_constant(caplog):
    """Dynamo's default allows 8 differing layers per trace and raises past them (a crash on the
    first call); carve's marks allow a model's layers, so twelve layers each with its own `scale`
    compile marked (each traced on its own: its guards differ) and match eager."""
    torch.manual_seed(0)
    model = ScaledStack(12)
    compiled = carve.compile(model)
    carve_log = logging.getLogger("carve")
    carve_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="carve"), torch.no_grad():
            # the Python calls that price the compile, then the compiled ones
            for batch in [torch.randn(2, 8) for _ in range(PRICING)] + [torch.randn(2, 8), torch.randn(3, 8)]:
                torch.testing.assert_close(compiled(batch), model(batch))
    finally:
        carve_log.removeHandler(caplog.handler)
    assert not any("cannot be compiled once each" in r.getMessage() for r in caplog.records)
    assert sum(len(region.graphs) for region in compiled_function_of(compiled).regions) >= 1


class SwappableBlock(Block):
    pass


@pytest.mark.inductor
def test_a_layer_forward_patched_between_calls_is_the_one_that_runs():
    """The compiled model follows a forward reassigned on the layer class between two calls."""
    torch.manual_seed(0)
    model = Stack(SwappableBlock)
    compiled = carve.compile(model)
    x = torch.randn(4, 8)
    original = SwappableBlock.forward
    try:
        with torch.no_grad():
            for _ in range(PRICING + 1):  # the Python calls that price the compile, then a compiled one
                torch.testing.assert_close(compiled(x), model(x))
            assert all(region.graphs for region in compiled_function_of(compiled).regions)

            def halved(self, x):
                return original(self, x) * 0.5

            SwappableBlock.forward = halved
            torch.testing.assert_close(compiled(x), model(x))
    finally:
        SwappableBlock.forward = original
