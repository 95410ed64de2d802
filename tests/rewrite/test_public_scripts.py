"""`carve rewrite` on public training scripts: the output imports what it uses, runs standalone, and
prints what the script prints when nothing is compiled.

Each folder of tests/rewrite/public_scripts/ holds a script adapted from a public repository (its
licence and what was changed are in its header) the way a user would add carve to it: `import carve`
below the functions it compiles, or in the main block, and compile calls rather than decorators
(`run_train = carve.compile(train)`, `model = carve.compile(model)`, nanoGPT's
`model = torch.compile(model)` in train.py compiling `GPT` of model.py). The folder is rewritten
with `carve rewrite DIR -o OUT` as a command; then the script is run three times in fresh
processes, each printing its losses:

- eager: the original with `carve.compile` and `torch.compile` made the identity (the reference);
- rewritten: the output of `carve rewrite`, as written (regions compiled with backend "eager");
- and its output must say what it rewrote: a RegionSet per compiled function, no compile call left.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "public_scripts"
ROOT = HERE.parents[1]

# script folder -> (the script to run, the functions the rewrite must compile)
CASES = {
    "mnist": ("main.py", {"main.py": ["train", "test"]}),
    "vae": ("main.py", {"main.py": ["VAE.forward", "train"]}),
    "nanogpt": ("train.py", {"model.py": ["GPT.forward"]}),
    "time_sequence": ("train.py", {"train.py": ["Sequence.forward"]}),
    "word_language_model": ("main.py", {"main.py": ["train", "evaluate"]}),
}
EAGER = (
    "import runpy, sys, torch, carve\n"
    "identity = lambda fn=None, **options: fn if fn is not None else (lambda f: f)\n"
    "carve.compile = torch.compile = identity\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(cwd))
    return subprocess.run([sys.executable, *arguments], cwd=cwd, capture_output=True, text=True, env=environment,
                          timeout=600)


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("carved")
    result = subprocess.run([sys.executable, "-m", "carve", "rewrite", str(SCRIPTS), "-o", str(out), "-q"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_compiles_what_the_calls_compile_and_imports_carve_first(name, rewritten):
    _, compiled = CASES[name]
    for filename, qualnames in compiled.items():
        text = (rewritten / name / filename).read_text()
        for qualname in qualnames:
            assert f'carve.RegionSet("{qualname}", backend="eager")' in text, (filename, qualname)
        first_use = text.index("carve.RegionSet(")
        assert re.search(r"^import carve$", text[:first_use], re.M), "import carve comes after its first use"
    script, _ = CASES[name]
    code = "\n".join(line.split("#")[0] for line in (rewritten / name / script).read_text().splitlines())
    assert "carve.compile(" not in code and "torch.compile(" not in code


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rewritten_script_runs_standalone_and_prints_what_eager_prints(name, rewritten):
    script, _ = CASES[name]
    eager = _run(["-c", EAGER, script], SCRIPTS / name)
    assert eager.returncode == 0, eager.stderr[-3000:]
    carved = _run([script], rewritten / name)
    assert carved.returncode == 0, carved.stderr[-3000:]
    assert carved.stdout == eager.stdout
    assert re.search(r"loss", eager.stdout, re.I), "the script printed no loss to compare"


def test_rewriting_the_output_again_changes_nothing(rewritten, tmp_path):
    result = subprocess.run([sys.executable, "-m", "carve", "rewrite", str(rewritten), "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
