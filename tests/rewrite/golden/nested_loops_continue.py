"""Golden input: nested loops, the inner one skipping with `continue`."""
import torch
import carve


@carve.compile(backend="eager")
def masked_pair_sums(x, y, skipped):
    total = torch.zeros(())
    for i in range(x.shape[0]):
        row = x[i] * 2
        for j in range(y.shape[0]):
            if (row * y[j]).sum().item() < 0:
                skipped.append((i, j))
                continue
            total = total + (row * y[j]).sum()
    return total
