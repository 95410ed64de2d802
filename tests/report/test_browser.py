"""The demo's report as a person sees it: rendered by headless Chromium, kept as docs/report.png when CARVE_UPDATE_SCREENSHOT=1.

Runs `CARVE_REPORT=DIR python examples/demo.py` (the one command the README gives), renders the
page of the demo's model (`Net.forward`: a loop whose print stays Python while the blocks and the
head are compiled), and checks that the screenshot is a PNG of the window's size with something
on it. Chromium comes from Debian's `chromium` package, installed here when missing (apt-get, as
root); the test is skipped, saying why, when it cannot be installed.
"""

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "report.png"
WIDTH, HEIGHT = 1280, 1100
# A blank page of that size is about 6 KB; the report's text, colours and source make it many times more.
MIN_BYTES = 40_000

pytestmark = pytest.mark.browser


def chromium() -> str:
    found = shutil.which("chromium")
    if found:
        return found
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("chromium is not installed, and apt-get (as root) is not available to install it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
            subprocess.run(command, check=True, capture_output=True, text=True, env=env, timeout=1800)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        output = getattr(error, "stderr", "") or ""
        pytest.skip(f"could not install Debian's chromium package ({error}): {output.strip()[-300:]}")
    found = shutil.which("chromium")
    if not found:
        pytest.skip("apt-get installed chromium, but no `chromium` command is on PATH")
    return found


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_demo_report_renders_in_a_browser(tmp_path):
    browser = chromium()
    report_dir = tmp_path / "report"
    env = dict(os.environ, CARVE_REPORT=str(report_dir))
    demo = subprocess.run([sys.executable, "examples/demo.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert demo.returncode == 0, demo.stderr[-2000:]
    page = report_dir / "demo.Net.forward.html"
    assert page.exists(), sorted(p.name for p in report_dir.iterdir())

    shot = tmp_path / "report.png"
    render = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}",
         page.as_uri()],
        capture_output=True, text=True, timeout=300)
    assert render.returncode == 0 and shot.exists(), render.stderr[-2000:]
    data = shot.read_bytes()
    assert png_size(data) == (WIDTH, HEIGHT)
    assert len(data) > MIN_BYTES, f"the screenshot is {len(data)} bytes: is the page blank?"
    if os.environ.get("CARVE_UPDATE_SCREENSHOT") == "1":
        # Kept in the repository for the README; a test run leaves the tree as it was.
        shutil.copyfile(shot, SCREENSHOT)
