"""Held-out corpus for `carve lint`: training-style functions written after the linter's checks
were last changed, measured once and reported as they came out (docs/lint.md). Not tuned on:
no check was changed because of these cases.
"""

import json
import logging
import math
import random

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)
SEEN = []
TOTALS = {"loss": 0.0, "steps": 0}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 4))


def _batch():
    torch.manual_seed(3)
    return torch.randn(5, 6), torch.randint(0, 4, (5,))


def _model_batch():
    return (_model(), *_batch())


class ScalarWriter:
    """A TensorBoard-like writer."""

    def __init__(self):
        self.rows = []

    def add_scalar(self, tag, value, step):
        self.rows.append((tag, float(value), step))


def cross_entropy_with_logging(logits, y):
    loss = F.cross_entropy(logits, y)
    log.info("ce %.4f", loss)
    return loss


def masked_mean(x, mask):
    return (x * mask).sum() / mask.sum().clamp(min=1)


@torch.compile(backend="eager")
def case_accumulate_then_step(model, optimizer, x, y, step):
    loss = F.cross_entropy(model(x), y) / 4
    if (step + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
    return loss


@torch.compile(backend="eager")
def case_print_flush(model, x, y):
    loss = F.cross_entropy(model(x), y)
    print("loss", float(loss), flush=True)
    return loss


@torch.compile(backend="eager")
def case_detach_cpu_item(model, x, y):
    loss = F.cross_entropy(model(x), y)
    TOTALS["loss"] += loss.detach().cpu().item()
    TOTALS["steps"] += 1
    return loss


@torch.compile(backend="eager")
def case_writer_add_scalar(model, x, y, writer, step):
    loss = F.cross_entropy(model(x), y)
    writer.add_scalar("train/loss", loss, step)
    return loss


@torch.compile(backend="eager")
def case_json_metrics_line(model, x, y):
    logits = model(x)
    acc = (logits.argmax(-1) == y).float().mean()
    line = json.dumps({"acc": round(acc.item(), 3)})
    return logits, line


@torch.compile(backend="eager")
def case_helper_logs_loss(model, x, y):
    return cross_entropy_with_logging(model(x), y)


@torch.compile(backend="eager")
def case_masked_mean_helper(model, x, y):
    logits = model(x)
    mask = (y > 0).float().unsqueeze(-1)
    return masked_mean(logits, mask)


@torch.compile(backend="eager")
def case_nan_assert(model, x, y):
    loss = F.cross_entropy(model(x), y)
    assert not torch.isnan(loss), "nan loss"
    return loss


@torch.compile(backend="eager")
def case_skip_if_loss_too_small(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if loss < 1e-3:
        return torch.zeros_like(loss)
    return loss


@torch.compile(backend="eager")
def case_clamp_loss_tensor(model, x, y):
    loss = F.cross_entropy(model(x), y)
    return torch.clamp(loss, max=10.0)


@torch.compile(backend="eager")
def case_temperature_annealing(model, x, step):
    temperature = max(0.5, 1.0 - step * 1e-3)
    return (model(x) / temperature).softmax(-1)


@torch.compile(backend="eager")
def case_random_augmentation_flip(model, x):
    if random.random() < 0.5:
        x = x.flip(-1)
    return model(x)


@torch.compile(backend="eager")
def case_log_perplexity(model, x, y):
    loss = F.cross_entropy(model(x), y)
    ppl = math.exp(loss.item())
    log.info("ppl %.2f", ppl)
    return loss


@torch.compile(backend="eager")
def case_perplexity_tensor(model, x, y):
    loss = F.cross_entropy(model(x), y)
    return loss, torch.exp(loss)


@torch.compile(backend="eager")
def case_store_predictions_list(model, x):
    preds = model(x).argmax(-1)
    SEEN.extend(preds.tolist())
    return preds


@torch.compile(backend="eager")
def case_best_of_topk_python_max(model, x):
    scores = model(x).softmax(-1).max(-1).values
    best = max(scores)
    return best


@torch.compile(backend="eager")
def case_label_counts_bincount(y):
    return torch.bincount(y, minlength=4).float() / y.numel()


@torch.compile(backend="eager")
def case_select_confident(model, x, threshold):
    probs = model(x).softmax(-1)
    confident = probs.max(-1).values > threshold
    return probs[confident]


@torch.compile(backend="eager")
def case_where_confident(model, x, threshold):
    probs = model(x).softmax(-1)
    confident = probs.max(-1).values > threshold
    return torch.where(confident.unsqueeze(-1), probs, torch.zeros_like(probs))


@torch.compile(backend="eager")
def case_grad_norm_printed_every_step(model):
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    print(f"grad norm {norm:.3f}")
    return norm


@torch.compile(backend="eager")
def case_weight_decay_manual(model, lr, wd):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1 - lr * wd)


@torch.compile(backend="eager")
def case_early_stop_patience_counter(model, x, y, state):
    val = F.cross_entropy(model(x), y)
    if val.item() < state["best"]:
        state["best"] = val.item()
        state["patience"] = 0
    else:
        state["patience"] += 1
    return state["patience"] > 5


@torch.compile(backend="eager")
def case_metric_dict_update(model, x, y, metrics):
    logits = model(x)
    metrics["loss"] = F.cross_entropy(logits, y).detach()
    metrics["acc"] = (logits.argmax(-1) == y).float().mean()
    return metrics


@torch.compile(backend="eager")
def case_loss_type_dispatch(model, x, y, kind):
    logits = model(x)
    if kind == "ce":
        return F.cross_entropy(logits, y)
    elif kind == "nll":
        return F.nll_loss(logits.log_softmax(-1), y)
    return logits.sum()


def _with_grads():
    model, x, y = _model_batch()
    F.cross_entropy(model(x), y).backward()
    return model


INPUTS = {
    "case_accumulate_then_step": lambda: (lambda m: (m, torch.optim.SGD(m.parameters(), lr=0.1), *_batch(), 3))(_with_grads()),
    "case_writer_add_scalar": lambda: (*_model_batch(), ScalarWriter(), 0),
    "case_temperature_annealing": lambda: (_model(), _batch()[0], 10),
    "case_random_augmentation_flip": lambda: (_model(), _batch()[0]),
    "case_store_predictions_list": lambda: (_model(), _batch()[0]),
    "case_best_of_topk_python_max": lambda: (_model(), _batch()[0]),
    "case_label_counts_bincount": lambda: (_batch()[1],),
    "case_select_confident": lambda: (_model(), _batch()[0], 0.3),
    "case_where_confident": lambda: (_model(), _batch()[0], 0.3),
    "case_grad_norm_printed_every_step": lambda: (_with_grads(),),
    "case_weight_decay_manual": lambda: (_model(), 0.1, 0.01),
    "case_early_stop_patience_counter": lambda: (*_model_batch(), {"best": 10.0, "patience": 0}),
    "case_metric_dict_update": lambda: (*_model_batch(), {}),
    "case_loss_type_dispatch": lambda: (*_model_batch(), "nll"),
}
DEFAULT_INPUTS = _model_batch
