"""Training utilities the corpus cases call, as a project's `utils.py` would hold them.

Not cases themselves: they are reached from the compiled cases in the other files (the
linter follows the imports by path, Dynamo traces into them).
"""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("train_utils")


def accuracy(logits, targets):
    return (logits.argmax(dim=-1) == targets).float().mean()


def smooth_labels(targets, num_classes, eps=0.1):
    one_hot = F.one_hot(targets, num_classes).float()
    return one_hot * (1 - eps) + eps / num_classes


def grad_norm(parameters):
    norms = [p.grad.norm() for p in parameters if p.grad is not None]
    return torch.stack(norms).norm()


def log_metrics(metrics, step=None):
    for name, value in metrics.items():
        logger.info("step %s %s=%s", step, name, value)


def format_metrics(metrics):
    return " ".join(f"{name}={value.item():.4f}" for name, value in metrics.items())


def check_finite(loss):
    if not torch.isfinite(loss):
        raise FloatingPointError("loss is not finite")
    return loss


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n
        self.avg = self.sum / self.count


class EarlyStopping:
    def __init__(self, patience=3, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def step(self, loss):
        if loss < self.best - self.min_delta:
            self.best = loss
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


class RunLogger:
    """A wandb-like run: `run.log({...})` keeps the rows."""

    def __init__(self):
        self.rows = []

    def log(self, data, step=None):
        self.rows.append((step, data))
