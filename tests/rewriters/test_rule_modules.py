"""The rule is the unit: each graph-break rule is one module of `carve.rewriters.rules`, holding its
`RULE` (registry entry and reference documentation) and the check that finds it.

    rewriters/rules/crv012_autograd_in_compiled.py     RULE = Rule("CRV012", "autograd-in-compiled", ...)
                                                       def check_call(call, ctx): ... Violation(RULE.code, ...)

Sources are read with `ast`, so a rule code is seen only where it is a string literal of its own
(`"CRV004"`), not inside prose (docstrings, messages that cite another rule).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from carve.rewriters import rules
from carve.rewriters.rules import (
    CALL_CHECKS, CALLEE_CHECKS, IF_EXPRESSION_CHECKS, RULES, SUBSCRIPT_CHECKS, USER_CALLEE_CHECKS,
)

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "rewriters" / "rules"
CHECKS_DIR = ROOT / "rewriters" / "checks"
# What runs the rules' checks and positions their findings: the analysis's walk, the callee
# resolution it hands to the callee checks, and `carve lint`'s driver (CRV000, CRV018).
CHECK_RUNNERS = ("analysis.py", "callees.py", "lint/driver.py")
RULE_CODE = re.compile(r"CRV\d{3}")
RULE_MODULE = re.compile(r"(crv\d{3})_(\w+)\.py")
SECTIONS = ("What it does", "Why is this bad?", "Known problems", "Example", "Use instead", "Fix safety")


def rule_module_paths() -> list[Path]:
    return sorted(path for path in RULES_DIR.glob("*.py") if not path.name.startswith("_"))


def code_of(path: Path) -> str:
    match = RULE_MODULE.fullmatch(path.name)
    assert match, f"{path.name}: a rule module is named crvNNN_<rule_name>.py"
    return match.group(1).upper()


def code_literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of each string literal of `path` that is exactly a rule code."""
    tree = ast.parse(path.read_text(), str(path))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_CODE.fullmatch(node.value)]


def test_there_is_a_rule_module_per_rule():
    assert len(rule_module_paths()) == len(RULES) > 20


@pytest.mark.parametrize("path", rule_module_paths(), ids=lambda path: path.stem)
def test_a_rule_module_defines_exactly_one_rule_named_after_its_file(path):
    tree = ast.parse(path.read_text(), str(path))
    assert ast.get_docstring(tree), f"{path.name} has no docstring"
    assigned = [target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Name)]
    assert assigned.count("RULE") == 1, f"{path.name} assigns RULE {assigned.count('RULE')} times"
    module = importlib.import_module(f"carve.rewriters.rules.{path.stem}")
    code = code_of(path)
    assert module.RULE.code == code
    assert path.stem == f"{code.lower()}_{module.RULE.name.replace('-', '_')}"
    assert RULES[code] is module.RULE


def test_every_registered_code_has_its_module_in_code_order():
    assert list(RULES) == sorted(RULES)
    assert set(RULES) == {code_of(path) for path in rule_module_paths()}


@pytest.mark.parametrize("path", rule_module_paths(), ids=lambda path: path.stem)
def test_a_rule_module_names_no_rule_code_but_its_own(path):
    """Its check yields its own rule only: a call another rule claims is left to that rule's module."""
    others = [(line, value) for line, value in code_literals(path) if value != code_of(path)]
    assert others == [], f"{path.name} names other rules' codes"


def test_the_shared_check_helpers_name_no_rule_code():
    shared = sorted(CHECKS_DIR.glob("*.py")) + sorted(RULES_DIR.glob("_*.py"))
    assert {path.name for path in shared} >= {"context.py", "_rule.py", "__init__.py"}
    found = {path.name: literals for path in shared if (literals := code_literals(path))}
    assert found == {}


@pytest.mark.parametrize("name", CHECK_RUNNERS)
def test_what_runs_the_checks_names_no_rule_code(name):
    """The analysis decides where a finding belongs, never its code or message: those are the rule
    modules' (a rule's code, where needed, is its module's `RULE.code`)."""
    assert code_literals(ROOT / "rewriters" / name) == []


def test_every_check_belongs_to_a_rule_module():
    for check in CALL_CHECKS + SUBSCRIPT_CHECKS + IF_EXPRESSION_CHECKS + CALLEE_CHECKS + USER_CALLEE_CHECKS:
        module = importlib.import_module(check.__module__)
        assert module.__name__.startswith(f"{rules.__name__}.crv") and module.RULE in RULES.values(), check


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_is_documented_in_each_section(code):
    rule = RULES[code]
    for field in ("what", "why", "bad_example", "good_example", "known_problems", "fix_safety"):
        assert getattr(rule, field).strip(), f"{code} has no {field}"
    reference = (ROOT / "docs" / "rules.md").read_text()
    section = reference.split(f"\n## {code}\n", 1)[1].split("\n## ", 1)[0]
    headings = [line[4:] for line in section.splitlines() if line.startswith("### ")]
    assert headings == list(SECTIONS)
    assert rule.what in section and rule.fix_safety in section


def test_the_passes_and_the_compiler_name_no_rule_code():
    """Outside the rule modules, a rule is named by its module (`RULE.code`) in the source passes
    and the compiler alike. (The runtime names the rules of the breaks Dynamo meets itself:
    it never imports libcst, which the rule modules' checks need.)"""
    paths = [path for path in sorted((ROOT / "rewriters").rglob("*.py")) if RULES_DIR not in path.parents]
    paths += sorted((ROOT / "compiler").glob("*.py"))
    found = {str(path.relative_to(ROOT)): literals for path in paths if (literals := code_literals(path))}
    assert found == {}
