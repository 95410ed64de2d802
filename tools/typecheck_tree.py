"""Build the package tree mypy checks (`make typecheck`).

pyproject.toml maps `carve` onto compiler/ and its subpackages onto rewriters/ and
runtime/; the editable install resolves that mapping at import time, but mypy only
follows folders on disk. So this script lays out the installed shape as symlinks
(`carve/<file>` -> compiler/<file>, `carve/rewriters` -> rewriters/, ...) under a
git-ignored folder, rebuilt on every run so that an added or removed module is seen.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def build(out: Path) -> Path:
    with open(ROOT / "pyproject.toml", "rb") as f:
        package_dir: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    top = out / "carve"
    if top.exists():
        shutil.rmtree(top)
    top.mkdir(parents=True)
    for path in sorted((ROOT / package_dir["carve"]).iterdir()):
        if path.suffix == ".py":
            (top / path.name).symlink_to(path)
    # Subpackages are linked whole: their own subpackages (rewriters/lint, ...) keep their folders.
    for name, folder in package_dir.items():
        if name != "carve":
            (out / name.replace(".", "/")).symlink_to(ROOT / folder, target_is_directory=True)
    return top


if __name__ == "__main__":
    build(ROOT / (sys.argv[1] if len(sys.argv) > 1 else ".typecheck"))
