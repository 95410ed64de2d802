"""The dataflow of one function (rewriters/dataflow.py) on small functions, one construct each:
reads and writes, live names before and after a statement, reaching definitions. The expected
sets are worked out by hand; live sets are shown restricted to the function's locals.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from carve.rewriters.analysis import child_blocks
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.liveness import local_names

RENDER = cst.Module([]).code_for_node


class Flow:
    """A function's dataflow, its statements looked up by their first line of source."""

    def __init__(self, source: str) -> None:
        module = cst.parse_module(textwrap.dedent(source))
        self.func = next(node for node in module.body if isinstance(node, cst.FunctionDef))
        self.dataflow = Dataflow(self.func)
        self.locals = local_names(self.func, set())
        self.statements: dict[str, cst.CSTNode] = {}
        self._collect(self.func.body)

    def _collect(self, block: cst.BaseSuite) -> None:
        for statement in block.body if isinstance(block, cst.IndentedBlock) else [block]:
            line = _first_line(statement)
            assert line not in self.statements, f"ambiguous line in test source: {line}"
            self.statements[line] = statement
            for child in child_blocks(statement):
                self._collect(child)

    def live_in(self, line: str) -> set[str]:
        return set(self.dataflow.live_in(self.statements[line])) & self.locals

    def live_out(self, line: str) -> set[str]:
        return set(self.dataflow.live_out(self.statements[line])) & self.locals

    def reaching(self, line: str, name: str) -> set[str]:
        """The first lines of the statements whose binding of `name` may hold where `line` starts."""
        return {_first_line(d.node) for d in self.dataflow.reaching_definitions(self.statements[line])
                if d.name == name}


def _first_line(node: cst.CSTNode) -> str:
    lines = [line.strip() for line in RENDER(node).splitlines()]
    return next(line for line in lines if line and not line.startswith("#"))


# -- straight-line code ------------------------------------------------------------------------
def test_reads_writes_and_liveness_of_straight_line_code():
    flow = Flow("""
        def f(x, n):
            y = x * 2
            z = y + n
            y = 0
            return z
    """)
    assert flow.dataflow.reads_and_writes(flow.statements["z = y + n"]) == (["y", "n"], {"z"})
    assert flow.live_in("y = x * 2") == {"x", "n"}
    assert flow.live_out("y = x * 2") == {"y", "n"}
    assert flow.live_out("z = y + n") == {"z"}
    assert flow.live_out("y = 0") == {"z"}  # the new y is never read
    assert flow.live_out("return z") == set()


def test_reads_and_writes_are_walked_once_per_node():
    flow = Flow("""
        def f(x):
            y = x * 2
            z = y + x
    """)
    statement = flow.statements["y = x * 2"]
    assert flow.dataflow.reads_and_writes(statement) is not None
    assert flow.dataflow.reads(statement) is flow.dataflow.reads(statement)
    body = list(flow.func.body.body)
    assert flow.dataflow.block_reads_and_writes(body) == (["x"], {"y", "z"})


# -- if / elif / else --------------------------------------------------------------------------
def test_a_name_bound_in_one_branch_keeps_its_earlier_value_live():
    flow = Flow("""
        def f(x, a, b):
            y = x
            if a:
                y = x * 2
            elif b:
                z = 1
            else:
                y = x * 3
            return y
    """)
    assert flow.live_out("y = x") == {"y", "x", "a", "b"}  # the elif branch keeps it
    assert flow.live_in("if a:") == {"y", "x", "a", "b"}
    assert flow.live_out("z = 1") == {"y"}
    assert flow.live_in("y = x * 3") == {"x"}
    assert flow.reaching("return y", "y") == {"y = x", "y = x * 2", "y = x * 3"}


# -- loops -------------------------------------------------------------------------------------
def test_a_name_read_at_the_top_of_a_loop_body_and_written_at_its_bottom_is_live_around_the_back_edge():
    flow = Flow("""
        def f(x, n):
            h = x
            while n > 0:
                y = h * 2
                h = y + 1
                n = n - 1
            return n
    """)
    assert flow.live_out("h = y + 1") == {"h", "n"}  # read by the next iteration, never after the loop
    assert flow.live_out("h = x") == {"h", "n"}
    assert flow.live_in("y = h * 2") == {"h", "n"}
    assert flow.live_out("return n") == set()
    assert flow.reaching("y = h * 2", "h") == {"h = x", "h = y + 1"}


def test_a_for_target_is_not_bound_when_the_loop_ends():
    flow = Flow("""
        def f(xs):
            x = 0
            for x in xs:
                pass
            return x
    """)
    assert flow.live_out("x = 0") == {"x", "xs"}  # an empty xs leaves x = 0
    assert flow.reaching("return x", "x") == {"x = 0", "x"}  # `x`: the loop's target


def test_break_skips_the_loops_else_and_the_else_rebinds():
    flow = Flow("""
        def f(xs):
            found = None
            for x in xs:
                if x > 0:
                    found = x
                    break
            else:
                found = 0
            return found
    """)
    assert flow.live_out("found = None") == {"xs"}  # every way out of the loop rebinds found
    assert flow.live_in("break") == {"found"}
    assert flow.reaching("return found", "found") == {"found = x", "found = 0"}


def test_continue_goes_to_the_next_iteration():
    flow = Flow("""
        def f(xs):
            total = 0
            for x in xs:
                if x < 0:
                    continue
                total = total + x
            return total
    """)
    assert flow.live_in("continue") == {"total"}
    assert flow.live_out("if x < 0:") == {"total", "x"}
    assert flow.live_out("total = total + x") == {"total"}


# -- return ------------------------------------------------------------------------------------
def test_an_early_return_ends_what_is_live():
    flow = Flow("""
        def f(x, flag):
            y = x * 2
            if flag:
                return x
            y = x + 1
            return y
    """)
    assert flow.live_out("y = x * 2") == {"x", "flag"}  # no path reads this y
    assert flow.live_in("return x") == {"x"}
    assert flow.live_in("y = x + 1") == {"x"}


def test_an_early_return_that_reads_keeps_the_name_live():
    flow = Flow("""
        def f(x, flag):
            y = x * 2
            if flag:
                return y
            y = x + 1
            return y * 2
    """)
    assert flow.live_out("y = x * 2") == {"x", "flag", "y"}


# -- try ---------------------------------------------------------------------------------------
def test_a_handler_sees_the_value_from_before_the_statement_that_raised():
    flow = Flow("""
        def f(x):
            y = 0
            try:
                y = g(x)
            except ValueError as e:
                return y, e
            return y
    """)
    assert flow.live_out("y = 0") == {"x", "y"}
    assert flow.live_in("return y, e") == {"y", "e"}
    assert flow.reaching("return y, e", "e") == {"except ValueError as e:"}
    assert flow.reaching("return y, e", "y") == {"y = 0", "y = g(x)"}


def test_try_else_runs_after_the_body():
    flow = Flow("""
        def f(x):
            try:
                y = g(x)
            except ValueError:
                y = 0
            else:
                y = y + 1
            return y
    """)
    assert flow.live_out("y = g(x)") == {"y"}
    assert flow.live_in("y = y + 1") == {"y"}
    assert flow.reaching("return y", "y") == {"y = 0", "y = y + 1"}


def test_try_finally_runs_after_an_exception_anywhere_in_the_body():
    flow = Flow("""
        def f(x):
            y = 0
            try:
                y = x + 1
                z = y * 2
            finally:
                w = y
            return w
    """)
    assert flow.live_out("y = 0") == {"x", "y"}  # the body may raise before rebinding y
    assert flow.live_out("z = y * 2") == {"y"}  # z is never read
    assert flow.live_out("w = y") == {"w"}


def test_a_break_goes_through_finally_then_leaves_the_loop():
    flow = Flow("""
        def f(xs):
            last = None
            for x in xs:
                try:
                    if x:
                        break
                finally:
                    last = x
            return last
    """)
    assert flow.live_in("break") == {"x"}  # the finally block reads x before the loop ends
    assert flow.live_out("last = x") == {"last"}
    assert flow.reaching("return last", "last") == {"last = None", "last = x"}


def test_a_return_goes_through_finally():
    flow = Flow("""
        def f(x):
            y = 1
            try:
                return x
            finally:
                z = y
    """)
    assert flow.live_in("return x") == {"x", "y"}
    assert flow.live_out("z = y") == set()


# -- with --------------------------------------------------------------------------------------
def test_a_with_body_may_stop_early_when_its_manager_swallows_the_exception():
    flow = Flow("""
        def f(m, x):
            y = 0
            with m as t:
                y = t + x
            return y
    """)
    assert flow.live_out("y = 0") == {"m", "x", "y"}
    assert flow.live_in("y = t + x") == {"t", "x", "y"}
    assert flow.reaching("y = t + x", "t") == {"m as t"}  # the with item


# -- match -------------------------------------------------------------------------------------
def test_a_case_binds_its_captures_only_when_it_matches():
    flow = Flow("""
        def f(p):
            x = 0
            match p:
                case [x, y] if y > 0:
                    z = y
                case _:
                    z = 1
            return x, z
    """)
    assert flow.live_out("x = 0") == {"p", "x"}
    assert flow.live_in("z = y") == {"x", "y"}
    assert flow.reaching("return x, z", "x") == {"x = 0", "case [x, y] if y > 0:"}


def test_a_match_without_a_catch_all_case_may_match_nothing():
    flow = Flow("""
        def f(p):
            z = 0
            match p:
                case [y]:
                    z = y
            return z
    """)
    assert flow.live_out("z = 0") == {"p", "z"}


# -- nested scopes -----------------------------------------------------------------------------
def test_closures_read_where_they_are_defined_and_again_whenever_they_run():
    flow = Flow("""
        def f(x, xs, k):
            s = x * 2
            g = lambda t: t + s
            ys = [v * k for v in xs]
            def h():
                return k
            s = 3
            return g(x), ys, h
    """)
    assert flow.live_out("s = x * 2") == {"s", "x", "xs", "k"}
    assert flow.live_out("g = lambda t: t + s") == {"g", "x", "xs", "k"}
    assert flow.live_in("ys = [v * k for v in xs]") == {"g", "x", "xs", "k"}  # v is the comprehension's
    assert flow.live_out("s = 3") == {"g", "x", "ys", "h"}
    captured = flow.dataflow.closure_reads_outside([])
    assert captured >= {"s", "k"} and not captured & {"v", "t"}
    assert "s" not in flow.dataflow.closure_reads_outside([flow.statements["g = lambda t: t + s"]])


# -- walrus and del ----------------------------------------------------------------------------
def test_a_walrus_may_bind_but_never_surely_does():
    flow = Flow("""
        def f(x, c):
            n = 0
            if c and (n := x):
                pass
            return n
    """)
    assert flow.live_out("n = 0") == {"n", "x", "c"}
    assert flow.reaching("return n", "n") == {"n = 0", "c and (n := x)"}  # the `if` test


def test_del_reads_the_name_and_ends_its_definitions():
    flow = Flow("""
        def f(x):
            y = x
            del y
            return x
    """)
    assert flow.live_out("y = x") == {"x", "y"}
    assert flow.reaching("return x", "y") == set()
    assert flow.reaching("return x", "x") == {"def f(x):"}


# -- what the outliner makes of it: region outputs are the names live after the region -----------
def regions(source: str) -> list[tuple[list[str], list[str]]]:
    """(inputs, outputs) of each region the outliner makes of the module's function."""
    from carve.rewriters.analysis import ModuleContext, analyze_function
    from carve.rewriters.outline import outline_function

    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    context = ModuleContext(module)
    analysis = analyze_function(function, context, None, {})
    outlined = outline_function(function, analysis, context, regions_var="_carve_f", region_prefix="f",
                                dataflow=Dataflow(function))
    return [(region.inputs, region.outputs) for region in outlined.regions]


def test_a_name_rebound_before_any_later_read_is_not_an_output():
    assert regions("""
        import torch
        def f(x):
            y = x * 2
            z = y + 1
            print(z)
            y = z * 3
            return y
    """) == [(["x"], ["z"]), (["z"], [])]  # the first y is dead once `y = z * 3` rebinds it


def test_a_name_the_next_iteration_reads_is_an_output_of_a_region_in_the_loop():
    assert regions("""
        import torch
        def f(x, n):
            h = x
            for i in range(n):
                h = torch.tanh(h) + i
                print(i)
            return x
    """) == [(["h", "i"], ["h"])]  # h is read only by the loop's next iteration


def test_a_name_read_only_in_a_later_elif_test_is_an_output():
    # Each `elif` test is a read where it runs: the second one here reads y after the region.
    assert regions("""
        import torch
        def f(x, a, b):
            y = x * 2
            print(a)
            if a:
                z = 1
            elif b:
                z = 2
            elif y > 0:
                z = 3
            else:
                z = 4
            return z
    """)[0] == (["x"], ["y"])
