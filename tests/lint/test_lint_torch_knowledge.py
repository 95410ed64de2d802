"""`carve lint` agrees with the installed torch.

carve never imports torch to lint, so what it knows of Dynamo is copied into its rules: the
functions and modules Dynamo skips, the layers that build parameters, which version's behaviour
the rules describe. These tests import the installed torch and compare; when torch is upgraded,
the ones that fail say what to copy again (and the corpora of tests/lint_corpus* are relabelled
with tests/lint_corpus/ground_truth.py). The last test runs the constructs whose verdict was once
in doubt under `torch._dynamo.explain` and lints them: both must agree.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch._dynamo.trace_rules as trace_rules
from torch import nn
from torch._dynamo.variables import SkipFunctionVariable

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.lint.torch_version import CHECKED_WITH, installed_torch_version, parse_version
from carve.rewriters.rules import crv013_disabled_callee as skipped
from carve.rewriters.rules import crv024_rnn_module as rnn_module
from carve.rewriters.rules import crv025_parameter_in_compiled_code as parameters
from tests.lint_corpus.ground_truth import explain_case


def test_the_rules_were_checked_against_the_installed_torch():
    installed = parse_version(torch.__version__)
    assert installed[:2] == CHECKED_WITH[:2], (
        f"torch {torch.__version__} is installed, the rules were checked against {CHECKED_WITH}: relabel the corpora "
        "(tests/lint_corpus/ground_truth.py), rerun tests/lint, and update CHECKED_WITH and docs/lint.md")


def test_the_installed_version_is_read_without_importing_torch():
    assert installed_torch_version() == parse_version(torch.__version__)
    probe = ("import sys; from carve.rewriters.lint.torch_version import installed_torch_version as v; "
             "print(v()); assert 'torch' not in sys.modules")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(parse_version(torch.__version__))


def test_the_skipped_torch_functions_are_the_installed_dynamos():
    installed = {name for name, rule in trace_rules.manual_torch_name_rule_map.items()
                 if rule is SkipFunctionVariable and "#" not in name and not name.startswith("torch._")}
    installed.discard("torch.autograd.backward")  # a backward pass: CRV012's
    assert skipped.DYNAMO_SKIPPED_TORCH_FUNCTIONS == installed


def test_the_skipped_packages_and_standard_modules_are_the_installed_dynamos():
    assert skipped.DYNAMO_THIRDPARTY_SKIPLIST == set(trace_rules.THIRDPARTY_SKIPLIST)
    assert skipped.DYNAMO_SKIPPED_STDLIB_MODULES == {module.__name__ for module in trace_rules.BUILTIN_SKIPLIST}
    from torch._dynamo.variables.misc import RandomVariable

    assert {name.split(".", 1)[1] for name in skipped.TRACED_RANDOM_FUNCTIONS} <= RandomVariable._supported_fn_names


def test_the_untraced_numpy_functions_are_those_the_installed_torch_numpy_lacks():
    import inspect

    import numpy as np
    import torch._numpy as tnp

    from carve.rewriters.checks.context import UNTRACED_NUMPY

    translated = {name for name in dir(tnp) if not name.startswith("_")}
    translated_objects = {id(getattr(np, name)) for name in translated if hasattr(np, name)}
    lacking = set()
    for name in dir(np):
        value = getattr(np, name, None)
        if name.startswith("_") or name in translated or value is None or inspect.ismodule(value) or not callable(value):
            continue
        if inspect.isclass(value) and (issubclass(value, (np.generic, np.dtype, BaseException, Warning))
                                       or value is np.ndarray):
            continue  # scalar types and dtypes Dynamo handles, exceptions and warnings
        if id(value) not in translated_objects:  # `np.acos` is `np.arccos`
            lacking.add(name)
    assert UNTRACED_NUMPY == lacking


def test_the_skipped_torch_modules_are_skipped_by_the_installed_dynamo():
    import torch.utils.data as data

    assert "torch.utils.data." in skipped.DYNAMO_SKIPPED_TORCH_MODULES
    for name in ("DataLoader", "TensorDataset", "Subset", "random_split", "default_collate", "RandomSampler"):
        assert trace_rules.lookup(getattr(data, name)) is SkipFunctionVariable, name


def _builds_parameters(cls) -> bool:
    required = [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    arguments = [4, 2] + [8] * (len(required) - 2) if cls.__name__.startswith(("Multihead", "Transformer")) else [4] * len(required)
    try:
        module = cls(*arguments)
    except Exception:
        return False
    return any(True for _ in module.parameters())


def test_the_layers_that_build_parameters_are_the_installed_torchs():
    classes = [getattr(nn, name) for name in dir(nn) if inspect.isclass(getattr(nn, name))
               and issubclass(getattr(nn, name), nn.Module) and not name.startswith("Lazy")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        building = {cls.__name__ for cls in classes if cls.__module__.startswith("torch.nn.modules")
                    and _builds_parameters(cls)}
    building -= {"Transformer", "TransformerEncoder", "TransformerDecoder"}  # containers of the layers below
    assert building <= parameters.PARAMETERIZED_MODULES | {"RNNBase", "RNNCellBase"}, building - parameters.PARAMETERIZED_MODULES
    assert {"Linear", "Conv2d", "LayerNorm", "Embedding", "MultiheadAttention"} <= building


def test_dynamo_refuses_exactly_the_rnn_modules_carve_names():
    for cls in (nn.RNN, nn.LSTM, nn.GRU):
        assert f"torch.nn.{cls.__name__}" in rnn_module.RNN_MODULES
    module = nn.LSTM(4, 4)
    verdict = explain_case(lambda x: module(x * 2)[0] + 1, (torch.randn(2, 3, 4),))
    assert verdict["graph_break"] and any("RNN, GRU, or LSTM" in reason for reason in verdict["dynamo_breaks"])
    cell = nn.LSTMCell(4, 4)
    assert not explain_case(lambda x: cell(x * 2)[0] + 1, (torch.randn(3, 4),))["graph_break"]


# Constructs whose verdict was once in doubt, each as a compiled function: explain on the installed
# torch and `carve lint` must say the same (a default finding in the function <=> a counted break).
AGREEMENT = '''
import contextlib
import logging
import time

import numpy as np
import torch
from torch import nn

log = logging.getLogger("carve.agreement")
lstm = nn.LSTM(4, 4)
cell = nn.LSTMCell(4, 4)


def squares(x):
    for i in range(3):
        yield x * i


@contextlib.contextmanager
def tagged():
    yield


@torch.compile(backend="eager")
def log_first(x):
    log.warning("step")
    return x * 2


@torch.compile(backend="eager")
def log_after(x):
    y = x * 2
    log.warning("step")
    return y + 1


@torch.compile(backend="eager")
def clock_first(x):
    t0 = time.time()
    return x * 2


@torch.compile(backend="eager")
def clock_after(x):
    y = x * 2
    t0 = time.time()
    return y + 1


@torch.compile(backend="eager")
def tolist_first(x):
    vals = x.long().tolist()
    return torch.tensor(vals) * 2


@torch.compile(backend="eager")
def tolist_after(x):
    y = (x * 2).long()
    vals = y.tolist()
    return torch.tensor(vals) + 1


@torch.compile(backend="eager")
def rnn_module(x):
    return lstm(x * 2)[0] + 1


@torch.compile(backend="eager")
def rnn_cell(x):
    return cell(x[0] * 2)[0] + 1


@torch.compile(backend="eager")
def slicing_with_tensor_elements(data):
    ix = torch.randint(len(data) - 4, (3,))
    return torch.stack([data[i:i + 4] for i in ix])


@torch.compile(backend="eager")
def generator_call(x):
    y = x * 2
    return sum(squares(y))


@torch.compile(backend="eager")
def context_manager(x):
    y = x * 2
    with tagged():
        y = y + 1
    return y


@torch.compile(backend="eager")
def nonzero_after(x):
    y = x * 2
    return torch.nonzero(y > 0) + 1


@torch.compile(backend="eager")
def repeat_interleave_int(x):
    y = x * 2
    return torch.repeat_interleave(y, y.shape[0])


@torch.compile(backend="eager")
def repeat_interleave_tensor(x):
    y = x * 2
    return torch.repeat_interleave(y, (y.abs() * 2).long())


@torch.compile(backend="eager")
def numpy_beta_after(x):
    y = x * 2
    return y * float(np.random.beta(1.0, 1.0))


@torch.compile(backend="eager")
def numpy_array_draw(x):
    y = x * 2
    return y, np.random.rand(4)


@torch.compile(backend="eager")
def assert_not_after(x):
    y = x * 2
    assert not torch.isnan(y.sum())
    return y


@torch.compile(backend="eager")
def assert_tensor_after(x):
    y = x * 2
    assert torch.isfinite(y).all()
    return y


@torch.compile(backend="eager")
def inplace_view_of_input(x):
    y = x * 2
    x.t_()
    return y


@torch.compile(backend="eager")
def inplace_view_of_new(x):
    y = x * 2
    z = y.clone()
    z.t_()
    return z


@torch.compile(backend="eager")
def item_of_linspace_elements(x):
    return [v.item() for v in torch.linspace(0, 1, 4)]


@torch.compile(backend="eager")
def data_loader_built(x):
    y = x * 2
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(y), 2)


@torch.compile(backend="eager")
def optimizer_step_after(x, optimizer):
    y = x * 2
    optimizer.step()
    return y


@torch.compile(backend="eager")
def assert_built_message_after(x):
    y = x * 2
    assert (y > -100).all(), f"{y.shape} must be big"
    return y + 1


@torch.compile(backend="eager")
def assert_literal_message_after(x):
    y = x * 2
    assert (y > -100).all(), "must be big"
    return y + 1


def validate_all(tensors):
    for t in tensors:
        assert t.min() >= -100, f"got {t.min()}"


@torch.compile(backend="eager")
def skipped_callee_first(x):
    validate_all([x])
    return x * 2


@torch.compile(backend="eager")
def skipped_callee_after(x):
    y = x * 2
    validate_all([x])
    return y + 1


@torch.compile(backend="eager")
def range_of_tensor(x):
    n = torch.ceil(x.abs().sum())
    s = x * 0
    for _ in range(n.long()):
        s = s + 1
    return s


@torch.compile(backend="eager")
def cov_after(x):
    y = torch.stack([x, x * 2])
    return torch.cov(y) * 2


@torch.compile(backend="eager")
def type_as_branch(x):
    y = (x * 2).sum().type_as(x)
    if y > 0:
        return x
    return -x


@torch.compile(backend="eager")
def numpy_isin_after(x):
    y = x * 2
    m = np.isin(np.arange(4), [1, 2])
    return y + torch.from_numpy(m)


@torch.compile(backend="eager")
def numpy_hanning_after(x):
    y = x * 2
    return y + torch.from_numpy(np.hanning(4))


@torch.compile(backend="eager")
def sgd_by_augmented_assignment(params):
    with torch.no_grad():
        for p in params:
            p -= 0.1 * p.grad
            p.grad.zero_()
'''
INPUTS = {"rnn_module": lambda: (torch.randn(2, 3, 4),), "rnn_cell": lambda: (torch.randn(2, 3, 4),),
          "slicing_with_tensor_elements": lambda: (torch.randn(20),), "inplace_view_of_input": lambda: (torch.randn(2, 3),),
          "inplace_view_of_new": lambda: (torch.randn(2, 3),), "optimizer_step_after": lambda: _optimizer_input(),
          "sgd_by_augmented_assignment": lambda: ([_with_grad()],)}


def _with_grad():
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    return w


def _optimizer_input():
    w = _with_grad()
    return torch.randn(4), torch.optim.SGD([w], lr=0.1)


@pytest.fixture(scope="module")
def agreement(tmp_path_factory):
    path = tmp_path_factory.mktemp("agreement") / "agreement.py"
    path.write_text(textwrap.dedent(AGREEMENT))
    spec = importlib.util.spec_from_file_location("carve_lint_agreement", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = lint_source(path.read_text(), str(path), LintConfig())
    assert result.error is None
    return module, result.findings, path


@pytest.mark.parametrize("name", [
    "log_first", "log_after", "clock_first", "clock_after", "tolist_first", "tolist_after", "rnn_module",
    "rnn_cell", "slicing_with_tensor_elements", "generator_call", "context_manager",
    # the constructs the third held-out real-code corpus led to (docs/lint.md)
    "nonzero_after", "repeat_interleave_int", "repeat_interleave_tensor", "numpy_beta_after", "numpy_array_draw",
    "assert_not_after", "assert_tensor_after", "inplace_view_of_input", "inplace_view_of_new",
    "item_of_linspace_elements", "data_loader_built", "optimizer_step_after", "sgd_by_augmented_assignment",
    # the constructs the fourth held-out real-code corpus led to (docs/lint.md)
    "assert_built_message_after", "assert_literal_message_after", "skipped_callee_first", "skipped_callee_after",
    "range_of_tensor", "cov_after", "type_as_branch", "numpy_isin_after", "numpy_hanning_after",
])
def test_lint_and_explain_agree_on_the_installed_torch(name, agreement):
    module, findings, path = agreement
    function = getattr(module, name)
    verdict = explain_case(function._torchdynamo_orig_callable, INPUTS.get(name, lambda: (torch.randn(4),))())
    source_lines, first = inspect.getsourcelines(function._torchdynamo_orig_callable)
    flagged = [f for f in findings if first <= f.line < first + len(source_lines)]
    assert bool(flagged) == verdict["graph_break"], (flagged, verdict)
