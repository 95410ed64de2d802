"""carve lint, in process: scope, selection, noqa, configuration, unparsable files."""

import textwrap

import pytest

from carve.rewriters.lint import ConfigError, LintConfig, lint_source, load_config
from carve.rewriters.lint.config import check_prefixes


def lint(text, config=None, **kwargs):
    result = lint_source(textwrap.dedent(text).lstrip("\n"), "m.py", config or LintConfig(**kwargs))
    assert result.error is None, result.error
    return result.findings


def codes(text, config=None, **kwargs):
    return [(f.code, f.line) for f in lint(text, config, **kwargs)]


PRINTING = """
import torch

@torch.compile
def f(x):
    print(x.sum())
    return x + 1

def not_compiled(x):
    print(torch.ones(1))
"""


def test_decorated_function_is_linted_and_others_are_not():
    assert codes(PRINTING) == [("CRV003", 5)]


def test_all_lints_every_function_that_uses_torch():
    assert codes(PRINTING, all_functions=True) == [("CRV003", 5), ("CRV003", 9)]


@pytest.mark.parametrize("header", [
    "import torch\n@torch.compile(fullgraph=False, backend='eager')",
    "from torch import compile as tc\n@tc",
    "import carve\n@carve.compile",
    "from carve import compile as cc\n@cc(backend='eager')",
    "import torch.compiler\n@torch.compiler.compile",
])
def test_every_import_spelling_of_the_compile_decorator(header):
    text = header + "\ndef f(x):\n    y = x.sum().item()\n    return y\n"
    assert [c for c, _ in codes(text)] == ["CRV004"]


def test_function_passed_to_compile_is_linted():
    assert codes("""
        import torch
        def g(x):
            return x.sum().item()
        fast_g = torch.compile(g, backend="eager")
    """) == [("CRV004", 3)]


def test_module_instance_passed_to_compile_lints_forward_and_its_methods():
    findings = lint("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                return self.helper(x)
            def helper(self, x):
                print(x.sum())
                return x
            def unused(self, x):
                print(x)
        model = Net()
        compiled = torch.compile(model)
    """)
    assert [(f.code, f.line) for f in findings] == [("CRV016", 5), ("CRV003", 7)]
    assert "Net.helper()" in findings[1].message and "compiled Net.forward()" in findings[1].message


def test_callee_break_reported_at_its_line_and_at_the_call_site():
    findings = lint("""
        import torch
        def inner(x):
            return x.sum().item()
        def middle(x):
            return inner(x) + 1
        @torch.compile
        def f(x):
            return middle(x)
    """)
    by_code = {(f.code, f.line): f for f in findings}
    assert set(by_code) == {("CRV004", 3), ("CRV016", 5), ("CRV016", 8)}
    assert "called from compiled f()" in by_code["CRV004", 3].message


def test_disabled_callee_is_a_break_and_its_body_is_not_linted():
    assert codes("""
        import torch
        @torch.compiler.disable
        def noisy(x):
            print(x)
            return x
        @torch.compile
        def f(x):
            return noisy(x + 1)
    """) == [("CRV013", 8)]


def test_generator_compiled_is_skipped_whole():
    assert [c for c, _ in codes("""
        import torch
        @torch.compile
        def f(xs):
            for x in xs:
                yield x * 2
    """)] == ["CRV018", "CRV010"]


def test_clean_compiled_code_has_no_findings():
    assert codes("""
        import torch
        @torch.compile
        def f(x, bias=None):
            if bias is None and x.shape[0] > 2 and x.dim() == 1:
                x = x * 2
            with torch.no_grad():
                y = torch.where(x > 0, x, -x)
            return y.relu()
    """) == []


def test_noqa_with_code_prefix_bare_and_other_tools_codes():
    assert codes("""
        import torch
        @torch.compile
        def f(x):
            a = x.sum().item()  # noqa: CRV004
            b = x.max().item()  # noqa: CRV00
            c = x.min().item()  # noqa
            d = x.mean().item()  # noqa: E501
            e = x.std().item()  # noqa: CRV003
            return x
    """) == [("CRV004", 7), ("CRV004", 8)]


def test_file_level_noqa():
    assert codes("# carve: noqa\n" + textwrap.dedent(PRINTING)) == []


def test_select_ignore_and_extend_select_by_prefix():
    text = """
        import torch
        @torch.compile
        def f(x):
            print(x.sum())
            self_calls = []
            self_calls.append(x)
            return x.sum().item()
    """
    assert [c for c, _ in codes(text)] == ["CRV003", "CRV004"]
    assert [c for c, _ in codes(text, select=["CRV004"])] == ["CRV004"]
    assert [c for c, _ in codes(text, ignore=["CRV00"])] == []
    assert [c for c, _ in codes(text, extend_select=["CRV019"])] == ["CRV003", "CRV019", "CRV004"]
    # the longer prefix wins: ignore CRV0 but select CRV004
    assert [c for c, _ in codes(text, select=["CRV004"], ignore=["CRV0"])] == ["CRV004"]


def test_unknown_prefix_is_a_config_error():
    with pytest.raises(ConfigError):
        check_prefixes(["CRV9"], "--select")
    assert check_prefixes(["crv00"], "--select") == ["CRV00"]


def test_pyproject_configuration(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(textwrap.dedent("""
        [tool.carve.lint]
        select = ["CRV"]
        ignore = ["CRV019"]
        exclude = ["generated/"]
        all = true
        [tool.carve.lint.per-file-ignores]
        "tests/*" = ["CRV003"]
    """))
    config = load_config(pyproject)
    assert config.all_functions and config.exclude == ["generated/"]
    assert "CRV021" in config.enabled_codes() and "CRV019" not in config.enabled_codes()
    assert "CRV003" not in config.enabled_codes(str(tmp_path / "tests" / "test_x.py"))
    assert "CRV003" in config.enabled_codes(str(tmp_path / "src" / "x.py"))


@pytest.mark.parametrize("body", [
    '[tool.carve.lint]\nselect = ["NOPE"]\n',
    '[tool.carve.lint]\nunknown_key = 1\n',
    '[tool.carve.lint]\nall = "yes"\n',
    '[tool.carve.lint\n',
])
def test_bad_pyproject_is_a_config_error(tmp_path, body):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(body)
    with pytest.raises(ConfigError):
        load_config(pyproject)


def test_syntax_error_is_one_crv000_finding():
    result = lint_source("import torch\n@torch.compile\ndef f(x)\n    return x\n", "bad.py", LintConfig())
    assert [(f.code, f.line) for f in result.findings] == [("CRV000", 3)]
    assert "syntax error" in result.findings[0].message


def test_syntax_error_in_file_without_compiled_code_is_still_reported():
    result = lint_source(b"def f(:\n  pass\n", "bad.py", LintConfig())
    assert [f.code for f in result.findings] == ["CRV000"]


def test_undecodable_bytes_are_one_crv000_finding():
    result = lint_source(b"import torch\nname = '\xff\xfe'\n", "latin.py", LintConfig())
    assert [f.code for f in result.findings] == ["CRV000"]
    assert "decode" in result.findings[0].message


def test_coding_line_is_honoured():
    source = "# -*- coding: latin-1 -*-\nimport torch\n@torch.compile\ndef f(x):\n    print('\xe9', x.sum())\n".encode("latin-1")
    result = lint_source(source, "latin.py", LintConfig())
    assert [f.code for f in result.findings] == ["CRV003"]


def test_positions_are_one_based_and_match_the_source():
    findings = lint("""
        import torch
        class A:
            @torch.compile
            def f(self, x):
                y = (x +
                     x.sum().item())
                return y
    """)
    (finding,) = findings
    assert (finding.line, finding.column, finding.end_line) == (6, 14, 6)
    assert finding.end_column == 28
