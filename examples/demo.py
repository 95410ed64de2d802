"""carve in one minute: a training step torch.compile skips, compiled around its breaks.

Run with `make demo`. It compiles a model whose forward prints inside a loop
and whose training step reads `.item()` for logging, checks that carve's
results and gradients equal eager PyTorch's, and shows where carve broke the
graph, and why, before the program ran.
"""

from __future__ import annotations

import contextlib
import io
import time

import torch

import carve


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(4))
        self.head = torch.nn.Linear(64, 1)

    def forward(self, x, verbose=False):
        for i, block in enumerate(self.blocks):
            x = torch.nn.functional.gelu(block(x)) + x
            if verbose:
                print(f"  block {i}: mean activation {x.mean():.4f}")
        return self.head(x)


def train_step(model, x, y, step):
    prediction = model(x, verbose=step == 0)
    loss = torch.nn.functional.mse_loss(prediction, y)
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.5f}")
    return loss


def main() -> None:
    torch.manual_seed(0)
    model = Net()
    reference = Net()
    reference.load_state_dict(model.state_dict())
    x, y = torch.randn(256, 64), torch.randn(256, 1)

    compiled_step = carve.compile(train_step, backend="inductor")
    compiled_model = carve.compile(model, backend="inductor")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05)

    print("carve-compiled training (Inductor kernels, graph breaks outlined):")
    start = time.perf_counter()
    for step in range(10):
        opt.zero_grad()
        loss = compiled_step(compiled_model, x, y, step)
        loss.backward()
        opt.step()
        with contextlib.redirect_stdout(io.StringIO()):
            ref_opt.zero_grad()
            ref_loss = train_step(reference, x, y, step)
            ref_loss.backward()
            ref_opt.step()
        assert torch.allclose(loss, ref_loss, rtol=1e-4, atol=1e-5), (loss, ref_loss)
    elapsed = time.perf_counter() - start
    same = all(torch.allclose(p, q, rtol=1e-4, atol=1e-5) for p, q in zip(model.parameters(), reference.parameters()))
    print(f"\n10 steps in {elapsed:.1f}s (includes Inductor's first compile); "
          f"weights equal to eager PyTorch: {same}")

    print("\nwhat carve did to Net.forward (first lines of the generated code):")
    forward = compiled_model._compiled_forward
    for line in (forward.generated_source or "").splitlines()[:24]:
        print("   ", line)
    graphs = sum(len(r.graphs) for r in forward.regions) + sum(
        len(r.graphs) for r in compiled_step.regions)
    print(f"\ncompiled graphs: {graphs}")

    print("\ncarve.explain(train_step): every graph break, with file:line, rule and hint:")
    with contextlib.redirect_stdout(io.StringIO()):
        report = carve.explain(train_step)(Net(), x, y, 0)
    for reason in report.break_reasons:
        print(f"  {reason.code} line {reason.line}: {reason.message}")
        print(f"      hint: {reason.hint}")
    if not same:
        raise SystemExit("carve demo: results differ from eager PyTorch")


if __name__ == "__main__":
    main()
