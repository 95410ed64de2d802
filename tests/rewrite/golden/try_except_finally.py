"""Golden input: try/except/finally around a graph break."""
import torch
import carve


@carve.compile(backend="eager")
def safe_divide(x, y, log):
    z = x * 2
    try:
        if bool((y == 0).any()):
            raise ZeroDivisionError("y has a zero entry")
        z = z / y
    except ZeroDivisionError as error:
        log.append(f"caught: {error}")
        z = torch.zeros_like(z)
    finally:
        log.append("finally")
    return z + 1
