"""The hoisting pass on its own (every pass tested by itself): one statement of a
function in, the temporaries that carry its tensor work into the graph before it and the
statement that stays eager out. Pure source work: no torch, nothing executed.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from carve.rewriters.hoist import Hoister
from carve.rewriters.tensors import TensorInference
from carve.rewriters.walk import import_table


def hoist(source: str, index: int = -1):
    """Hoist the `index`-th statement of the only function in `source`: (assignments, statement)
    as source lines, or None when nothing is hoisted."""
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    imports = import_table(module)
    hoister = Hoister(TensorInference(function, imports), imports)
    statement = function.body.body[index]
    if isinstance(statement, cst.If):
        hoisted = hoister.hoist_if_test(statement)
    else:
        hoisted = hoister.hoist_statement(statement)
    if hoisted is None:
        return None
    code = cst.Module([]).code_for_node
    return [code(a).strip() for a in hoisted.assignments], code(hoisted.statement).strip().splitlines()[0]


def test_the_tensor_work_inside_a_print_moves_before_it():
    assert hoist("""
        import torch
        def f(x):
            y = torch.sin(x)
            print("mean", y.mean())
    """) == (["_carve_t0 = y.mean()"], 'print("mean", _carve_t0)')


def test_a_container_update_keeps_only_the_python_effect():
    assert hoist("""
        import torch
        def f(x, acc):
            y = torch.sin(x)
            acc.append(y.sum() * 2)
    """) == (["_carve_t0 = y.sum() * 2"], "acc.append(_carve_t0)")


def test_an_if_on_a_tensor_keeps_only_its_truth_test():
    assert hoist("""
        import torch
        def f(x):
            y = torch.sin(x)
            if y.abs().max() > 1:
                y = y / 2
    """) == (["_carve_t0 = y.abs().max() > 1"], "if _carve_t0:")


def test_a_conversion_keeps_the_item_call_eager():
    assert hoist("""
        import torch
        def f(x):
            y = torch.sin(x)
            scale = (y * 2).max().item()
    """) == (["_carve_t0 = (y * 2).max()"], "scale = _carve_t0.item()")


def test_nothing_is_hoisted_around_a_call_that_could_change_a_tensor():
    # `log` is the user's: it could modify `y` before `y.mean()` would run eagerly.
    assert hoist("""
        import torch
        def f(x, log):
            y = torch.sin(x)
            log(y, y.mean())
    """) is None


def test_in_place_work_is_not_hoisted():
    assert hoist("""
        import torch
        def f(x):
            y = torch.sin(x)
            print(y.add_(1))
    """) is None


def test_a_statement_with_a_lambda_or_walrus_is_left_alone():
    assert hoist("""
        import torch
        def f(x):
            y = torch.sin(x)
            print((m := y.mean()))
    """) is None


def hoist_value(source: str, index: int = -1):
    """`Hoister.hoist_assigned_value` on the `index`-th statement: (assignments, statement) or None."""
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    imports = import_table(module)
    hoisted = Hoister(TensorInference(function, imports), imports).hoist_assigned_value(function.body.body[index])
    if hoisted is None:
        return None
    code = cst.Module([]).code_for_node
    return [code(a).strip() for a in hoisted.assignments], code(hoisted.statement).strip()


def test_a_store_into_an_attribute_keeps_only_the_store_eager():
    # minGPT's Trainer.run: the model's forward joins the graph; the attribute store stays Python.
    assert hoist_value("""
        def run(self, model, x, y):
            logits, self.loss = model(x, y)
    """) == (["_carve_t0 = model(x, y)"], "logits, self.loss = _carve_t0")
    assert hoist_value("""
        def log(stats, loss):
            stats["loss"] = loss.detach() * 2
    """) == (['_carve_t0 = loss.detach() * 2'], 'stats["loss"] = _carve_t0')


def test_a_value_that_mutates_or_a_plain_name_target_is_not_hoisted_whole():
    assert hoist_value("""
        def f(self, xs):
            self.last = xs.pop()
    """) is None
    assert hoist_value("""
        def f(self, t):
            self.t = t.add_(1)
    """) is None
    assert hoist_value("""
        def f(model, x):
            y = model(x)
    """) is None
