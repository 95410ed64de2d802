"""The value that stands for "not bound" where a name crosses a region boundary.

A name the function binds on some paths only (an `if` without `else`, a loop
that runs zero times, an `except ... as e`, a `match` capture) may be unbound
when a region is called or returns. Python has no value for "unbound", so
the generated code carries `UNBOUND` across the call and turns it back into
an unbound local on the other side (AutoGraph's `Undefined`):

    def f(x, flag):                         def _f_graph_region_0(flag, x, y):
        if flag:                                if flag:
            y = x * 2                               y = x * 2
        print(x.sum())                          _carve_t0 = x.sum()
        if flag:                                return y, _carve_t0
            return y + 1       ->
        return x                            def _f_graph_region_1(y):
                                                if y is _carve_unbound: del y
                                                return y + 1

                                            def f(x, flag):
                                                y, _carve_t0 = _f_graph_region_0(flag, x, _carve_unbound)
                                                if y is _carve_unbound: del y
                                                print(_carve_t0)
                                                if flag:
                                                    _carve_a0 = locals().get("y", _carve_unbound)
                                                    if _carve_a0 is _carve_unbound:
                                                        return _f_graph_region_1.__wrapped__(_carve_a0)
                                                    else:
                                                        return _f_graph_region_1(_carve_a0)
                                                return x

so the function binds what eager binds, and a read of a name eager would
not have bound raises eager's `UnboundLocalError`, at the user's line.

`UNBOUND` is never a value the user's code computes with. A compiled region
may pass it through untouched (`_f_graph_region_0` above: torch._dynamo takes
this module-level singleton of a plain class as a constant, guarded by
identity), but a region that reads a name which is `UNBOUND` at the call runs
as Python, the function its decorator wraps (`__wrapped__`): there the `del`
makes the read raise as in eager. A graph is never traced through that `del`
(Dynamo resuming after a graph break has put a deleted argument back).
Nothing here imports torch; generated code imports `UNBOUND` from here.
"""

from __future__ import annotations


class Unbound:
    """The type of `UNBOUND`; there is one instance."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "carve.rewriters.unbound.UNBOUND"

    def __reduce__(self):
        return "UNBOUND"


UNBOUND = Unbound()
