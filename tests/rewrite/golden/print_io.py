"""Golden input: print() between tensor computations."""
import torch
import carve

# A module-level constant read by the compiled code.
SCALE = 0.5


@carve.compile(backend="eager")
def normalize(x):
    centered = x - x.mean()
    print("centered norm:", round(centered.norm().item(), 4))
    scaled = centered * SCALE  # trailing comment survives
    print(f"shape={tuple(scaled.shape)}", sep="")
    return scaled.relu()
