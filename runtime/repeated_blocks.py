"""Repeated blocks compiled once: the layers of a model traced and compiled as one region each
class, stamped out for every layer (first-call compile time).

    class GPT2Model(nn.Module):
        def forward(self, x):
            for block in self.h:            # 12 GPT2Blocks in an nn.ModuleList
                x = block(x)

Dynamo inlines every layer into the graph and Inductor compiles twelve copies of the same
code. With the block class's `forward` marked as a nested compile region
(`torch.compiler.nested_compile_region`), Dynamo traces one layer, Inductor compiles it once,
and the outer graph calls it for each layer: still one graph for the model, about half the
first-call time at 8-12 layers (`make bench`).

carve marks a class only while one of its own Dynamo captures runs (`marked(...)` around the
call): the user's classes are what they were before and after, in eager code and in other
threads' torch.compile. A class is marked when

- the backend is Inductor (the compile time it saves is Inductor's; other backends gain
  nothing measurable), and gradients are off (`torch.no_grad()`, generation, serving): in
  torch 2.13 a nested region compiled by Inductor gives wrong gradients (a 3-layer MLP stack:
  off by up to 4.0 against eager), so a call that may run backward compiles its layers inline;
- two or more of its instances sit in one `nn.ModuleList` / `nn.Sequential` reached from the
  region's module arguments, and it has submodules of its own (a layer, not an `nn.Linear`);
- the class is not torch's own, and carve's static analysis finds nothing in its `forward`
  or its submodules' that breaks a graph (the `layer_screen` of the region's CompileOptions,
  given by the compiler; a nested region must be one graph, Dynamo refuses it otherwise).

If Dynamo still refuses a marked region before anything ran (a break carve could not see),
the capture drops the marks and traces again inline, as torch.compile would.

The price is paid on every call: each layer runs as a call of its compiled subgraph, and
Inductor fuses nothing across layers (GPT-2, 4 layers, no_grad: about 50 us a call, 1-4% of
its forward here). `CARVE_COMPILE_LAYERS_ONCE=0` compiles the layers inline, as torch.compile
does: a longer first call (12-layer GPT-2: 9.0 s against 5.2 s), no per-layer cost after.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

ENABLED = os.environ.get("CARVE_COMPILE_LAYERS_ONCE", "1") != "0"
_MISSING = object()
# Dynamo keeps one reuse entry per distinct guard outcome of a region within a trace and raises
# past `max_reuse_entries` (default 8): twelve layers that each read their own constant
# (`self.scale`) would crash the first call. Entries are bounded by the layers of one model.
_MAX_REUSE_ENTRIES = 4096
_marked_forwards: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()
_screened: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()
_classes_of_model: "weakref.WeakKeyDictionary[nn.Module, tuple[type, ...]]" = weakref.WeakKeyDictionary()


Screen = Callable[[nn.Module], bool]


def classes_for(args: tuple, screen: Screen) -> tuple[type, ...]:
    """`block_classes(args, screen)`, remembered per model (the first module argument)."""
    model = next((arg for arg in args if isinstance(arg, nn.Module)), None) if ENABLED else None
    if model is None:
        return ()
    classes = _classes_of_model.get(model)
    if classes is None:
        classes = _classes_of_model[model] = block_classes(args, screen)
    return classes


def compile_inline(classes: tuple[type, ...]) -> None:
    """Dynamo refused these classes as nested regions: never mark them again."""
    for cls in classes:
        _screened[cls] = False
    _classes_of_model.clear()


def block_classes(args: Iterable[Any], screen: Screen) -> tuple[type, ...]:
    """The classes to compile once for a region called with `args`; `screen(layer)`: the
    compiler's static check that nothing in the layer's forward breaks a graph."""
    found: dict[type, nn.Module] = {}
    for arg in args:
        if not isinstance(arg, nn.Module):
            continue
        for container in arg.modules():
            if isinstance(container, (nn.ModuleList, nn.Sequential)):
                for block in _repeated_blocks(container):
                    found.setdefault(type(block), block)
    return tuple(cls for cls, block in found.items() if _passes_screen(block, screen))


def _repeated_blocks(container: nn.Module) -> list[nn.Module]:
    """One instance of each class that has two or more layers in `container`."""
    first: dict[type, nn.Module] = {}
    repeated: dict[type, nn.Module] = {}
    for child in container.children():
        cls = type(child)
        if next(child.children(), None) is None or cls.__module__.startswith("torch."):
            continue
        if cls in first:
            repeated[cls] = first[cls]
        first.setdefault(cls, child)
    return list(repeated.values())


def _passes_screen(block: nn.Module, screen: Screen) -> bool:
    cls = type(block)
    verdict = _screened.get(cls)
    if verdict is None:
        try:
            verdict = bool(screen(block))
        except Exception:  # a screen that cannot decide says no: marking is only an optimisation
            verdict = False
        _screened[cls] = verdict
    return verdict


def _marked_forward(cls: type) -> Any:
    """The nested-region wrapper of the forward `cls` has now: a forward reassigned since the last
    call (`Block.forward = patched`) gets a wrapper of its own, never the old function's."""
    current = cls.forward  # type: ignore[attr-defined]
    if hasattr(current, "__marked_compile_region_fn__"):
        return current  # marked already: by an enclosing carve call, or by the user
    marked = _marked_forwards.get(cls)
    if marked is None or marked.__marked_compile_region_fn__ is not current:
        marked = torch.compiler.nested_compile_region(current, max_reuse_entries=_MAX_REUSE_ENTRIES)
        _marked_forwards[cls] = marked
    return marked


class marked:
    """`with marked(classes):` the classes' forwards are nested compile regions; restored after,
    exactly (an inherited forward is inherited again)."""

    def __init__(self, classes: tuple[type, ...]) -> None:
        self.classes = classes
        self.saved: list[tuple[type, Any]] = []

    def __enter__(self) -> None:
        for cls in self.classes:
            marked_forward = _marked_forward(cls)
            self.saved.append((cls, cls.__dict__.get("forward", _MISSING)))
            type.__setattr__(cls, "forward", marked_forward)

    def __exit__(self, *exc: object) -> None:
        for cls, previous in reversed(self.saved):
            if previous is _MISSING:
                type.__delattr__(cls, "forward")
            else:
                type.__setattr__(cls, "forward", previous)
        self.saved.clear()
