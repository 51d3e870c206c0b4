"""PDF: the HTML report printed by headless Chromium (print-to-PDF), on A4
unless told Letter, for a document that takes pages, not files. The HTML
itself names no paper size, so a browser prints it on the reader's."""
from __future__ import annotations

import shutil
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


def html_to_pdf(html_text: str, paper: str = "A4") -> bytes:
    """The PDF bytes of an HTML page on `paper` (PAPERS), printed in a private temporary folder that is removed after."""
    browser = chromium()
    html_text = html_text.replace("</head>", f"<style>@page{{size:{paper}}}</style></head>", 1)
    with tempfile.TemporaryDirectory(prefix="clusterbench-pdf-") as tmp:
        page, out = Path(tmp) / "report.html", Path(tmp) / "report.pdf"
        page.write_text(html_text, encoding="utf-8")
        r = subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}",
                            page.as_uri()], capture_output=True, text=True, timeout=TIMEOUT_S)
        if r.returncode != 0 or not out.exists() or out.stat().st_size == 0:
            last = (r.stderr.strip().splitlines() or ["no output"])[-1]
            raise MeasurementFailed(f"Chromium did not print the report to PDF (exit {r.returncode}): {last}")
        return out.read_bytes()
