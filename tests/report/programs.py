"""Programs whose report pages the tests read: each line's expected kind is in its comment."""

import torch


def step(x, w, n):
    """A docstring: no kind."""
    y = x @ w                           # region 1
    z = torch.relu(y) + 1               # region 1
    print("z", z.sum())                 # CRV003 (its sum is computed in a graph)
    scale = n * 2 + 1                   # a region of Python numbers: no tensor operations
    for _ in range(n):                  # Python control flow
        z = z * 0.5                     # a region inside the loop
    return z * scale                    # a region


def callee_prints(x):
    y = x.sin()
    print("callee", y.shape)
    return y.cos()


def caller(x):
    h = x + 1
    h = callee_prints(h)                # CRV016: the callee breaks, compiled on its own
    return h * 2


def no_break(x):
    y = x.sin()                         # one region: the whole call
    return y * 2


def reads_its_frame(x):
    y = x + 1
    print(sorted(locals()))             # CRV023 across a break: runs as written
    return y
