"""Golden input: early returns, one inside a loop, and an exception for bad input."""
import torch
import carve


@carve.compile(backend="eager")
def first_large_row(x, threshold):
    if x.dim() != 2:
        raise ValueError(f"expected a matrix, got {x.dim()} dimensions")
    scores = x.abs().sum(dim=1)
    for index in range(x.shape[0]):
        if scores[index].item() > threshold:
            return x[index] * 2, index
    return scores, -1
