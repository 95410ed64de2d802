"""Second accuracy corpus, nn.Module half: models as training code writes them, compiled with
`torch.compile(Model())` at the bottom of the file (see cases_train_steps.py)."""

import logging
import random

import torch
import torch.nn.functional as F
from torch import nn

from train_utils import accuracy

logger = logging.getLogger("model")


class CaseClassifierCountsSteps(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return self.body(x)


class CaseClassifierPrintsEveryHundredSteps(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        self.steps = 0

    def forward(self, x):
        if self.training and self.steps % 100 == 0:
            print(f"forward step {self.steps}, batch {tuple(x.shape)}")
        self.steps += 1
        return self.body(x)


class CaseLogsActivationStatistics(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        logger.debug("hidden mean %.4f std %.4f", h.mean().item(), h.std().item())
        return self.fc2(h)


class CaseKeepsActivationsForInspection(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)
        self.activations = {}

    def forward(self, x):
        h = F.relu(self.fc1(x))
        self.activations["hidden"] = h.detach()
        return self.fc2(h)


class CaseRaisesOnNanActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        out = self.fc(x)
        if torch.isnan(out).any():
            raise ValueError("NaN in activations")
        return out


class CaseRecordsNormsWithHelperMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.norms = []

    def forward(self, x):
        out = self.fc(x)
        self._record(out)
        return out

    def _record(self, out):
        self.norms.append(out.norm().item())


class CaseReturnsLossWhenTargetsGiven(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x, targets=None):
        logits = self.fc(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits, targets)
        return logits, loss


class CaseStochasticDepthWithPythonRandom(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.p = p

    def forward(self, x):
        if self.training and random.random() < self.p:
            return x
        return x + self.fc(x)


class CaseMixtureOfExpertsSkipsEmptyExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))

    def forward(self, x):
        expert_index = self.router(x).argmax(dim=-1)
        counts = torch.bincount(expert_index, minlength=4)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            if counts[e] > 0:
                out = out + expert(x) * (expert_index == e).unsqueeze(-1)
        return out


class CaseDropsPaddingTokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        keep = x.abs().sum(dim=-1) > 0
        return self.fc(x[keep]).mean(dim=0)


class CaseReportsTrainingAccuracy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.last_accuracy = None

    def forward(self, x, targets):
        logits = self.fc(x)
        self.last_accuracy = accuracy(logits, targets)
        return logits


class CaseWarnsOnceAboutLargeInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.warned = False

    def forward(self, x):
        if not self.warned and x.abs().max() > 100:
            logger.warning("inputs look unnormalised")
            self.warned = True
        return self.fc(x)


class CaseTemperatureFromConfig(nn.Module):
    def __init__(self, temperature=2.0):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.temperature = temperature

    def forward(self, x):
        return (self.fc(x) / self.temperature).softmax(dim=-1)


def _x():
    torch.manual_seed(2)
    return torch.randn(4, 8)


INPUTS = {
    "CaseReportsTrainingAccuracy": lambda: (_x(), torch.randint(0, 3, (4,))),
    "CaseReturnsLossWhenTargetsGiven": lambda: (_x(), torch.randint(0, 3, (4,))),
}
DEFAULT_INPUTS = lambda: (_x(),)

classifier_counts_steps = torch.compile(CaseClassifierCountsSteps(), backend="eager")
classifier_prints = torch.compile(CaseClassifierPrintsEveryHundredSteps(), backend="eager")
activation_stats = torch.compile(CaseLogsActivationStatistics(), backend="eager")
keeps_activations = torch.compile(CaseKeepsActivationsForInspection(), backend="eager")
nan_check = torch.compile(CaseRaisesOnNanActivations(), backend="eager")
records_norms = torch.compile(CaseRecordsNormsWithHelperMethod(), backend="eager")
returns_loss = torch.compile(CaseReturnsLossWhenTargetsGiven(), backend="eager")
stochastic_depth = torch.compile(CaseStochasticDepthWithPythonRandom(), backend="eager")
moe = torch.compile(CaseMixtureOfExpertsSkipsEmptyExperts(), backend="eager")
drops_padding = torch.compile(CaseDropsPaddingTokens(), backend="eager")
reports_accuracy = torch.compile(CaseReportsTrainingAccuracy(), backend="eager")
warns_once = torch.compile(CaseWarnsOnceAboutLargeInputs(), backend="eager")
temperature = torch.compile(CaseTemperatureFromConfig(), backend="eager")
