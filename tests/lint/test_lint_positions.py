"""Positions generated statement by statement equal libcst's PositionProvider, on awkward layouts."""

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.lint.positions import LintModuleContext, function_definitions

AWKWARD = (
    "import torch\n"
    "\n"
    "\n"
    "class M(torch.nn.Module):\n"
    "    # a comment before the decorators\n"
    "\n"
    "    @torch.no_grad()\n"
    "    # between decorators\n"
    "    @(\n"
    "        torch.jit.ignore\n"
    "    )\n"
    "    def f(self, x):  # trailing\n"
    "        if x.sum() > 0: return x.item()\n"
    "        elif x.max() > 1: print(x)\n"
    "        else: y = 1; z = x.item()\n"
    "        # comment\n"
    "  # comment less indented than the block\n"
    "\n"
    "        a = 1; print(x); b = x.item()\n"
    "        y = (x\n"
    "             .sum()\n"
    "             .item())\n"
    "        (x).item()\n"
    "        for i in x.tolist(): print(i)\n"
    "        while x.sum() > 0:\n"
    "            x = x - 1\n"
    "        else:\n"
    "            print('done')\n"
    "        with open('f') as fh, torch.no_grad():\n"
    "            fh.write(str(x.item()))\n"
    "        try:\n"
    "            print(x)\n"
    "        except ValueError:\n"
    "            pass\n"
    "        try: print(1)\n"
    "        finally: print(2)\n"
    "        match x.item():\n"
    "            case 1:\n"
    "                print(1)\n"
    "            case _: print(2)\n"
    "        async def g():\n"
    "            async for q in x: print(q)\n"
    "            async with x: print(x)\n"
    "        x = \\\n"
    "            x.item()\n"
    "        return [\n"
    "            x.item() for _ in range(3)\n"
    "        ]\n"
    "\t\n"
    "def tabbed(x):\n"
    "\tif x.sum() > 0:\n"
    "\t\treturn x.item()\n"
    "\treturn x.tolist()\n"
    "\x0c\n"
    "def one_line(x): return x.item()\n"
)


def _nodes(node):
    yield node
    for child in node.children:
        yield from _nodes(child)


def _check(source):
    module = cst.parse_module(source)
    truth = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    context = LintModuleContext(module, "m.py", source)
    checked = 0
    for func in function_definitions(module):
        with context.within(func):
            statement_map = context._statement_map(func)
            assert statement_map is not None, func.name.value
            for statement in statement_map.statements.values():
                if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                    nodes = list(_nodes(statement))
                else:
                    headers = [getattr(statement, a, None) for a in ("test", "iter", "target", "name")]
                    nodes = [n for h in headers if isinstance(h, cst.CSTNode) for n in _nodes(h)]
                    nodes += [n for item in getattr(statement, "items", ()) for n in _nodes(item)]
                for node in nodes:
                    if node in truth:
                        assert context.position_within(node, statement) == truth[node], (func.name.value, node)
                        checked += 1
                assert context.position(statement) == truth[statement]
            assert context.position_within(func.name, func) == truth[func.name]
    return checked


def test_statement_positions_match_position_provider():
    assert _check(AWKWARD) > 300


def test_statement_positions_with_crlf_line_ends():
    assert _check(AWKWARD.replace("\n", "\r\n")) > 300


def test_findings_on_awkward_layouts_are_where_the_code_is():
    result = lint_source(AWKWARD, "m.py", LintConfig(all_functions=True))
    lines = AWKWARD.split("\n")
    assert result.error is None
    assert len(result.findings) > 15
    for finding in result.findings:
        text = lines[finding.line - 1][finding.column - 1:]
        if finding.code == "CRV004":
            assert text.startswith(("x", "(x)")), (finding, text)  # x.item() or x.tolist(), or y = (x ...)
        if finding.code == "CRV003":
            assert text.startswith(("print(", "open(", "fh.write(")), (finding, text)
