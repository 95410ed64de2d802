"""Linting a tree of files together: what one file compiles may be defined in another.

    # train.py                                  # model.py
    from model import GPT                       class GPT(nn.Module):
    model = torch.compile(GPT(config))              def forward(self, idx):
                                                        print(idx.shape)     # CRV003, reported here

    results = lint_project(["train.py", "model.py"], LintConfig())     # one process
    results = lint_tree(files, run)     # the CLI: `run` lints a batch of files across processes

Every file is linted once, on its own (in parallel in the CLI). A file that compiles a
class or function imported from another linted file, or calls one from compiled code,
names it in `FileResult.reached`; the defining file is then linted again with those
functions as extra targets, and its findings replace the first ones (a superset: its own
compiled functions are linted as before). That repeats until no file learns of a new
target, so chains (train.py -> model.py -> layers.py) and import cycles end. Within one
run of a file each finding is reported once, however many files reach it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from carve.rewriters.lint.modules import ExternalTarget, ProjectLayout

# Rounds of re-linting before giving up on a (pathological) ever-growing set of targets.
MAX_ROUNDS = 20

WorkItem = tuple[str, tuple[ExternalTarget, ...]]


def lint_tree(files: Sequence[str], run: Callable[[list[WorkItem]], list]) -> list:
    """Lint `files`; `run(items)` lints [(filename, extra targets)] and returns their FileResults in order."""
    results = list(run([(filename, ()) for filename in files]))
    position = {os.path.realpath(filename): index for index, filename in enumerate(files)}
    targets: dict[int, set[ExternalTarget]] = {}
    fresh = list(range(len(files)))
    for _ in range(MAX_ROUNDS):
        grown: set[int] = set()
        for index in fresh:
            for target in getattr(results[index], "reached", ()) or ():
                defining = position.get(target.path)
                if defining is None:
                    continue
                known = targets.setdefault(defining, set())
                if target not in known:
                    known.add(target)
                    grown.add(defining)
        if not grown:
            break
        fresh = sorted(grown)
        again = run([(files[index], tuple(sorted(targets[index]))) for index in fresh])
        for index, result in zip(fresh, again):
            results[index] = result
    return results


def lint_project(files: Sequence[str], config, layout: ProjectLayout | None = None, want_fixes: bool = False, paths=()) -> list:
    """`lint_tree` in this process. `layout` defaults to the files' own tree (and `paths`) with the
    interpreter's sys.path for installed packages."""
    from carve.rewriters.lint.driver import lint_file

    layout = layout or ProjectLayout.build(list(paths), files)
    return lint_tree(files, lambda items: [lint_file(name, config, want_fixes, layout, extra) for name, extra in items])
