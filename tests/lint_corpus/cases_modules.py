"""Accuracy corpus, nn.Module half: modules compiled with `torch.compile(Module())`.

See cases_functions.py. Each `Case*` class is instantiated and compiled at
the bottom of the file, as user code does; `ground_truth.py` explains the
instance's forward.
"""

import torch
from torch import nn


class CaseTrainingFlag(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        if self.training:
            x = x * 0.5
        return self.linear(x)


class CaseLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(x).relu()


class CaseHelperMethod(nn.Module):
    def forward(self, x):
        return self.scale(x) + 1

    def scale(self, x):
        return x * 2


class CasePrintingMethod(nn.Module):
    def forward(self, x):
        return self.scale(x) + 1

    def scale(self, x):
        print("scaling", x.shape)
        return x * 2


class CaseItemInForward(nn.Module):
    def forward(self, x):
        threshold = x.mean().item()
        return x - threshold


class CaseDataDependentForward(nn.Module):
    def forward(self, x):
        if x.norm() > 10:
            return x / x.norm()
        return x


class CaseMaskInForward(nn.Module):
    def forward(self, x):
        return x[x.abs() > 0.5].sum()


class CaseBufferUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.zeros(4))

    def forward(self, x):
        self.running.mul_(0.9).add_(x.detach() * 0.1)
        return x - self.running


training_flag = torch.compile(CaseTrainingFlag(), backend="eager")
layer_norm = torch.compile(CaseLayerNorm(), backend="eager")
helper_method = torch.compile(CaseHelperMethod(), backend="eager")
printing_method = torch.compile(CasePrintingMethod(), backend="eager")
item_model = CaseItemInForward()
item_in_forward = torch.compile(item_model, backend="eager")
data_dependent_forward = torch.compile(CaseDataDependentForward(), backend="eager")
mask_in_forward = torch.compile(CaseMaskInForward(), backend="eager")
buffer_update = torch.compile(CaseBufferUpdate(), backend="eager")
