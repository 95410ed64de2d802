"""Public training scripts run three ways in one process, each compared with eager.

    from tests.real_scripts.harness import CASES, run_calls, assert_same

    case = CASES["mnist"]
    eager = run_calls(case, "eager", calls=3)
    carved = run_calls(case, "carve", calls=3, backend="aot_eager")
    assert_same(eager, carved)        # printed output, returned values, parameters after each call
    carved.graphs                     # graphs carve compiled over the three calls

The three ways (`MODES`; bench/real_scripts.py also times `OTHER_PLACEMENTS`, torch.compile on
the function and carve on the model):

- `eager`: the script as written (scripts/, adapted only to run on synthetic data);
- `torch.compile`: `torch.compile` on the model(s), where the script's authors put it or
  would (nanoGPT's `model = torch.compile(model)`);
- `carve`: `carve.compile` on the function that holds the graph breaks (the training loop,
  the epoch functions, the episode loop), as carve's README advises.

Each way loads its own fresh copy of the script module (its module-level code runs again
with the same seeds), so the three start from the same weights and draw the same random
numbers where they run the same operations. The scripts' clocks (`time.time()`) are replaced
by a clock that advances a fixed step per reading, so printed timings are equal too.
Both compilers get a `CountingBackend` in front of the backend: graphs compiled, graph calls.

`time_interleaved` times calls of several runs in interleaved rounds
(torch.utils.benchmark), for bench/real_scripts.py; the tests never time.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import itertools
import math
import os
import random
import re
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

import carve
from carve.testing import CountingBackend

SCRIPTS = Path(__file__).resolve().parent / "scripts"
PACKAGE = "tests.real_scripts.scripts"
MODES = ("eager", "torch.compile", "carve")
# The other two placements bench/real_scripts.py times: each compiler where the other is put.
OTHER_PLACEMENTS = ("torch.compile on the function", "carve on the model")


@dataclass(frozen=True)
class ScriptCase:
    """One script: where it comes from, what each compiler wraps, what one call runs.

    `outer`: the module's functions `carve.compile` wraps (the ones holding the breaks; a dotted
    name such as "trainer.run" is an attribute of a module global, a bound method here);
    `models`: module globals `torch.compile` wraps (a module, or a module class whose
    instances are compiled as they are made; dotted names as for `outer`, and a model named
    twice, as "model" and "trainer.model", is compiled once and both names get the compiled
    one); `setup(module)` runs after the module loads
    (it may bind globals the call needs); `call(module, index)` is one call of the outer
    function(s), `index` counting from 0; `state(module, returned)` is what is compared with
    eager after each call besides the printed output and the returned value (parameters and
    buffers, by name).

    `held_out`: in the independent set (`HELD_OUT`), scripts added to check carve after it was
    tuned on the others, and measured before anything was changed because of them."""

    name: str
    script: str
    source: str
    licence: str
    outer: tuple[str, ...]
    models: tuple[str, ...]
    call: Callable[[types.ModuleType, int], Any]
    state: Callable[[types.ModuleType, Any], dict[str, torch.Tensor]]
    setup: Callable[[types.ModuleType], None] = lambda module: None
    what: str = ""
    # The work done so far, where a call's work depends on what the model computes (an RL
    # episode lasts as long as the actions it samples keep the pole up): environment steps.
    # Timings are then per unit of work, so a compiler whose rounding led to longer episodes is
    # not charged for them. None: every call does the same work.
    work: Callable[[types.ModuleType], int] | None = None
    work_unit: str = "call"
    held_out: bool = False
    # Where `outer` is defined, for `carve rewrite`, when that is not a module-level function of
    # `script` ("trainer.run" is `Trainer.run` of mingpt_trainer.py): (script, qualified name).
    defined_in: tuple[str, str] | None = None


def module_state(*names: str) -> Callable[[types.ModuleType, Any], dict[str, torch.Tensor]]:
    """Parameters and buffers of the module globals `names`."""

    def state(module: types.ModuleType, returned: Any) -> dict[str, torch.Tensor]:
        return {f"{name}.{key}": value for name in names
                for key, value in _original(getattr(module, name)).state_dict().items()}

    return state


def _original(model: torch.nn.Module) -> torch.nn.Module:
    return getattr(model, "_orig_mod", model)


def resolve(module: types.ModuleType, dotted: str) -> Any:
    """`module.a.b` for "a.b"."""
    value: Any = module
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def rebind(module: types.ModuleType, dotted: str, value: Any) -> None:
    """`module.a.b = value` for "a.b"."""
    owner, _, name = dotted.rpartition(".")
    setattr(resolve(module, owner) if owner else module, name, value)


# -- the scripts ------------------------------------------------------------------------------


def _nanogpt_call(module: types.ModuleType, index: int) -> Any:
    module.max_iters = module.iter_num + 1  # two iterations per call
    return module.train()


def _mnist_setup(module: types.ModuleType) -> None:
    (module.args, module.model, module.device, module.train_loader, module.test_loader, module.optimizer,
     module.scheduler) = module.main(["--batch-size", "16", "--test-batch-size", "32", "--train-size", "64",
                                      "--test-size", "64", "--log-interval", "2"])


def _mnist_call(module: types.ModuleType, index: int) -> Any:
    epoch = index + 1
    module.train(module.args, module.model, module.device, module.train_loader, module.optimizer, epoch)
    module.test(module.model, module.device, module.test_loader)
    module.scheduler.step()


def _wlm_call(module: types.ModuleType, index: int) -> Any:
    module.epoch = index + 1
    module.train()
    return module.evaluate(module.val_data)


def _seq2seq_call(module: types.ModuleType, index: int) -> Any:
    return module.trainIters(module.encoder1, module.attn_decoder1, 4, print_every=2, plot_every=2)


def _diffusion_state(module: types.ModuleType, returned: Any) -> dict[str, torch.Tensor]:
    ddpm, _, _ = returned
    return {f"ddpm.{key}": value for key, value in _original(ddpm).state_dict().items()}


# The independent (held-out) set's calls.


def _vae_call(module: types.ModuleType, index: int) -> Any:
    module.train(index + 1)
    module.test(index + 1)


def _super_resolution_call(module: types.ModuleType, index: int) -> Any:
    module.train(index + 1)
    module.test()


def _regression_call(module: types.ModuleType, index: int) -> Any:
    """A fresh initialisation of the model, then the script's loop until its stop criterion (loss < 1e-3):
    each call trains from scratch, as a run of the script does (a few hundred batches)."""
    _original(module.fc).reset_parameters()
    module.main()


def _mingpt_setup(module: types.ModuleType) -> None:
    """The trainer's module (mingpt_trainer.py, imported once) reads the clock for `iter_dt`, which the
    callback prints: give it a ticking clock too."""
    sys.modules[module.Trainer.__module__].time = TickingClock()


def _glue_call(module: types.ModuleType, index: int) -> Any:
    return module.train(module.args, module.train_dataset, module.model, module.tokenizer)


CASES: dict[str, ScriptCase] = {case.name: case for case in [
    ScriptCase(
        "nanogpt", "nanogpt_train", "karpathy/nanoGPT train.py + model.py", "MIT",
        outer=("train",), models=("model",), call=_nanogpt_call, state=module_state("model"),
        what="GPT training loop: gradient accumulation, clipping, AdamW, loss.item() logging, an evaluation "
             "every 4 iterations (2 iterations per call)"),
    ScriptCase(
        "mnist", "mnist_main", "pytorch/examples mnist/main.py", "BSD-3-Clause",
        outer=("train", "test"), models=("model",), setup=_mnist_setup, call=_mnist_call,
        state=module_state("model"),
        what="CNN train + test epoch (Adadelta, dropout), logging with loss.item(), accuracy with .item()"),
    ScriptCase(
        "word_language_model", "wlm_main", "pytorch/examples word_language_model/main.py + model.py",
        "BSD-3-Clause", outer=("train", "evaluate"), models=("model",), call=_wlm_call,
        state=module_state("model"),
        what="LSTM language model epoch: manual SGD over parameters, clipping, hidden-state detach, evaluation"),
    ScriptCase(
        "time_sequence_prediction", "time_sequence_prediction", "pytorch/examples time_sequence_prediction/train.py",
        "BSD-3-Clause", outer=("train",), models=("seq",), call=lambda module, index: module.train(),
        state=module_state("seq"),
        what="LSTMCell sequence model, LBFGS with a closure that prints loss.item(), a no_grad prediction"),
    ScriptCase(
        "actor_critic", "actor_critic", "pytorch/examples reinforcement_learning/actor_critic.py", "BSD-3-Clause",
        outer=("main",), models=("model",), call=lambda module, index: module.main(),
        state=module_state("model"), work=lambda module: module.env.steps_taken, work_unit="environment step",
        what="actor-critic episode loop (2 episodes per call): action.item() per step, returns of varying length"),
    ScriptCase(
        "reinforce", "reinforce", "pytorch/examples reinforcement_learning/reinforce.py", "BSD-3-Clause",
        outer=("main",), models=("policy",), call=lambda module, index: module.main(),
        state=module_state("policy"), work=lambda module: module.env.steps_taken, work_unit="environment step",
        what="REINFORCE episode loop (2 episodes per call), dropout in the policy"),
    ScriptCase(
        "dcgan", "dcgan", "pytorch/examples dcgan/main.py", "BSD-3-Clause",
        outer=("train",), models=("netG", "netD"), call=lambda module, index: module.train(),
        state=module_state("netG", "netD"),
        what="GAN epoch (4 batches): two optimizers, three backward passes, .item() logging"),
    ScriptCase(
        "seq2seq", "seq2seq_translation", "pytorch/tutorials seq2seq_translation_tutorial.py", "BSD-3-Clause",
        outer=("train",), models=("encoder1", "attn_decoder1"), call=_seq2seq_call,
        state=module_state("encoder1", "attn_decoder1"),
        what="GRU encoder-attention decoder step per token: teacher forcing by random.random(), greedy decoding "
             "with .item() and break (4 steps per call)"),
    ScriptCase(
        "conditional_diffusion", "conditional_diffusion", "TeaPearce/Conditional_Diffusion_MNIST script.py", "MIT",
        outer=("train_mnist",), models=("DDPM",), call=lambda module, index: module.train_mnist(),
        state=_diffusion_state,
        what="DDPM training run: model built in the function, loss_ema = 0.95 * loss_ema + 0.05 * loss.item(), "
             "guided sampling"),
    # -- the independent set: not used to tune carve, measured before anything changed because of them --
    ScriptCase(
        "vae", "vae", "pytorch/examples vae/main.py", "BSD-3-Clause",
        outer=("train", "test"), models=("model",), call=_vae_call, state=module_state("model"), held_out=True,
        what="VAE train + test epoch (4 and 2 batches of 16): Adam, train_loss += loss.item(), logging, "
             "reparameterisation noise, a reconstruction grid for save_image"),
    ScriptCase(
        "super_resolution", "super_resolution", "pytorch/examples super_resolution/main.py + model.py",
        "BSD-3-Clause", outer=("train", "test"), models=("model",), call=_super_resolution_call,
        state=module_state("model"), held_out=True,
        what="sub-pixel CNN train + test epoch (4 and 2 batches of 4): a print with loss.item() per batch, "
             "PSNR by math.log10(1 / mse.item())"),
    ScriptCase(
        "regression", "regression", "pytorch/examples regression/main.py", "BSD-3-Clause",
        outer=("main",), models=("fc",), call=_regression_call, state=module_state("fc"), held_out=True,
        what="polynomial fit from a fresh initialisation until loss < 1e-3: an unbounded loop over count(1), "
             "loss.item() and break, manual SGD by p.data.add_, b_target.item() in every batch"),
    ScriptCase(
        "mingpt_adder", "mingpt_adder", "karpathy/minGPT projects/adder/adder.py + mingpt/{trainer,model,utils}.py",
        "MIT", outer=("trainer.run",), models=("model", "trainer.model"), setup=_mingpt_setup,
        call=lambda module, index: module.trainer.run(), state=module_state("model"), held_out=True,
        defined_in=("mingpt_trainer", "Trainer.run"),
        what="minGPT Trainer.run (8 iterations): a while True loop with next(data_iter), clipping, AdamW, an "
             "on_batch_end callback that prints loss.item() and evaluates by greedy generate() (no_grad, "
             "per-example Python loop over the results)"),
    ScriptCase(
        "wgan_gp", "wgan_gp", "eriklindernoren/PyTorch-GAN implementations/wgan_gp/wgan_gp.py", "MIT",
        outer=("train",), models=("generator", "discriminator"), call=lambda module, index: module.train(),
        state=module_state("generator", "discriminator"), held_out=True,
        what="WGAN-GP epoch (6 batches of 8): gradient penalty by autograd.grad(create_graph=True) (double "
             "backward), NumPy noise through torch.FloatTensor, a generator step every n_critic=5 batches"),
    ScriptCase(
        "glue_finetune", "glue_finetune", "huggingface/transformers examples/run_glue.py (2.x)", "Apache-2.0",
        outer=("train",), models=("model",), call=_glue_call, state=module_state("model"), held_out=True,
        what="BERT fine-tuning run (tiny random BertForSequenceClassification, 4 batches of 4): gradient "
             "accumulation over 2, clipping, AdamW, linear schedule, tr_loss += loss.item(), json logging"),
]}
HELD_OUT = tuple(name for name, case in CASES.items() if case.held_out)  # the independent set


# -- running a script one way ------------------------------------------------------------------


class CountingInductor(CountingBackend):
    """`CountingBackend("inductor")` that says it is Inductor (`compiler_name`), so carve compiles
    it as it compiles `backend="inductor"`, and that takes the compile's `options` as Inductor's
    config patches: torch's backend wrapper hands a backend object `options=` (torch.compile's
    does too), which `CountingBackend` alone does not take (its compiles would fail, and every
    region run as Python)."""

    compiler_name = "inductor"

    def __init__(self) -> None:
        super().__init__("inductor")

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list, options: dict | None = None) -> Any:
        if not options:
            return super().__call__(gm, example_inputs)
        compile_fx = self._compile
        # Patched for the backward's compile too, which AOT autograd makes on the first backward.
        self._compile = functools.partial(compile_fx, config_patches=options)
        try:
            return super().__call__(gm, example_inputs)
        finally:
            self._compile = compile_fx


def counting_backend(backend: str) -> CountingBackend:
    return CountingInductor() if backend == "inductor" else CountingBackend(backend)


class TickingClock:
    """`time.time()` and `time.perf_counter()` that advance 0.125 s per reading: a script's
    printed timings are the same on every run. Its readings are builtins (`count.__next__`), as
    the real clock's are, so the compilers see no Python function behind them."""

    def __init__(self) -> None:
        readings = itertools.count(1_000_000.0, 0.125)
        self.time = readings.__next__
        self.perf_counter = self.time


@dataclass
class CallOutput:
    printed: str
    returned: Any
    state: dict[str, torch.Tensor]


@dataclass
class ScriptRun:
    """A fresh copy of a script's module, set up for one mode."""

    case: ScriptCase
    mode: str
    module: types.ModuleType
    counting: CountingBackend | None
    import_printed: str
    outputs: list[CallOutput] = field(default_factory=list)
    calls: int = 0

    @property
    def graphs(self) -> int:
        return self.counting.graphs if self.counting is not None else 0

    @property
    def graph_calls(self) -> int:
        return self.counting.calls if self.counting is not None else 0

    @property
    def work_done(self) -> int:
        """Units of the case's work done so far (calls, or what `ScriptCase.work` counts)."""
        return self.case.work(self.module) if self.case.work is not None else self.calls

    def call(self, record: bool = True, seeded: bool = False) -> CallOutput | None:
        """One call of the script's outer function(s); its output is recorded unless `record` is False
        (then printing goes to os.devnull). `seeded`: the random generators are seeded with the
        call's index first, so that runs of several modes in one process, which share torch's,
        NumPy's and Python's generators, make the same draws in their i-th calls (the same
        batches, the same RL episodes) rather than each continuing the stream another mode left."""
        index = self.calls
        self.calls += 1
        if seeded:
            seed_everything(index)
        if not record:
            with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
                self.case.call(self.module, index)
            return None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            returned = self.case.call(self.module, index)
        output = CallOutput(printed.getvalue(), _detached(returned), _snapshot(self.case.state(self.module, returned)))
        self.outputs.append(output)
        return output


def seed_everything(seed: int = 0) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


_loads = itertools.count()


def load(case: ScriptCase, mode: str, backend: str = "inductor", **carve_options: Any) -> ScriptRun:
    """A fresh copy of `case`'s script, with `mode`'s compiler placed and a counting `backend`."""
    if mode not in MODES + OTHER_PLACEMENTS:
        raise ValueError(f"mode must be one of {MODES + OTHER_PLACEMENTS}, got {mode!r}")
    seed_everything()
    name = f"{PACKAGE}.{case.script}__run{next(_loads)}"
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{case.script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = PACKAGE  # the scripts' relative imports (`from .nanogpt_model import GPT`)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        spec.loader.exec_module(module)
        case.setup(module)
    if isinstance(getattr(module, "time", None), types.ModuleType):
        module.time = TickingClock()
    counting = None
    if mode == "torch.compile":
        counting = counting_backend(backend)
        _compile_models(module, case.models, lambda model: _torch_compiled(model, counting))
    elif mode == "carve":
        counting = counting_backend(backend)
        for function_name in case.outer:
            rebind(module, function_name,
                   carve.compile(resolve(module, function_name), backend=counting, **carve_options))
    elif mode == "torch.compile on the function":
        counting = counting_backend(backend)
        for function_name in case.outer:
            rebind(module, function_name, torch.compile(resolve(module, function_name), backend=counting))
    elif mode == "carve on the model":
        counting = counting_backend(backend)
        _compile_models(module, case.models, lambda model: _carve_compiled(model, counting, carve_options))
    return ScriptRun(case, mode, module, counting, printed.getvalue())


def _compile_models(module: types.ModuleType, names: tuple[str, ...], compile_model: Callable[[Any], Any]) -> None:
    """Each model of `names` compiled once (a model named twice, "model" and "trainer.model", gets one
    compiled version under both names)."""
    compiled: dict[int, Any] = {}
    for name in names:
        model = resolve(module, name)
        if id(model) not in compiled:
            compiled[id(model)] = compile_model(model)
        rebind(module, name, compiled[id(model)])


def _torch_compiled(model: Any, backend: CountingBackend) -> Any:
    """`torch.compile(model)`; for a module class (a model the script makes inside the function
    under test), the class with its forward compiled, so every instance it makes runs compiled."""
    if isinstance(model, type):
        model.forward = torch.compile(model.forward, backend=backend)
        return model
    return torch.compile(model, backend=backend)


def _carve_compiled(model: Any, backend: CountingBackend, options: dict) -> Any:
    """`carve.compile(model)`, or for a module class its forward compiled (as `_torch_compiled`)."""
    if isinstance(model, type):
        model.forward = carve.compile(model.forward, backend=backend, **options)
        return model
    return carve.compile(model, backend=backend, **options)


def run_calls(case: ScriptCase, mode: str, calls: int, backend: str = "inductor", **carve_options: Any) -> ScriptRun:
    """Load `case` for `mode` and make `calls` recorded calls."""
    run = load(case, mode, backend, **carve_options)
    for _ in range(calls):
        run.call()
    return run


def unload(run: ScriptRun) -> None:
    """Forget the run's module (its compiled code goes with it once nothing else holds it)."""
    sys.modules.pop(run.module.__name__, None)


# -- comparing with eager -------------------------------------------------------------------------

RTOL, ATOL = 1e-4, 1e-5
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, torch.nn.Module):
        return None  # compared through `state`
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value) if not hasattr(value, "_fields") else \
            type(value)(*(_detached(v) for v in value))
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _snapshot(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in state.items()}


def printed_differences(expected: str, actual: str, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """None when `actual` prints what `expected` does, numbers within tolerance (a loss printed
    with six digits may differ in the last one between eager and a compiled graph); else the
    first differing lines."""
    if expected == actual:
        return None
    expected_words, actual_words = _NUMBER.split(expected), _NUMBER.split(actual)
    expected_numbers, actual_numbers = _NUMBER.findall(expected), _NUMBER.findall(actual)
    if expected_words == actual_words and len(expected_numbers) == len(actual_numbers) and all(
            _close(float(e), float(a), rtol, atol, decimals=_decimals(e))
            for e, a in zip(expected_numbers, actual_numbers)):
        return None
    for line, (e, a) in enumerate(itertools.zip_longest(expected.splitlines(), actual.splitlines(), fillvalue="")):
        if e != a:
            return f"printed line {line + 1}: expected {e!r}, got {a!r}"
    return "printed output differs"


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text and "e" not in text.lower() else 0


def _close(expected: float, actual: float, rtol: float, atol: float, decimals: int) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    # A number printed with d decimals may round either way: one unit in its last place.
    return abs(expected - actual) <= atol + rtol * abs(expected) + 10.0 ** -decimals


def value_differences(expected: Any, actual: Any, where: str, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """None when the two values are equal (tensors and floats within tolerance), else where they differ."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{where}: expected a tensor, got {type(actual).__name__}"
        try:
            torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as error:
            return f"{where}: {str(error).splitlines()[0]} ({_worst(expected, actual)})"
        return None
    if isinstance(expected, np.ndarray):
        return value_differences(torch.from_numpy(expected), torch.from_numpy(np.asarray(actual)), where, rtol, atol)
    if isinstance(expected, float):
        if not isinstance(actual, (int, float)) or not _close(expected, float(actual), rtol, atol, decimals=99):
            return f"{where}: expected {expected!r}, got {actual!r}"
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return f"{where}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            found = value_differences(e, a, f"{where}[{i}]", rtol, atol)
            if found:
                return found
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or expected.keys() != actual.keys():
            return f"{where}: keys {sorted(map(str, expected))} != {sorted(map(str, actual))}"
        for key in expected:
            found = value_differences(expected[key], actual[key], f"{where}[{key!r}]", rtol, atol)
            if found:
                return found
        return None
    return None if expected == actual else f"{where}: expected {expected!r}, got {actual!r}"


def _worst(expected: torch.Tensor, actual: torch.Tensor) -> str:
    difference = (expected.double() - actual.double()).abs()
    return f"largest difference {difference.max().item():.3g} on values up to {expected.abs().max().item():.3g}"


def differences(eager: ScriptRun, other: ScriptRun, rtol: float = RTOL, atol: float = ATOL) -> list[str]:
    """Every call where `other` differs from `eager`: printed output, returned value, state."""
    found = []
    if len(eager.outputs) != len(other.outputs):
        found.append(f"{len(eager.outputs)} calls recorded for eager, {len(other.outputs)} for {other.mode}")
    for index, (e, o) in enumerate(zip(eager.outputs, other.outputs)):
        call = f"call {index + 1}"
        for difference in (printed_differences(e.printed, o.printed, rtol, atol),
                           value_differences(e.returned, o.returned, f"{call}: returned", rtol, atol),
                           value_differences(e.state, o.state, f"{call}: state", rtol, atol)):
            if difference:
                found.append(difference if difference.startswith("call") else f"{call}: {difference}")
    return found


def assert_same(eager: ScriptRun, other: ScriptRun, rtol: float = RTOL, atol: float = ATOL) -> None:
    found = differences(eager, other, rtol, atol)
    assert not found, f"{other.case.name}, {other.mode} differs from eager:\n  " + "\n  ".join(found)


# -- timing --------------------------------------------------------------------------------------


def time_interleaved(runs: list[ScriptRun], rounds: int, min_run_time: float) -> dict[str, float]:
    """Seconds per unit of work of each run (keyed by mode; a call, or `ScriptCase.work`'s unit):
    the median over `rounds` interleaved rounds, in each of which every run makes the same number
    of calls (torch.utils.benchmark's `Timer.timeit`), enough for the slowest run to take
    `min_run_time`. Each round times the same calls of the script for every mode (an evaluation
    call, the same episodes), so the modes are compared on equal work. Printing goes to os.devnull."""
    from torch.utils.benchmark import Timer

    timers = {run.mode: Timer(stmt="run.call(record=False, seeded=True)", globals={"run": run},
                              num_threads=torch.get_num_threads()) for run in runs}
    slowest = max(timers[run.mode].timeit(1).mean for run in runs)
    calls = max(1, round(min_run_time / max(slowest, 1e-9)))
    samples: dict[str, list[float]] = {run.mode: [] for run in runs}
    for _ in range(rounds):
        for run in runs:
            work_before = run.work_done
            seconds = timers[run.mode].timeit(calls).mean * calls
            samples[run.mode].append(seconds / max(1, run.work_done - work_before))
    return {mode: statistics.median(times) for mode, times in samples.items()}


def time_first_calls(run: ScriptRun, calls: int) -> float:
    """Seconds for the run's next `calls` calls (its first calls: compiling included)."""
    start = time.perf_counter()
    for _ in range(calls):
        run.call(record=False)
    return time.perf_counter() - start
