"""carve bug reproducer (found by bench/capture.py on generated programs, seeds 1, 2 and 16).

A `return` guarded by a Python-scalar `if`, inside a loop, ended up inside the
outlined graph region; the region's `return` value (a tuple) was then assigned
to `x` instead of leaving the function:

    TypeError: sin(): argument 'input' (position 1) must be Tensor, not tuple

Seen on the working tree of 2025-11-22 ~13:25; it no longer reproduces after
later changes to rewriters/partition.py and outline.py. Kept as a regression
check:  .venv/bin/python bench/repro/return_in_loop_region.py  (exit 1 = bug).
"""

import sys

import torch

import carve


def in_loop(x, s):
    for i in range(2):
        x = torch.sin(x)
        if s > 0.5:
            return x * 2.0, s
    return x, s


if __name__ == "__main__":
    compiled = carve.compile(in_loop, backend="eager")
    x = torch.randn(4)
    failed = False
    for call in range(3):
        expected = in_loop(x, 1.0)
        try:
            got = compiled(x, 1.0)
            same = torch.equal(got[0], expected[0]) and got[1] == expected[1]
        except Exception as error:  # the bug shows as a TypeError
            same = False
            print(f"call {call + 1}: {type(error).__name__}: {error}")
        failed |= not same
    print("BUG REPRODUCED" if failed else "ok: carve matches eager")
    sys.exit(1 if failed else 0)
