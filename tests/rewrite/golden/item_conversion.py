"""Golden input: tensor-to-Python conversions with .item(), float() and int()."""
import torch
import carve


@carve.compile(backend="eager")
def stats(x):
    mean = x.mean()
    mean_value = mean.item()
    count = int(x.numel())
    spread = float((x - mean).abs().max())
    return x / (spread + 1.0), mean_value * count
