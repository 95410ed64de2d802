"""Compile options shared by every graph region of one `carve.compile` call.

`CompileOptions` is the runtime's copy of the arguments the user gave to
`carve.compile` (they mirror `torch.compile`'s): which backend turns FX graphs
into kernels, whether graph breaks are errors (`fullgraph`), the backend's own
`options`, and how many times a region may be recompiled before carve gives
up and runs it eagerly. It is frozen so one instance can be shared by all
regions of a function without anyone changing it under their feet.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any


@dataclass(frozen=True)
class CompileOptions:
    backend: str | Callable[..., Any] = "inductor"
    fullgraph: bool = False
    # As torch.compile: None (a size or number becomes symbolic once it changes), True, False; Dynamo reads it.
    dynamic: bool | None = None
    options: dict | None = None
    recompile_limit: int = 8
    # The compiler's static check that a model layer's forward makes one graph (so Dynamo may
    # compile the layer once for all its instances: repeated_blocks.py); None marks no layer.
    layer_screen: Callable[[Any], bool] | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.backend, str) or callable(self.backend)):
            raise TypeError(
                f"carve: backend must be a backend name (str) or a callable (gm, example_inputs) -> callable, "
                f"got {type(self.backend).__name__}"
            )
        if not isinstance(self.fullgraph, bool):
            raise TypeError(f"carve: fullgraph must be a bool, got {self.fullgraph!r}")
        if self.dynamic not in (None, True, False):
            raise TypeError(f"carve: dynamic must be True, False or None, got {self.dynamic!r}")
        if self.options is not None and not isinstance(self.options, dict):
            raise TypeError(f"carve: options must be a dict or None, got {type(self.options).__name__}")
        if isinstance(self.recompile_limit, bool) or not isinstance(self.recompile_limit, int):
            raise TypeError(f"carve: recompile_limit must be an int, got {self.recompile_limit!r}")
        if self.recompile_limit < 1:
            raise ValueError(f"carve: recompile_limit must be >= 1, got {self.recompile_limit}")

    @property
    def backend_name(self) -> str:
        """A printable name for the backend (its name, or the callable's name)."""
        if isinstance(self.backend, str):
            return self.backend
        return getattr(self.backend, "__name__", type(self.backend).__name__)

    @property
    def uses_inductor(self) -> bool:
        """Whether graphs go to Inductor: by name, or a backend object that says it is Inductor as
        torch's own wrapper does (`compiler_name`). What compiling repeated layers once and building
        kernels in the background save is Inductor's compile time."""
        return self.backend == "inductor" or getattr(self.backend, "compiler_name", None) == "inductor"
