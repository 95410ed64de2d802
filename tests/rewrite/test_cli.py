"""`carve rewrite` on the command line: output modes, exit codes, bad input, safety."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from carve.rewriters.rewrite import rewrite_source

from conftest import GOLDEN

COMPILED = '''import torch
import carve


@carve.compile(backend="eager")
def step(x):
    y = x * 2
    print("y", y)
    return y + 1
'''

PLAIN = "import os\n\n\ndef helper(path):\n    return os.path.basename(path)\n"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def tree(tmp_path):
    """src/ with a compiled module, a plain module, and a compiled module in a subpackage."""
    src = tmp_path / "src"
    write(src / "model.py", COMPILED)
    write(src / "plain.py", PLAIN)
    write(src / "pkg" / "__init__.py", "")
    write(src / "pkg" / "train.py", COMPILED.replace("step", "train_step"))
    return src


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# -- output modes ---------------------------------------------------------------------------

def test_single_file_defaults_to_stdout(cli, tmp_path):
    path = write(tmp_path / "model.py", COMPILED)
    code, out, err = cli("rewrite", path)
    assert code == 0
    assert out == rewrite_source(COMPILED, str(path)).text
    assert "_carve_step = carve.RegionSet" in out
    assert err.strip() == "carve rewrite: 1 file rewritten, 0 unchanged"
    assert path.read_text() == COMPILED


def test_unchanged_file_on_stdout_is_the_input(cli, tmp_path):
    path = write(tmp_path / "plain.py", PLAIN)
    code, out, err = cli("rewrite", "--stdout", path)
    assert (code, out) == (0, PLAIN)
    assert "0 files rewritten, 1 unchanged" in err


def test_directory_without_a_mode_is_a_usage_error(cli, tree):
    before = snapshot(tree)
    code, out, err = cli("rewrite", tree)
    assert code == 2 and out == ""
    assert "-o OUTDIR, --in-place, --diff or --check" in err
    assert snapshot(tree) == before


def test_stdout_takes_a_single_file(cli, tree):
    code, _, err = cli("rewrite", "--stdout", tree / "model.py", tree / "plain.py")
    assert code == 2 and "--stdout takes a single file" in err


def test_output_modes_are_exclusive(cli, tree):
    with pytest.raises(SystemExit) as exit_info:
        cli("rewrite", "--check", "--diff", tree)
    assert exit_info.value.code == 2


def test_output_dir_mirrors_the_tree_and_leaves_inputs_alone(cli, tree, tmp_path):
    before = snapshot(tree)
    out = tmp_path / "out"
    code, stdout, err = cli("rewrite", tree, "-o", out)
    assert code == 0 and stdout == ""
    assert snapshot(tree) == before
    written = snapshot(out)
    assert sorted(written) == ["model.py", "pkg/__init__.py", "pkg/train.py", "plain.py"]
    assert written["plain.py"] == PLAIN.encode()  # unchanged files are copied: the tree imports whole
    assert written["model.py"].decode() == rewrite_source(COMPILED, "model.py").text
    assert "_carve_train_step" in written["pkg/train.py"].decode()
    assert err.strip().endswith("carve rewrite: 2 files rewritten, 2 unchanged")


def test_output_dir_with_several_paths_mirrors_below_their_common_directory(cli, tmp_path):
    write(tmp_path / "a" / "one.py", COMPILED)
    write(tmp_path / "b" / "two.py", COMPILED)
    out = tmp_path / "out"
    code, _, _ = cli("rewrite", tmp_path / "a" / "one.py", tmp_path / "b", "-o", out)
    assert code == 0
    assert sorted(snapshot(out)) == ["a/one.py", "b/two.py"]


def test_output_dir_inside_the_input_tree_is_not_read_back(cli, tree):
    out = tree / "carved"
    assert cli("rewrite", tree, "-o", out)[0] == 0
    assert cli("rewrite", tree, "-o", out)[0] == 0
    assert not (out / "carved").exists()


def test_output_dir_never_overwrites_an_input(cli, tree):
    before = snapshot(tree)
    code, _, err = cli("rewrite", tree, "-o", tree)
    assert code == 2
    assert "use --in-place" in err
    assert snapshot(tree) == before


def test_in_place_rewrites_changed_files_only(cli, tree):
    plain_stat = (tree / "plain.py").stat()
    code, out, err = cli("rewrite", "--in-place", tree)
    assert code == 0 and out == ""
    assert (tree / "model.py").read_text() == rewrite_source(COMPILED, "model.py").text
    assert (tree / "plain.py").stat().st_mtime_ns == plain_stat.st_mtime_ns
    assert not [p for p in tree.rglob("*") if "carve-tmp" in p.name]
    # Idempotent on disk: a second run finds nothing to do.
    assert cli("rewrite", "--check", tree)[0] == 0


def test_in_place_keeps_the_file_mode(cli, tmp_path):
    path = write(tmp_path / "script.py", COMPILED)
    path.chmod(0o751)
    assert cli("rewrite", "--in-place", path)[0] == 0
    assert path.stat().st_mode & 0o777 == 0o751


def test_check_lists_files_and_exits_1(cli, tree):
    before = snapshot(tree)
    code, out, err = cli("rewrite", "--check", tree)
    assert code == 1
    assert out.splitlines() == [f"would rewrite: {tree / 'model.py'}", f"would rewrite: {tree / 'pkg' / 'train.py'}"]
    assert "2 files would be rewritten, 2 unchanged" in err
    assert snapshot(tree) == before


def test_check_exits_0_when_nothing_would_change(cli, tmp_path):
    path = write(tmp_path / "plain.py", PLAIN)
    assert cli("rewrite", "--check", path)[:2] == (0, "")


def test_diff_is_a_unified_diff_that_applies(cli, tmp_path):
    path = write(tmp_path / "model.py", COMPILED)
    code, out, _ = cli("rewrite", "--diff", path)
    assert code == 1
    assert out.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert "-@carve.compile(backend=\"eager\")\n" in out and "+@_carve_step.entry\n" in out
    patch = tmp_path / "change.patch"
    patch.write_text(out)
    subprocess.run(["patch", "-s", str(path), str(patch)], check=True)
    assert path.read_text() == rewrite_source(COMPILED, str(path)).text


def test_diff_of_an_unchanged_file_is_empty(cli, tmp_path):
    path = write(tmp_path / "plain.py", PLAIN)
    assert cli("rewrite", "--diff", path)[:2] == (0, "")


# -- selection ------------------------------------------------------------------------------

TWO_FUNCTIONS = COMPILED + '''

@carve.compile(backend="eager")
def other(x):
    print(x)
    return x


def uses_torch(x):
    print(x)
    return torch.relu(x)
'''


def test_select_rewrites_only_the_named_functions(cli, tmp_path):
    path = write(tmp_path / "m.py", TWO_FUNCTIONS)
    code, out, err = cli("rewrite", "--select", "other", path)
    assert code == 0
    assert "_carve_other = " in out and "_carve_step" not in out
    assert '@carve.compile(backend="eager")\ndef step(x):' in out
    assert "warning" not in err


def test_select_warns_about_names_that_matched_nothing(cli, tmp_path):
    path = write(tmp_path / "m.py", TWO_FUNCTIONS)
    code, _, err = cli("rewrite", "--select", "step,missing", path)
    assert code == 0
    assert "warning: --select missing: no such compiled function was rewritten" in err


def test_select_by_qualified_name_reaches_methods_and_nested_functions(cli, tmp_path):
    source = (
        "import torch\nimport carve\n\n\nclass Model(torch.nn.Module):\n"
        "    @carve.compile\n    def forward(self, x):\n        print(x)\n        return x\n\n\n"
        "def outer():\n    @carve.compile\n    def forward(x):\n        print(x)\n        return x\n    return forward\n"
    )
    path = write(tmp_path / "m.py", source)
    code, out, err = cli("rewrite", "--select", "Model.forward", path)
    assert code == 0 and "warning" not in err
    assert '_carve_Model_forward = carve.RegionSet("Model.forward")' in out and "_carve_outer_forward" not in out
    code, out, err = cli("rewrite", "--select", "outer.forward", path)
    assert code == 0 and "warning" not in err
    assert '_carve_outer_forward = carve.RegionSet("outer.<locals>.forward")' in out and "_carve_Model" not in out


def test_all_functions_includes_undecorated_torch_functions(cli, tmp_path):
    path = write(tmp_path / "m.py", TWO_FUNCTIONS + "\n\ndef no_torch(a):\n    return a + 1\n")
    code, out, _ = cli("rewrite", "--all-functions", path)
    assert code == 0
    assert "_carve_uses_torch = carve.RegionSet" in out
    assert "_carve_no_torch" not in out


def test_exclude_patterns_and_gitignore(cli, tree, tmp_path):
    write(tree / ".gitignore", "generated/\n")
    write(tree / "generated" / "gen.py", COMPILED)
    code, out, _ = cli("rewrite", "--check", tree, "--exclude", "pkg/")
    assert code == 1
    assert out.splitlines() == [f"would rewrite: {tree / 'model.py'}"]
    code, out, _ = cli("rewrite", "--check", tree, "--no-gitignore")
    assert f"would rewrite: {tree / 'generated' / 'gen.py'}" in out.splitlines()


# -- bad input ------------------------------------------------------------------------------

def test_bad_inputs_are_reported_and_the_rest_is_processed(cli, tmp_path):
    src = tmp_path / "src"
    write(src / "good.py", COMPILED)
    write(src / "broken_syntax.py", "import torch\n\ndef f(x:\n    return x\n")
    write(src / "latin1.py", b"import torch\nname = '\xe9t\xe9'\n")
    write(src / "bad_option.py", "import torch\n\n\n@torch.compile(unknown_flag=True)\ndef f(x):\n    return x\n")
    empty = tmp_path / "empty"
    write(empty / "notes.txt", "no python here")
    out = tmp_path / "out"
    code, stdout, err = cli("rewrite", src, tmp_path / "missing.py", empty, "-o", out)
    assert code == 2
    lines = err.splitlines()
    assert f"{tmp_path / 'missing.py'}: error: no such file or directory" in lines
    assert f"{empty}: error: no Python files found (after excludes)" in lines
    assert f"{src / 'broken_syntax.py'}:3: error: syntax error: '(' was never closed" in lines
    assert f"{src / 'latin1.py'}:2: error: cannot decode: byte 0xe9 is not valid utf-8" in err
    assert any(l.startswith(f"{src / 'bad_option.py'}:4: error: cannot rewrite f(): unsupported option unknown_flag=") for l in lines)
    assert lines[-1] == "carve rewrite: 1 file rewritten, 0 unchanged, 5 errors"
    # The good file is written; nothing for the failing ones, and no temp files anywhere.
    # (The tree mirrored is below the common directory of all the paths given.)
    assert sorted(snapshot(out)) == ["src/good.py"]


def test_a_declared_encoding_is_decoded_and_kept(cli, tmp_path):
    source = "# -*- coding: latin-1 -*-\n" + COMPILED.replace('"y"', '"\xe9t\xe9"')
    path = write(tmp_path / "latin.py", source.encode("latin-1"))
    out = tmp_path / "out"
    assert cli("rewrite", path, "-o", out)[0] == 0
    data = (out / "latin.py").read_bytes()
    assert b'print("\xe9t\xe9", y)' in data
    assert data.decode("latin-1") == rewrite_source(source, "latin.py").text


def test_crlf_newlines_and_bom_survive(cli, tmp_path):
    source = COMPILED.replace("\n", "\r\n")
    path = write(tmp_path / "windows.py", b"\xef\xbb\xbf" + source.encode())
    code, out, _ = cli("rewrite", "-o", tmp_path / "out", path)
    data = (tmp_path / "out" / "windows.py").read_bytes()
    assert code == 0
    assert data.startswith(b"\xef\xbb\xbfimport torch\r\nimport carve\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_write_failure_leaves_no_partial_or_temp_file(cli, tmp_path, monkeypatch):
    path = write(tmp_path / "src" / "model.py", COMPILED)
    out = tmp_path / "out"
    real_fdopen = os.fdopen

    class FailingFile:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode="r": FailingFile(real_fdopen(fd, mode)))
    code, _, err = cli("rewrite", path, "-o", out)
    assert code == 2
    assert f"{path}: error: cannot write output: No space left on device" in err
    assert list(out.rglob("*")) == []


def test_in_place_failure_keeps_the_original(cli, tmp_path, monkeypatch):
    path = write(tmp_path / "model.py", COMPILED)
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(13, "Permission denied")))
    code, _, err = cli("rewrite", "--in-place", path)
    assert code == 2 and "Permission denied" in err
    assert path.read_text() == COMPILED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


# -- never executes the input, never imports torch -------------------------------------------

def test_inputs_are_never_imported_or_executed(cli, tmp_path):
    marker = tmp_path / "executed.marker"
    source = (
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "raise SystemExit('this module must not run')\n"
        + COMPILED
    )
    path = write(tmp_path / "dangerous.py", source)
    code, out, _ = cli("rewrite", path)
    assert code == 0 and "_carve_step" in out
    assert not marker.exists()


def test_the_command_never_imports_torch(tree, tmp_path):
    script = (
        "import sys\n"
        "from carve.cli import main\n"
        f"code = main(['rewrite', {str(tree)!r}, '-o', {str(tmp_path / 'out')!r}, '-q', '--jobs', '1'])\n"
        "assert code == 0, code\n"
        "assert 'torch' not in sys.modules, 'carve rewrite imported torch'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (tmp_path / "out" / "model.py").exists()


# -- large trees ----------------------------------------------------------------------------

def test_many_files_in_parallel_match_one_by_one(tmp_path):
    src = tmp_path / "src"
    for index in range(24):
        write(src / f"module_{index:02d}.py", COMPILED.replace("step", f"step_{index}"))
    write(src / "bad.py", "def broken(:\n")
    run = lambda jobs, out: subprocess.run(
        [sys.executable, "-m", "carve", "rewrite", str(src), "-o", str(out), "--jobs", jobs],
        capture_output=True, text=True,
    )
    parallel = run("2", tmp_path / "parallel")
    serial = run("1", tmp_path / "serial")
    assert parallel.returncode == serial.returncode == 2
    assert parallel.stderr == serial.stderr
    assert parallel.stderr.splitlines()[-1] == "carve rewrite: 24 files rewritten, 0 unchanged, 1 error"
    assert snapshot(tmp_path / "parallel") == snapshot(tmp_path / "serial")
    assert len(snapshot(tmp_path / "parallel")) == 24


def test_no_progress_bar_when_stderr_is_not_a_terminal(tree, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "carve", "rewrite", str(tree), "-o", str(tmp_path / "out")],
        capture_output=True, text=True,
    )
    assert "\r" not in result.stderr
    assert result.stderr == "carve rewrite: 2 files rewritten, 2 unchanged\n"


def test_golden_tree_is_already_rewritten(cli, tmp_path):
    """The committed .rewritten.py files are fixed points of the command (idempotence, end to end)."""
    for path in GOLDEN.glob("*.rewritten.py"):
        write(tmp_path / path.name, path.read_bytes())
    code, out, err = cli("rewrite", "--check", tmp_path)
    assert code == 0 and out == ""
    assert err == "carve rewrite: 0 files would be rewritten, 9 unchanged\n"


def test_progress_bar_on_a_terminal_and_quiet_turns_it_off(tmp_path):
    import pty

    src = tmp_path / "src"
    for index in range(3):
        write(src / f"m{index}.py", COMPILED)

    def stderr_on_a_terminal(*extra):
        master, slave = pty.openpty()
        subprocess.run(
            [sys.executable, "-m", "carve", "rewrite", str(src), "--check", "--jobs", "1", *extra],
            stdout=subprocess.DEVNULL, stderr=slave, check=False,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        return b"".join(chunks).decode()

    shown = stderr_on_a_terminal()
    assert "carve rewrite [" in shown and "3/3" in shown
    assert "carve rewrite: 3 files would be rewritten" in shown
    assert stderr_on_a_terminal("-q") == ""
