"""A training step under `@carve.compile`: loss, backward, gradient clipping, AdamW, an LR
schedule, and the loss logged with `.item()` in a print.

    loss = model(input_ids=batch, labels=batch).loss     # graph (Dynamo: calls the model)
    optimizer.zero_grad(set_to_none=True)                # eager: mutates the optimizer
    loss.backward()                                      # eager: runs the autograd engine
    grad_norm = clip_grad_norm_(model.parameters(), 1.0) # graph
    optimizer.step(); scheduler.step()                   # eager
    print(f"step {step}: loss {loss.item():.4f} ...")    # eager: I/O and .item()

Compared with the same step run eagerly on a copy of the model: the loss of every step, what
was printed, the parameters, AdamW's moments and the learning rate after the steps.

torch.compile 2.13 itself crashes on this step from the second call on: `step` changes, so
Dynamo makes it a symbolic int, and the f-string resumed after the `.item()` graph break gets
the int where a formatted string should be ("TypeError: sequence item 1: expected str
instance, int found"; a reproducer:

    def f(x, step):
        y = x * 2
        print(f"step {step}: a {y.sum().item():.4f}")
        return y
    g = torch.compile(f, backend="eager"); g(torch.ones(3), 0); g(torch.ones(3), 1)  # TypeError

). The graph count is therefore compared with what torch.compile compiled on the first step,
before the crash: every graph of a step is compiled on the first one.
"""

from __future__ import annotations

import copy

import torch

import carve
from carve.testing import CountingBackend
from tests.models.common import VOCAB, dynamo_frames, llama, record, timed

STEPS = 5


def make_train_step(backend):
    @carve.compile(backend=backend)
    def train_step(model, optimizer, scheduler, batch, step):
        loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        print(f"step {step}: loss {loss.item():.4f} grad norm {grad_norm.item():.4f} "
              f"lr {scheduler.get_last_lr()[0]:.3e}")
        return loss.detach()

    return train_step


def optimizer_for(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
    return optimizer, warmup


def batches():
    generator = torch.Generator().manual_seed(0)
    return [torch.randint(2, VOCAB, (2, 8), generator=generator) for _ in range(STEPS)]


def test_training_step_matches_eager_and_compiles_once(capsys):
    torch.manual_seed(0)
    model = llama().train()
    reference = copy.deepcopy(model)
    backend = CountingBackend()
    train_step = make_train_step(backend)
    eager_step = train_step.__wrapped__
    optimizer, scheduler = optimizer_for(model)
    reference_optimizer, reference_scheduler = optimizer_for(reference)

    frames_after_warmup = None
    carve_first = None
    for step, batch in enumerate(batches()):
        loss, elapsed = timed(train_step, model, optimizer, scheduler, batch, step)
        carve_first = elapsed if carve_first is None else carve_first
        printed = capsys.readouterr().out
        expected = eager_step(reference, reference_optimizer, reference_scheduler, batch, step)
        assert printed == capsys.readouterr().out
        assert printed.startswith(f"step {step}: loss ")
        torch.testing.assert_close(loss, expected)
        assert not loss.requires_grad
        if step == 1:
            frames_after_warmup = backend.graphs, dynamo_frames()
    assert backend.graphs >= 1
    assert (backend.graphs, dynamo_frames()) == frames_after_warmup, "later training steps re-traced"

    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p, q, msg=lambda m: f"{name}: {m}")
        torch.testing.assert_close(optimizer.state[p]["exp_avg"], reference_optimizer.state[q]["exp_avg"])
        torch.testing.assert_close(optimizer.state[p]["exp_avg_sq"], reference_optimizer.state[q]["exp_avg_sq"])
    assert scheduler.get_last_lr() == reference_scheduler.get_last_lr()
    assert reference_scheduler.last_epoch == STEPS

    # torch.compile over the same steps, on a fresh copy of the starting model.
    torch._dynamo.reset()
    torch.manual_seed(0)
    twin = llama().train()
    twin_optimizer, twin_scheduler = optimizer_for(twin)
    tc_backend = CountingBackend()
    tc_step = torch.compile(eager_step, backend=tc_backend)
    tc_first = None
    graphs_after_first_step = None
    crashed = None
    for step, batch in enumerate(batches()):
        try:
            _, elapsed = timed(tc_step, twin, twin_optimizer, twin_scheduler, batch, step)
        except TypeError as error:  # torch 2.13's f-string bug, see the module docstring
            crashed = error
            break
        tc_first = elapsed if tc_first is None else tc_first
        if step == 0:
            graphs_after_first_step = tc_backend.graphs
    capsys.readouterr()
    record("llama training step" + (" (torch.compile crashed)" if crashed else ""), backend.graphs,
           tc_backend.graphs, carve_first, tc_first)
    assert backend.graphs <= graphs_after_first_step, (backend.graphs, graphs_after_first_step)
