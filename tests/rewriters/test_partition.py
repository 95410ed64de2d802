"""The partition pass on its own (every pass tested by itself): source in, the items
(graph runs, eager statements, compound statements kept as Python) out. Pure source
analysis, as `carve lint` and `carve rewrite` run it: no torch, nothing executed.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.partition import Compound, EagerStatement, GraphRun, partition_block


def partition(source: str, forced_breaks: dict | None = None):
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    analysis = analyze_function(function, ModuleContext(module), None, forced_breaks)
    return partition_block(function.body, analysis)


def shape(items) -> list:
    """("graph", n statements) / ("eager", codes) / ("compound", [shape of each block])."""
    out = []
    for item in items:
        if isinstance(item, GraphRun):
            out.append(("graph", len(item.statements)))
        elif isinstance(item, EagerStatement):
            out.append(("eager", sorted({f.code for f in item.findings})))
        else:
            assert isinstance(item, Compound)
            out.append(("compound", [shape(block) for block in item.blocks]))
    return out


def test_a_print_splits_the_run_and_stays_eager():
    items = partition("""
        import torch
        def f(x):
            y = x.sin()
            print(y)
            return y * 2
    """)
    assert shape(items) == [("graph", 1), ("eager", ["CRV003"]), ("graph", 1)]


def test_a_loop_whose_breaks_are_in_a_loop_invariant_branch_is_one_run():
    items = partition("""
        import torch
        def f(blocks, x, verbose):
            for block in blocks:
                x = block(x)
                if verbose:
                    print(x)
            return x
    """)
    assert shape(items) == [("graph", 2)]


def test_a_branch_that_varies_with_the_loop_keeps_the_loop_python():
    items = partition("""
        import torch
        def f(blocks, x):
            for i, block in enumerate(blocks):
                x = block(x)
                if i % 2 == 0:
                    print(x)
            return x
    """)
    assert shape(items)[0][0] == "compound"


def test_a_loop_dynamo_gave_up_on_is_python_after_the_rebuild():
    source = """
        import torch
        def f(blocks, x, verbose):
            for block in blocks:
                x = block(x)
                if verbose:
                    print(x)
            return x
    """
    # Lines (dedented, from 1): the loop header is line 4, the print line 7.
    items = partition(source, {4: ("CRV006", "Dynamo skipped the region"), 7: ("CRV003", "print")})
    assert [kind for kind, *_ in shape(items)] == ["compound", "graph"]


def test_a_try_of_graph_work_joins_the_run_around_it():
    items = partition("""
        import torch
        def f(x):
            y = x * 2
            try:
                y = y.sin()
            except ValueError:
                y = torch.zeros(3)
            return y + 1
    """)
    assert shape(items) == [("graph", 3)]


def test_a_try_whose_handler_logs_keeps_its_body_per_statement_when_the_handler_reads_it():
    items = partition("""
        import torch
        def f(x):
            try:
                a = x.sin()
                b = a * 2
            except RuntimeError:
                print("a", a)
                b = x
            return b
    """)
    (compound, tail) = shape(items)
    body, handler = compound[1]
    assert body == [("graph", 1), ("graph", 1)] and tail == ("graph", 1)
    assert ("eager", ["CRV003"]) in handler


def test_a_list_append_with_tensor_work_is_graph_work_and_a_plain_one_is_not():
    items = partition("""
        import torch
        def f(x, log):
            acc = []
            y = x * 2
            acc.append(y.sum())
            log.append("done")
            return y, acc
    """)
    # acc = [], y = x * 2 and the append are one run; the append of a string stays Python.
    assert shape(items) == [("graph", 3), ("eager", ["CRV019"]), ("graph", 1)]


def test_a_call_of_a_closure_is_graph_work_unless_a_closure_writes_a_cell():
    reads_only = partition("""
        import torch
        def f(x, scale):
            def shift(y):
                return y * scale
            print(x)
            return shift(x.cos())
    """)
    assert shape(reads_only)[-1] == ("graph", 1)
    writes = partition("""
        import torch
        def f(x):
            total = x * 0
            def add(y):
                nonlocal total
                total = total + y
            print(x)
            add(x.cos())
            return total
    """)
    assert shape(writes)[-2:] == [("eager", []), ("graph", 1)]


def test_a_partition_prints_as_the_module_docstring_shows():
    from carve.rewriters.partition import format_partition

    items = partition("""
        import torch
        def f(x, xs, n):
            y = x * 2
            z = y + 1
            print(z)
            for i in range(n):
                z = z * 3
                xs.append(z)
            return z - 1
    """)
    assert format_partition(items) == "\n".join([
        "GraphRun [y = x * 2; z = y + 1]",
        "EagerStatement (CRV003): print(z)",
        "Compound(for i in range(n):):",
        "    GraphRun [z = z * 3]",
        "    EagerStatement (CRV019): xs.append(z)",
        "GraphRun [return z - 1]",
    ])


def with_block_partition(manager: str) -> list:
    return shape(partition(f"""
        import torch
        def f(x):
            y = x.sin()
            with {manager}:
                y = y + 2
                print(y)
                z = y * 3
            return z.cos()
    """))


@pytest.mark.parametrize("manager", ["torch.no_grad()", "torch.autocast('cpu')",
                                     "torch.profiler.record_function('step')"])
def test_a_break_inside_a_with_block_of_a_context_manager_dynamo_resumes_in_stays_in_the_run(manager):
    # Dynamo resumes inside torch's grad-mode and profiler blocks (re-entering the manager after
    # the break): one run, two graphs, as under torch.compile.
    assert with_block_partition(manager) == [("graph", 3)]


@pytest.mark.parametrize("manager", ["Timer()", "open('log.txt')", "torch.profiler.profile() as prof"])
def test_a_break_inside_a_with_block_of_another_context_manager_keeps_the_block_python(manager):
    # Dynamo skips the whole frame on a break inside a user's context manager: carve keeps the
    # `with` as Python and compiles the work around the break.
    assert with_block_partition(manager) == [
        ("graph", 1), ("compound", [[("graph", 1), ("eager", ["CRV003"]), ("graph", 1)]]), ("graph", 1)]


def test_a_with_block_that_returns_ends_the_run():
    items = partition("""
        import torch
        def f(x):
            y = x.sin()
            with torch.no_grad():
                y = y + 1
                return y * 2
    """)
    assert shape(items) == [("graph", 2)]
    assert items[0].ends_with_return


def test_an_item_picked_by_the_python_loop_counter_is_read_before_the_region():
    # In the region, Dynamo would guard `micro`'s value (it picks a list item): one graph per step.
    items = partition("""
        import torch
        def step(model, batches, targets, accum):
            for micro in range(accum):
                x = batches[micro]
                y = targets[micro]
                loss = (model(x) - y).pow(2).mean() / accum
                loss.backward()
                print(loss.item())
    """)
    assert shape(items) == [("compound", [[("eager", []), ("eager", []), ("graph", 1), ("eager", ["CRV012"]),
                                          ("eager", ["CRV003", "CRV004"])]])]


@pytest.mark.parametrize("body", [
    "y = x * 2\n        h = batches[i]",      # not the block's first work: splitting would cost a graph
    "h = batches[i.real]",                     # not arithmetic on the counter
    "h = batches[j]",                          # not a loop target
    "h = batches[i].sin()",                    # tensor work on the item: the region's
])
def test_other_subscripts_stay_in_the_region(body):
    items = partition(f"""
        import torch
        def f(x, batches, n, j):
            for i in range(n):
        {textwrap.indent(body, "        ")}
                x = x + h
                print(x.sum().item())
            return x
    """)
    block = items[0].blocks[0]
    assert isinstance(block[0], GraphRun), shape(items)


def test_a_loop_the_region_holds_keeps_its_subscripts():
    # A short constant loop is unrolled into the graph: no Python loop counter to read ahead.
    items = partition("""
        import torch
        def f(x, weights):
            for i in range(4):
                w = weights[i]
                x = x @ w
            return x
    """)
    assert shape(items) == [("graph", 2)]


@pytest.mark.parametrize("index", ["micro", "it * accum + micro", "micro - 1", "-micro"])
def test_an_item_picked_by_arithmetic_on_the_counter_is_read_before_the_region(index):
    items = partition(f"""
        import torch
        def step(model, batches, it, accum):
            for micro in range(accum):
                x = batches[{index}]
                loss = model(x).mean()
                print(loss.item())
    """)
    assert shape(items)[0][1][0][0] == ("eager", [])


def test_an_update_of_a_container_the_loop_carries_runs_after_the_region():
    # In the region, Dynamo would guard the list's length, which grows on every step.
    items = partition("""
        import torch
        def evaluate(model, batches):
            preds = []
            for batch in batches:
                out = model(batch)
                preds.append(model.head(out).argmax(-1))
                print(out.shape[0])
            return preds
    """)
    loop = items[1]
    assert shape(loop.blocks[0]) == [("graph", 1), ("eager", ["CRV019"]), ("eager", ["CRV003"])]
    assert loop.blocks[0][1].arguments_to_graph


@pytest.mark.parametrize("body", [
    "row = []\n        row.append(x.sum())",     # a container each step makes anew: the region's
    "stats['loss'] = x.sum()",                  # one key on every step: no length to guard
])
def test_other_container_updates_in_a_loop_stay_in_the_region(body):
    items = partition(f"""
        import torch
        def f(x, n, stats):
            for i in range(n):
                x = x * 2
        {textwrap.indent(body, "        ")}
                print(x.sum().item())
            return x
    """)
    block = items[0].blocks[0]
    assert isinstance(block[0], GraphRun) and len(block[0].statements) >= 2, shape(items)


def test_a_while_loop_carries_its_containers_too():
    items = partition("""
        import torch
        def generate(model, x, steps):
            tokens = []
            while len(tokens) < steps:
                x = model(x)
                tokens.append(x.argmax(-1))
                print(len(tokens))
            return tokens
    """)
    loop = items[1]
    assert shape(loop.blocks[0]) == [("graph", 1), ("eager", ["CRV019"]), ("eager", ["CRV003"])]
