"""Accuracy corpus for `carve lint`: small compiled functions, about half with graph breaks.

Each `case_*` function is compiled; `ground_truth.py` runs each under
torch._dynamo.explain (backend eager) and records whether Dynamo breaks the
graph or skips the frame. The lint test compares `carve lint` with that
record. The names say what the case is about, not what the answer is:
the answer comes from Dynamo.
"""

import logging
import math
import warnings

import numpy as np
import torch
import torch.nn.functional as F

logger = logging.getLogger("corpus")
CALLS = []


def _noisy_helper(x):
    print("helper", x.shape)
    return x * 2


def _clean_helper(x):
    return torch.relu(x) + 1


def _item_helper(x):
    return x * x.max().item()


@torch.compiler.disable
def _disabled_helper(x):
    return x + 1


@torch._dynamo.nonstrict_trace
def _nonstrict_helper(x):
    return x * 3


# ----------------------------------------------------------------------- breaking candidates
@torch.compile(backend="eager")
def case_print(x):
    y = x.sin()
    print("y", y)
    return y.cos()


@torch.compile(backend="eager")
def case_logging(x):
    y = x * 2
    logger.warning("value %s", y.shape)
    return y + 1


@torch.compile(backend="eager")
def case_item(x):
    scale = x.abs().max().item()
    return x / scale


@torch.compile(backend="eager")
def case_tolist(x):
    values = x.tolist()
    return x + len(values)


@torch.compile(backend="eager")
def case_numpy_method(x):
    arr = x.numpy()
    return x + 1, arr


@torch.compile(backend="eager")
def case_int_of_tensor(x):
    n = int(x.sum())
    return x * n


@torch.compile(backend="eager")
def case_bool_of_tensor(x):
    flag = bool(x.mean() > 0)
    return x + flag


@torch.compile(backend="eager")
def case_float_of_tensor(x):
    v = float(x.norm())
    return x / v


@torch.compile(backend="eager")
def case_data_dependent_if(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    return y


@torch.compile(backend="eager")
def case_data_dependent_if_return(x):
    if x.max() > 1:
        return x / 2
    else:
        return x


@torch.compile(backend="eager")
def case_data_dependent_while(x):
    while x.norm() > 1:
        x = x / 2
    return x


@torch.compile(backend="eager")
def case_if_any(x):
    if (x > 3).any():
        x = x.clamp(max=3)
    return x + 1


@torch.compile(backend="eager")
def case_nonzero(x):
    idx = x.nonzero()
    return idx.sum()


@torch.compile(backend="eager")
def case_unique(x):
    values = torch.unique(x.round())
    return values.sum()


@torch.compile(backend="eager")
def case_mask_indexing(x):
    positive = x[x > 0]
    return positive.sum()


@torch.compile(backend="eager")
def case_masked_select(x):
    return torch.masked_select(x, x > 0).mean()


@torch.compile(backend="eager")
def case_explicit_graph_break(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


@torch.compile(backend="eager")
def case_generator(x):
    for i in range(2):
        yield x * i


@torch.compile(backend="eager")
def case_disabled_callee(x):
    y = x * 2
    y = _disabled_helper(y)
    return y - 1


@torch.compile(backend="eager")
def case_print_in_loop(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


@torch.compile(backend="eager")
def case_item_in_try(x):
    try:
        v = x.sum().item()
    except RuntimeError:
        v = 0.0
    return x + v


@torch.compile(backend="eager")
def case_print_in_with(x):
    with warnings.catch_warnings():
        y = x * 2
        print(y)
    return y


@torch.compile(backend="eager")
def case_numpy_call(x):
    y = np.exp(x)
    return torch.as_tensor(y) + 1


@torch.compile(backend="eager")
def case_callee_prints(x):
    y = _noisy_helper(x)
    return y + 1


@torch.compile(backend="eager")
def case_callee_item(x):
    return _item_helper(x) - 1


@torch.compile(backend="eager")
def case_backward(x):
    w = x.detach().requires_grad_()
    loss = (w * w).sum()
    loss.backward()
    return w.grad


@torch.compile(backend="eager")
def case_autograd_grad(x):
    w = x.detach().requires_grad_()
    (g,) = torch.autograd.grad((w ** 3).sum(), w)
    return g


@torch.compile(backend="eager")
def case_ternary_on_tensor(x):
    return x * 2 if x.sum() > 0 else x * 3


@torch.compile(backend="eager")
def case_warnings_warn(x):
    warnings.warn("careful")
    return x + 1


@torch.compile(backend="eager")
def case_repeat_interleave_tensor(x):
    counts = (x.abs() * 3).long()
    return torch.repeat_interleave(x, counts)


@torch.compile(backend="eager")
def case_item_into_range(x):
    total = x.new_zeros(())
    for i in range(int(x.numel())):
        total = total + x[i]
    n = x.argmax().item()
    return total * n


# ----------------------------------------------------------------------- clean candidates
@torch.compile(backend="eager")
def case_shape_if(x):
    if x.shape[0] > 2:
        return x[:2]
    return x


@torch.compile(backend="eager")
def case_none_check(x, bias=None):
    if bias is None:
        return x * 2
    return x + bias


@torch.compile(backend="eager")
def case_isinstance(x):
    if isinstance(x, torch.Tensor):
        return x.relu()
    return x


@torch.compile(backend="eager")
def case_torch_where(x):
    return torch.where(x > 0, x, torch.zeros_like(x))


@torch.compile(backend="eager")
def case_inplace_ops(x):
    y = x.clone()
    y.add_(1)
    y.mul_(2)
    return y


@torch.compile(backend="eager")
def case_dim_and_size(x):
    if x.dim() == 1 and x.size(0) == 4:
        return x.view(2, 2)
    return x


@torch.compile(backend="eager")
def case_python_loop(x):
    for i in range(3):
        x = x * 2 + i
    return x


@torch.compile(backend="eager")
def case_list_of_tensors(x):
    parts = [x * i for i in range(3)]
    return torch.stack(parts).sum(0)


@torch.compile(backend="eager")
def case_clean_callee(x):
    return _clean_helper(x) * 2


@torch.compile(backend="eager")
def case_nonstrict_callee(x):
    return _nonstrict_helper(x) + 1


@torch.compile(backend="eager")
def case_dtype_check(x):
    if x.dtype == torch.float32:
        return x.double()
    return x


@torch.compile(backend="eager")
def case_no_grad(x):
    with torch.no_grad():
        y = x * 2
    return y + 1


@torch.compile(backend="eager")
def case_math_on_shape(x):
    scale = math.sqrt(x.shape[-1])
    return x / scale


@torch.compile(backend="eager")
def case_masked_fill(x):
    return x.masked_fill(x < 0, 0.0)


@torch.compile(backend="eager")
def case_functional(x):
    return F.softmax(F.relu(x), dim=-1)


@torch.compile(backend="eager")
def case_python_flag(x, flag=True):
    if flag:
        return x + 1
    return x - 1


@torch.compile(backend="eager")
def case_len_of_tensor(x):
    return x * len(x)


@torch.compile(backend="eager")
def case_tensor_comparison_value(x):
    positive = x > 0
    return positive.float().mean()


@torch.compile(backend="eager")
def case_dict_of_tensors(x):
    out = {"a": x * 2, "b": x + 1}
    return out["a"] + out["b"]


@torch.compile(backend="eager")
def case_assert_shape(x):
    assert x.ndim == 1
    return x.cumsum(0)


@torch.compile(backend="eager")
def case_clamp_reduce(x):
    return x.clamp(min=-1, max=1).abs().sum()


@torch.compile(backend="eager")
def case_loop_over_rows(x):
    m = x.view(2, 2)
    total = m.new_zeros(2)
    for row in m:
        total = total + row
    return total


@torch.compile(backend="eager")
def case_nested_function(x):
    def inner(t):
        return t * 3

    return inner(x) + 1


@torch.compile(backend="eager")
def case_string_formatting(x):
    name = "layer_%d" % 3
    return x + len(name)


@torch.compile(backend="eager")
def case_max_with_dim(x):
    values, indices = x.view(2, 2).max(dim=1)
    return values + indices


@torch.compile(backend="eager")
def case_where_three_args_mask(x):
    mask = x > 0
    return torch.where(mask, x, -x).sum()


@torch.compile(backend="eager")
def case_chunk_and_cat(x):
    a, b = x.chunk(2)
    return torch.cat([b, a])


@torch.compile(backend="eager")
def case_is_compiling(x):
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1


INPUTS = {
    "case_none_check": lambda: (torch.randn(4),),
    "case_numpy_method": lambda: (torch.randn(4),),
}
