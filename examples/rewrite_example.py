"""A small training loop compiled with carve, to show what `carve rewrite` writes.

    python examples/rewrite_example.py            # train for two epochs
    carve rewrite examples/rewrite_example.py     # the same program, outlined (docs/rewrite.md)
"""

import os

import torch
import torch.nn as nn

import carve

# Inductor by default; CARVE_BACKEND=eager skips kernel generation (the tests use it).
BACKEND = os.environ.get("CARVE_BACKEND", "inductor")


class TinyRegressor(nn.Module):
    def __init__(self, features: int = 8):
        super().__init__()
        self.hidden = nn.Linear(features, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x))).squeeze(-1)


@carve.compile(backend=BACKEND)
def train_epoch(model, optimizer, batches, log_every=2):
    """One pass over `batches`; returns the mean loss as a Python float."""
    total = 0.0
    for index, (x, y) in enumerate(batches):
        prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()  # a Python float: breaks the graph, runs eagerly
        if index % log_every == 0:
            print(f"batch {index}: loss {loss.item():.4f}")
    return total / len(batches)


def main():
    torch.manual_seed(0)
    model = TinyRegressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [(torch.randn(32, 8), torch.randn(32)) for _ in range(4)]
    for epoch in range(2):
        print(f"epoch {epoch}: mean loss {train_epoch(model, optimizer, batches):.4f}")


if __name__ == "__main__":
    main()
