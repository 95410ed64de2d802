"""Golden input: a loop that breaks on a data-dependent condition."""
import torch
import carve


@carve.compile(backend="eager")
def accumulate_until(x, limit):
    total = torch.zeros_like(x)
    steps = 0
    for step in range(1, 10):
        total = total + x * step
        steps = step
        if total.sum() > limit:  # data-dependent: decided by tensor values
            break
    return total * 2, steps
