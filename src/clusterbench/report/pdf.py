"""PDF: the HTML report printed by headless Chromium (print-to-PDF), on A4
unless told Letter, for a document that takes pages, not files. The HTML
itself names no paper size, so a browser prints it on the reader's."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from clusterbench.errors import BadInput, MeasurementFailed

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# No network, no profile left behind, no first-run work: the page is one self-contained file.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-pdf-header-footer")
TIMEOUT_S = 120


def chromium() -> str:
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    raise BadInput("report as PDF needs Chromium (chromium on PATH); write --format html and print it instead")


PAPERS = ("A4", "letter")


def _end(p: subprocess.Popen) -> None:
    """The browser and every process it started, ended and reaped."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def html_to_pdf(html_text: str, paper: str = "A4") -> bytes:
    """The PDF bytes of an HTML page on `paper` (PAPERS), printed in a private temporary folder that is removed after."""
    browser = chromium()
    html_text = html_text.replace("</head>", f"<style>@page{{size:{paper}}}</style></head>", 1)
    with tempfile.TemporaryDirectory(prefix="clusterbench-pdf-") as tmp:
        page, out = Path(tmp) / "report.html", Path(tmp) / "report.pdf"
        page.write_text(html_text, encoding="utf-8")
        # a session of its own: a Chromium that hangs is ended with every process it started
        # (subprocess.run's timeout killed the browser alone and raised a traceback)
        with subprocess.Popen([browser, *FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}",
                               page.as_uri()], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as p:
            try:
                _, err = p.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _end(p)
                raise MeasurementFailed(f"Chromium did not print the report to PDF within {TIMEOUT_S:g} s "
                                        f"and was stopped: write --format html and print it instead") from None
            except BaseException:   # Ctrl-C: its own session does not get the terminal's SIGINT
                _end(p)
                raise
        if p.returncode != 0 or not out.exists() or out.stat().st_size == 0:
            last = (err.strip().splitlines() or ["no output"])[-1]
            raise MeasurementFailed(f"Chromium did not print the report to PDF (exit {p.returncode}): {last}")
        return out.read_bytes()
