"""Review of GraphRegion._run_with_compiled_models: a region that runs its model compiled must
still give eager's answers (hooks, parametrizations, models changing between calls...)."""

from __future__ import annotations

import copy
import pickle
import threading

import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

import carve
from tests.runtime.test_compiled_models import MODEL_REASON, assert_left_as_written
from tests.runtime.test_worth_compiling import priced_backend


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def model_then_print(model, x):
    y = model(x)
    z = y * 2
    print("mean", round(z.mean().item(), 4))
    return z


def assert_model_rule(compiled):
    assert any(MODEL_REASON in (region.eager_reason or "") for region in compiled.regions), \
        [(r.name, r.eager_reason) for r in compiled.regions]


def test_a_forward_hook_sees_the_model_itself():
    # Activation capture keyed by module (a common pattern): eager hands the hook the model.
    torch.manual_seed(0)
    model = Net()
    names = {module: name for name, module in model.named_modules()}
    seen = []
    model.register_forward_hook(lambda module, args, out: seen.append((names.get(module), module is model)))
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))
    assert_model_rule(compiled)
    assert seen == [("", True)] * 8


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


class Mixer(nn.Module):
    """A model that owns its weight (a parametrization of it changes the model's own class)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(5, 5))

    def forward(self, x):
        for _ in range(3):
            x = torch.tanh(x @ self.weight + 1) * 0.5
        return x


def linear_then_print(layer, x):
    y = layer(x) * 3
    print("mean", round(y.mean().item(), 4))
    return y


def test_a_parametrization_registered_after_the_model_ran_in_the_region():
    torch.manual_seed(1)
    layer = Mixer()
    compiled = carve.compile(linear_then_print, backend=priced_backend())
    for call in range(3):
        x = torch.randn(2, 5)
        torch.testing.assert_close(compiled(layer, x), linear_then_print(layer, x))
    assert_model_rule(compiled)
    parametrize.register_parametrization(layer, "weight", Symmetric())  # layer's class changes
    for call in range(3):
        x = torch.randn(2, 5)
        torch.testing.assert_close(compiled(layer, x), linear_then_print(layer, x))
    parametrize.remove_parametrizations(layer, "weight")  # and back
    for call in range(3):
        x = torch.randn(2, 5)
        torch.testing.assert_close(compiled(layer, x), linear_then_print(layer, x))


class Doubled(Mixer):
    def forward(self, x):
        return super().forward(x) * 2 - 1


def test_the_models_class_swapped_for_one_with_another_forward():
    torch.manual_seed(14)
    layer = Mixer()
    compiled = carve.compile(linear_then_print, backend=priced_backend())
    for call in range(6):
        if call == 3:
            layer.__class__ = Doubled
        x = torch.randn(2, 5)
        torch.testing.assert_close(compiled(layer, x), linear_then_print(layer, x), msg=lambda m: f"{call}: {m}")
    assert_model_rule(compiled)


def model_and_submodule(model, x):
    a = model(x)
    b = model.hidden(x).sum(-1, keepdim=True)
    c = model(x * 2)
    print("mean", round(a.mean().item(), 4))
    return a + b + c


def test_a_region_calls_the_model_twice_and_a_submodule_of_it():
    torch.manual_seed(2)
    model = Net()
    compiled = carve.compile(model_and_submodule, backend=priced_backend())
    for call in range(4):
        x = torch.randn(4, 6, requires_grad=True)
        out, expected = compiled(model, x), model_and_submodule(model, x)
        torch.testing.assert_close(out, expected)
        g1, = torch.autograd.grad(out.sum(), x)
        g2, = torch.autograd.grad(expected.sum(), x)
        torch.testing.assert_close(g1, g2)
    assert_model_rule(compiled)


def test_no_grad_then_grad():
    torch.manual_seed(3)
    model = Net()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(6):
        x = torch.randn(4, 6)
        if call % 2 == 0:
            with torch.no_grad():
                out, expected = compiled(model, x), model_then_print(model, x)
            assert not out.requires_grad
        else:
            out, expected = compiled(model, x), model_then_print(model, x)
            assert out.requires_grad
        torch.testing.assert_close(out, expected)
    assert_model_rule(compiled)


def test_a_model_replaced_and_deleted():
    torch.manual_seed(4)
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(6):
        model = Net()  # a new model each call; the old one dies
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))
        del model
    assert_model_rule(compiled)


def test_pickle_and_deepcopy_after_the_region():
    torch.manual_seed(5)
    model = Net()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(3):
        x = torch.randn(4, 6)
        compiled(model, x)
    assert_model_rule(compiled)
    twin = copy.deepcopy(model)
    assert_left_as_written(twin)
    again = pickle.loads(pickle.dumps(model))
    assert_left_as_written(again)
    assert list(model.state_dict()) == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Net()
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x):
        y = self.inner(x)
        print("inner", round(y.mean().item(), 4))  # a break in the model's forward
        return self.inner(x + 1) * self.scale


def test_nested_regions_both_running_models():
    torch.manual_seed(6)
    model = Outer()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(5):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))
    assert_left_as_written(model)
    assert_left_as_written(model.inner)


def test_a_model_called_from_another_thread_while_the_region_runs():
    torch.manual_seed(7)
    model = Net()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    errors = []

    def other():
        try:
            with torch.no_grad():
                for _ in range(50):
                    x = torch.randn(2, 6)
                    torch.testing.assert_close(model(x), Net.forward(model, x))
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    for call in range(3):
        compiled(model, torch.randn(4, 6))
    thread = threading.Thread(target=other)
    thread.start()
    for call in range(20):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))
    thread.join()
    assert not errors, errors
    assert_model_rule(compiled)


class Scripted(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        return self.lin(x).relu()


def test_a_torchscript_model():
    torch.manual_seed(8)
    model = torch.jit.script(Scripted())
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))


def test_a_traced_model():
    torch.manual_seed(9)
    model = torch.jit.trace(Scripted(), torch.randn(4, 6))
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))


def test_an_fx_graph_module():
    torch.manual_seed(10)
    model = torch.fx.symbolic_trace(Scripted())
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x))
    assert_model_rule(compiled)


def test_hooks_added_and_removed_between_calls():
    torch.manual_seed(11)
    model = Net()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(8):
        handles = []
        if call % 2:
            handles.append(model.register_forward_pre_hook(lambda m, args: (args[0] * 2,)))
            handles.append(model.register_forward_hook(lambda m, args, out: out + 1))
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x), model_then_print(model, x), msg=lambda m: f"{call}: {m}")
        for handle in handles:
            handle.remove()
    assert_model_rule(compiled)


def test_an_error_in_the_forward_on_a_later_call():
    torch.manual_seed(12)
    model = Net()
    compiled = carve.compile(model_then_print, backend=priced_backend())
    for call in range(3):
        compiled(model, torch.randn(4, 6))
    with pytest.raises(RuntimeError) as expected:
        model_then_print(model, torch.randn(4, 5))
    with pytest.raises(RuntimeError) as raised:
        compiled(model, torch.randn(4, 5))
    assert str(raised.value) == str(expected.value)
    assert_left_as_written(model)
    x = torch.randn(4, 6)
    torch.testing.assert_close(compiled(model, x), model_then_print(model, x))


def test_carve_disable_around_a_call():
    torch.manual_seed(13)
    model = Net()
    backend = priced_backend()
    compiled = carve.compile(model_then_print, backend=backend)
    for call in range(3):
        compiled(model, torch.randn(4, 6))
    graphs = backend.graphs
    x = torch.randn(4, 6)
    torch.testing.assert_close(carve.disable(compiled)(model, x), model_then_print(model, x))
    assert backend.graphs == graphs


def lm_step(model, ids):
    out = model(ids, labels=ids)
    print("loss", round(out.loss.item(), 4))
    return out.logits, out.loss


@pytest.mark.inductor
def test_a_transformers_model_with_a_hook_keyed_by_module_under_inductor():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(15)
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=64, n_positions=32)
    model = transformers.GPT2LMHeadModel(config).eval()  # no dropout: Inductor's stream is not eager's
    names = {module: name for name, module in model.named_modules()}
    seen = []
    model.register_forward_hook(lambda module, args, out: seen.append(names[module]))
    compiled = carve.compile(lm_step, backend="inductor")
    for call in range(3):
        ids = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(call))
        logits, loss = compiled(model, ids)
        expected_logits, expected_loss = lm_step(model, ids)
        torch.testing.assert_close((logits, loss), (expected_logits, expected_loss))
        grads = torch.autograd.grad(loss, model.lm_head.weight)
        torch.testing.assert_close(grads, torch.autograd.grad(expected_loss, model.lm_head.weight))
    assert_model_rule(compiled)
    assert seen == [""] * 6
    assert_left_as_written(model)
