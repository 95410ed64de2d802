"""Every callable torch.compile accepts, with eager's semantics.

Decorated functions keep their wrapper's behaviour and defaults while the wrapped body is
compiled; builtins are one graph of the whole call; partials keep their arguments; callable
objects and bound methods keep their object; `carve.compile(module)` is an `nn.Module` of
the module's own class. Every result is compared with eager on several calls.
"""

from __future__ import annotations

import copy
import functools
import io
import pickle

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import carve

BACKENDS = ["eager", "aot_eager"]


def counting(calls: list):
    """A decorator with state and a keyword default, written the functools.wraps way."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, scale=2.0, **kwargs):
            calls.append(scale)
            return fn(*args, **kwargs) * scale

        return wrapper

    return decorate


def graphs_of(compiled) -> int:
    from carve.api import compiled_function_of

    inner = compiled_function_of(compiled) or compiled
    return sum(len(region.graphs) for region in inner.regions)


@pytest.mark.parametrize("backend", BACKENDS)
def test_functools_wraps_wrapper_runs_and_the_body_is_compiled(backend, capsys):
    eager_calls, compiled_calls = [], []

    def body(x):
        y = x.sin() + 1
        print("mean", float(y.mean()))  # a graph break: the body goes through carve's rewrite
        return y.cos()

    eager = counting(eager_calls)(body)
    compiled = carve.compile(counting(compiled_calls)(body), backend=backend)
    for n, scale in [(3, 2.0), (3, 0.5), (5, 2.0)]:
        x = torch.randn(n)
        kwargs = {} if scale == 2.0 else {"scale": scale}
        expected = eager(x, **kwargs)
        eager_out = capsys.readouterr().out
        got = compiled(x, **kwargs)
        assert capsys.readouterr().out == eager_out
        torch.testing.assert_close(got, expected)
    assert compiled_calls == eager_calls == [2.0, 0.5, 2.0]
    assert compiled.__name__ == "body" and compiled.__wrapped__ is not body
    assert graphs_of(compiled) >= 2  # the tensor work on both sides of the print is compiled


@pytest.mark.parametrize("decorator", [
    torch.no_grad(),
    torch.inference_mode(),
    torch.enable_grad(),
    torch.autocast("cpu", dtype=torch.bfloat16),
], ids=["no_grad", "inference_mode", "enable_grad", "autocast"])
def test_torch_context_decorators_keep_their_mode(decorator):
    def step(w, x):
        h = x @ w
        return h.relu().sum(-1)

    eager = decorator(step)
    compiled = carve.compile(decorator(step), backend="eager")
    for n in (4, 4, 6):
        w = torch.randn(8, 8, requires_grad=True)
        x = torch.randn(n, 8)
        expected, got = eager(w, x), compiled(w, x)
        assert got.dtype == expected.dtype
        assert got.requires_grad == expected.requires_grad
        assert torch.is_inference(got) == torch.is_inference(expected)
        torch.testing.assert_close(got, expected)


def test_stacked_decorators_unwrap_one_at_a_time():
    calls = []

    def body(x):
        return x * 3

    eager = torch.no_grad()(counting(calls)(body))
    compiled = carve.compile(torch.no_grad()(counting(calls)(body)), backend="eager")
    x = torch.randn(4, requires_grad=True)
    expected = eager(x, scale=0.25)
    got = compiled(x, scale=0.25)
    torch.testing.assert_close(got, expected)
    assert not got.requires_grad and calls == [0.25, 0.25]


class Validating:
    """A class-based decorator: it holds the function as an attribute, not in a closure."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, x):
        if x.dim() != 1:
            raise ValueError("expects a vector")
        return self.fn(x) + 1


def test_class_based_decorator_is_one_graph_of_the_whole_call():
    compiled = carve.compile(Validating(lambda x: x.exp()), backend="eager")
    eager = Validating(lambda x: x.exp())
    for x in (torch.randn(3), torch.randn(3)):
        torch.testing.assert_close(compiled(x), eager(x))
    with pytest.raises(ValueError, match="expects a vector"):
        compiled(torch.randn(2, 2))


@pytest.mark.parametrize("fn, kwargs", [
    (torch.sin, {}),
    (F.gelu, {"approximate": "tanh"}),
    (torch.add, {"alpha": 2}),
    (torch.nn.functional.relu, {}),
], ids=["torch.sin", "F.gelu", "torch.add", "F.relu"])
def test_builtins_and_torch_functions_are_one_graph(fn, kwargs):
    compiled = carve.compile(fn, backend="eager")
    for n in (4, 4, 7):
        args = (torch.randn(n),) if fn is not torch.add else (torch.randn(n), torch.randn(n))
        torch.testing.assert_close(compiled(*args, **kwargs), fn(*args, **kwargs))
    assert compiled.regions[0].path == "dynamo"
    assert 1 <= len(compiled.regions[0].graphs) <= 2  # 4 then 7: one static, one dynamic graph


def test_partial_keeps_its_arguments_and_keywords():
    def affine(x, w, *, bias=0.0, scale=1.0):
        y = x @ w
        print("rows", y.shape[0])
        return y * scale + bias

    w = torch.randn(3, 3)
    eager = functools.partial(affine, w=w, scale=2.0)
    compiled = carve.compile(functools.partial(affine, w=w, scale=2.0), backend="eager")
    assert isinstance(compiled, functools.partial) and compiled.keywords == eager.keywords
    for bias in (0.0, 1.5, -1.0):
        x = torch.randn(2, 3)
        torch.testing.assert_close(compiled(x, bias=bias), eager(x, bias=bias))


class Scaler:
    """A callable object whose state changes between calls."""

    def __init__(self):
        self.factor = 2.0
        self.seen = 0

    def __call__(self, x):
        self.seen += 1
        return x * self.factor + self.seen


def test_callable_object_keeps_its_state():
    eager_obj, compiled_obj = Scaler(), Scaler()
    compiled = carve.compile(compiled_obj, backend="eager")
    for factor in (2.0, 2.0, -1.0):
        eager_obj.factor = compiled_obj.factor = factor
        x = torch.randn(4)
        torch.testing.assert_close(compiled(x), eager_obj(x))
    assert compiled_obj.seen == eager_obj.seen == 3


class TinyGPT(nn.Module):
    """A nanoGPT-shaped module: `generate` is decorated with torch.no_grad and has defaults."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, idx):
        return self.head(self.embed(idx).cumsum(1))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits = self(idx)[:, -1, :] / temperature
            next_token = logits.argmax(-1, keepdim=True)
            idx = torch.cat((idx, next_token), dim=1)
        return idx


def test_bound_method_decorated_with_no_grad_keeps_defaults():
    torch.manual_seed(0)
    model = TinyGPT()
    generate = carve.compile(model.generate, backend="eager")
    for start in ([[1, 2]], [[3, 4]], [[5, 6, 7]]):
        idx = torch.tensor(start)
        assert torch.equal(generate(idx, 4), model.generate(idx, 4))
        assert torch.equal(generate(idx, 3, temperature=0.5), model.generate(idx, 3, temperature=0.5))


def tuple_or_dict(fn):
    """transformers' can_return_tuple, in miniature: a keyword the wrapper consumes."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        return_dict = kwargs.pop("return_dict", self.return_dict)
        output = fn(self, *args, **kwargs)
        return output if return_dict else tuple(output.values())

    return wrapper


class DecoratedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.return_dict = True

    @tuple_or_dict
    def forward(self, x, shift=0.0):
        h = self.proj(x) + shift
        return {"hidden": h, "pooled": h.mean(0)}


def test_module_with_decorated_forward():
    torch.manual_seed(0)
    model = DecoratedForward()
    compiled = carve.compile(model, backend="eager")
    for kwargs in ({}, {"shift": 1.0}, {"return_dict": False}):
        x = torch.randn(3, 4)
        expected, got = model(x, **kwargs), compiled(x, **kwargs)
        assert type(got) is type(expected)
        for a, b in zip(expected.values() if isinstance(expected, dict) else expected,
                        got.values() if isinstance(got, dict) else got):
            torch.testing.assert_close(b, a)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x):
        return torch.tanh(self.fc(x))


def test_compiled_module_is_the_module():
    torch.manual_seed(0)
    model = Block()
    compiled = carve.compile(model, backend="eager")
    assert isinstance(compiled, nn.Module) and isinstance(compiled, Block)
    assert list(compiled.state_dict()) == list(model.state_dict())
    assert sorted(compiled.state_dict()) == ["fc.bias", "fc.weight", "steps"]
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    assert compiled.to(torch.float64) is compiled and model.fc.weight.dtype == torch.float64
    compiled.to(torch.float32)
    compiled.eval()
    assert not model.training
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x))
    # It can be a child module, and load a state dict saved from the original.
    sequential = nn.Sequential(compiled, nn.Linear(4, 2))
    torch.testing.assert_close(sequential(x), sequential[1](model(x)))
    twin = Block()
    twin.load_state_dict(compiled.state_dict())
    torch.testing.assert_close(twin(x), compiled(x))
    assert compiled._orig_mod.__dict__ is model.__dict__


def test_hooks_added_after_the_first_call_run_and_can_be_removed():
    torch.manual_seed(0)
    model = Block()
    compiled = carve.compile(model, backend="eager")
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x))
    seen = []
    pre = compiled.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = compiled.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    expected = torch.tanh(model.fc(x * 2)) + 1
    torch.testing.assert_close(compiled(x), expected)
    assert seen == [torch.Size([2, 4])]
    pre.remove()
    post.remove()
    torch.testing.assert_close(compiled(x), torch.tanh(model.fc(x)))


class LoggedCall(Block):
    """A module with its own __call__, which carve must run."""

    def __call__(self, *args, **kwargs):
        self.calls = getattr(self, "calls", 0) + 1
        return super().__call__(*args, **kwargs) * 10


def test_module_with_its_own_call():
    torch.manual_seed(0)
    model = LoggedCall()
    compiled = carve.compile(model, backend="eager")
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), torch.tanh(model.fc(x)) * 10)
    assert model.calls == 1


def test_deepcopy_and_pickle():
    torch.manual_seed(0)
    model = Block()
    compiled = carve.compile(model, backend="eager")
    x = torch.randn(2, 4)
    compiled(x)
    twin = copy.deepcopy(compiled)
    assert isinstance(twin, Block) and twin.fc.weight is not model.fc.weight
    with torch.no_grad():
        twin.fc.weight.add_(1.0)
    torch.testing.assert_close(compiled(x), model(x))
    torch.testing.assert_close(twin(x), torch.tanh(twin.fc(x)))
    restored = pickle.loads(pickle.dumps(compiled))
    assert type(restored) is Block
    torch.testing.assert_close(restored(x), model(x))
    buffer = io.BytesIO()
    torch.save(compiled.state_dict(), buffer)
    buffer.seek(0)
    assert list(torch.load(buffer)) == list(model.state_dict())


def test_huggingface_style_output_module():
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=32)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    compiled = carve.compile(model, backend="eager")
    for length in (5, 5, 9):
        ids = torch.randint(0, 64, (2, length))
        expected, got = model(ids, labels=ids), compiled(ids, labels=ids)
        assert type(got) is type(expected)
        torch.testing.assert_close(got.logits, expected.logits)
        torch.testing.assert_close(got.loss, expected.loss)
        torch.testing.assert_close(compiled(ids, return_dict=False)[0], model(ids, return_dict=False)[0])


# ---- the compiled function's own name, and wrappers of callees ---------------------------------

WRAPPER_CALLS: list = []


def counted_calls(fn):
    @functools.wraps(fn)
    def wrapper(x, n):
        WRAPPER_CALLS.append(n)
        return fn(x, n)

    return wrapper


@counted_calls
def logged_helper(x, n):
    print("helper", n)  # a graph break: the call runs eagerly and carve compiles the helper
    return x * n


def calls_a_wrapped_helper(x, n):
    y = logged_helper(x.sin(), n)
    print("caller", n)
    return y + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrapped_callee_keeps_its_wrapper(backend, capsys):
    # carve compiles a breaking callee on its own; behind `functools.wraps`, it is the wrapper
    # that must be compiled, not the function it wraps (inspect's source lookup follows
    # __wrapped__, and the wrapper carries the name of what it wraps).
    compiled = carve.compile(calls_a_wrapped_helper, backend=backend)
    for n in (2, 3, 3):
        x = torch.randn(3)
        WRAPPER_CALLS.clear()
        expected = calls_a_wrapped_helper(x, n)
        eager_calls, eager_out = list(WRAPPER_CALLS), capsys.readouterr().out
        WRAPPER_CALLS.clear()
        torch.testing.assert_close(compiled(x, n), expected)
        assert WRAPPER_CALLS == eager_calls == [n]
        assert capsys.readouterr().out == eager_out


def recursive(x, n):
    if n <= 0:
        return x
    print("depth", n)
    return recursive(x * 2, n - 1) + 1  # the module's `recursive`: here, the counting wrapper


def with_a_counter(x):
    with_a_counter.calls = getattr(with_a_counter, "calls", 0) + 1  # an attribute of the global
    print("call", with_a_counter.calls)
    return x * with_a_counter.calls


def normalize(x):
    return x / x.sum()


class Normalizer:
    def normalize(self, x):
        y = normalize(x)  # the module's function, not this method
        print("normalized", tuple(y.shape))
        return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_function_name_inside_its_body_is_the_module_global(backend, capsys, monkeypatch):
    # The rewritten function used to be defined under the user's name in carve's factory, so
    # inside its body that name was the rewritten function itself: a recursive call skipped
    # the decorators around it, `f.calls` was an attribute of another object, and a method
    # calling the module's function of its own name called itself.
    plain = recursive
    for n in (2, 3):
        results, calls, printed = [], [], []
        for wrapped in (plain, carve.compile(plain, backend=backend)):
            monkeypatch.setitem(globals(), "recursive", counted_calls(wrapped))
            WRAPPER_CALLS.clear()
            results.append(globals()["recursive"](torch.ones(2), n))
            calls.append(list(WRAPPER_CALLS))
            printed.append(capsys.readouterr().out)
        torch.testing.assert_close(results[1], results[0])
        assert calls[1] == calls[0] == list(range(n, -1, -1))
        assert printed[1] == printed[0]

    eager_results = [with_a_counter(torch.ones(2)) for _ in range(3)]
    eager_out = capsys.readouterr().out
    del with_a_counter.calls
    compiled_counter = carve.compile(with_a_counter, backend=backend)
    monkeypatch.setitem(globals(), "with_a_counter", compiled_counter)
    for want in eager_results:
        torch.testing.assert_close(compiled_counter(torch.ones(2)), want)
    assert capsys.readouterr().out == eager_out

    x = torch.arange(1.0, 5.0)
    expected = Normalizer().normalize(x)
    compiled_method = carve.compile(Normalizer().normalize, backend=backend)
    torch.testing.assert_close(compiled_method(x), expected)
    assert compiled_method.__name__ == "normalize"
