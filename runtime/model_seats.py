"""Where a region finds the models it runs compiled, on each of its calls.

A region whose work is mostly its models' runs as Python with each model compiled
(GraphRegion._run_with_compiled_models). Its pricing call met some model objects; a later call
may meet others in the same places: a function that builds its model and trains it, called
again (a sweep, a test), makes a new model each call.

    def train_mnist():
        ddpm = DDPM(...)             # a new model on every call of train_mnist
        for x, c in loader:
            loss = ddpm(x, c)        # the region: `ddpm` is its argument 0 on every call
        ...
        x_gen = ddpm.sample(...)     # the region runs ddpm.nn_model: argument 0's submodule

Each model is found where the pricing call met it (`ModelSeat`): a region argument, a submodule
of one (one level), a global of the region's function, or else that very object (weakly). On a
later call the seat gives the model there now, compiled once per model object (`compile_module`
caches by module); a seat holding something else (not a module of the class the pricing call
met) is left out of that call, whose model runs as written. The model met before stays
compiled whatever its class has become (a parametrization), compiled afresh for that class.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch


class ModelSeat:
    """One model of a region: where it is found, and its compiled module for the last model found."""

    __slots__ = ("kind", "index", "name", "cls", "_fixed", "_model", "_view")

    def __init__(self, kind: str, cls: type, index: int = -1, name: str = "", fixed: Any = None) -> None:
        self.kind = kind  # "argument", "submodule", "global" or "object"
        self.index = index
        self.name = name
        self.cls = cls
        self._fixed = weakref.ref(fixed) if fixed is not None else None
        self._model: weakref.ref | None = None
        self._view: weakref.ref | None = None

    def model(self, args: tuple, namespace: dict) -> torch.nn.Module | None:
        """The model in this seat for a call with `args` (None: none of the priced class there)."""
        kind = self.kind
        if kind == "argument":
            found = args[self.index] if self.index < len(args) else None
        elif kind == "submodule":
            owner = args[self.index] if self.index < len(args) else None
            found = owner._modules.get(self.name) if isinstance(owner, torch.nn.Module) else None
        elif kind == "global":
            found = namespace.get(self.name)
        else:
            found = self._fixed() if self._fixed is not None else None
        if not isinstance(found, torch.nn.Module):
            return None
        if kind == "object" or (self._model is not None and self._model() is found):
            return found  # the model met before, whatever its class is now (a parametrization)
        return found if isinstance(found, self.cls) else None

    def view(self, model: torch.nn.Module, compile_module: Callable[[torch.nn.Module], Any]) -> Any:
        """`model` compiled (`compile_module`), kept for the next call that finds the same model."""
        if self._model is not None and self._model() is model:
            view = self._view() if self._view is not None else None
            # Still of the model's class: a parametrization registered since swaps the class for
            # one whose properties compute the weights, compiled afresh.
            if view is not None and getattr(type(view), "_carve_original_class", None) is type(model):
                return view
        view = compile_module(model)
        # A model compiled already (model.compile(), carve.compile) is its own view: none kept.
        self._model, self._view = weakref.ref(model), (weakref.ref(view) if view is not model else None)
        return view

    def last_view(self) -> Any:
        """The compiled module of the last model this seat found (None: none, or gone)."""
        return self._view() if self._view is not None else None


def seat_of(model: torch.nn.Module, args: tuple, namespace: dict, names: tuple[str, ...]) -> ModelSeat:
    """Where the pricing call met `model`: a region argument, a submodule of one, one of the
    region function's global `names`, or (none of these) the object itself."""
    cls = type(model)
    for index, arg in enumerate(args):
        if arg is model:
            return ModelSeat("argument", cls, index=index)
    for index, arg in enumerate(args):
        if isinstance(arg, torch.nn.Module):
            for name, submodule in arg._modules.items():
                if submodule is model:
                    return ModelSeat("submodule", cls, index=index, name=name)
    for name in names:
        if namespace.get(name) is model:
            return ModelSeat("global", cls, name=name)
    return ModelSeat("object", cls, fixed=model)


__all__ = ["ModelSeat", "seat_of"]
