"""The HTML report in a real browser: loads, draws its plots, needs nothing from the network."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]


@pytest.mark.timeout(180)
def test_html_report_loads_self_contained_with_plots_and_units(cli, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0.002", "--repeat", "5", "--label", label, "--quiet").status == 0
    mpi = cli("run", "mpi", "--np", "2", "--op=pingpong", "--sizes=8,1k,32k", "--repeat", "5", "--label", "a",
              "--quiet")
    assert mpi.status == 0, mpi.stderr
    out = tmp_path / "report.html"
    r = cli("report", "a", "b", "-o", str(out))
    assert r.status == 0, r.stderr
    text = out.read_text()
    # self-contained: nothing to fetch, no script
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", text)
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"url\((?!#)", text)
    assert "Comparison, baseline a" in text and text.count("<svg") >= 3  # bars, run bars, size curve

    profile = tmp_path / "profile"
    shot = tmp_path / "report.png"
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          out.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert dom.stdout.count("<svg") >= 1 and "<path" in dom.stdout
    assert "MiB/s" in dom.stdout and "CI of median" in dom.stdout and "Test environment" in dom.stdout
    shot_run = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1200,1600",
                               f"--screenshot={shot}", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot_run.returncode == 0 and shot.stat().st_size > 10_000
