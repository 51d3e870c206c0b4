"""The HTML comparison's limit column, laid out by Chromium: each
configuration's limit reads in a line or two, on screen and on A4. Beside
the figures (nowrap) and a wide verdict column it was squeezed to a word a
line ("base: ! / cache: / above the / 1 Gbit/s / link")."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from test_golden_reports import fill_store

A4_TEXT_WIDTH_PX = 703   # 210 mm less the 12 mm margins, at 96 px per inch

# each limit cell of the comparison (the column headed "limit"): its entries (one a configuration,
# each on a line of its own) and the lines they take; a new line starts below the one before
MEASURE = """<script>
addEventListener('load', () => {
  const cells = [];
  for (const table of document.querySelectorAll('table.wide')) {
    const col = [...table.querySelectorAll('th')].findIndex(th => th.textContent.trim() === 'limit');
    if (col < 0) continue;
    for (const row of table.querySelectorAll('tr')) {
      const el = row.children[col];
      if (!el || el.tagName !== 'TD') continue;
      const r = document.createRange(); r.selectNodeContents(el);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      const entries = el.innerText.split('\\n').filter(x => x.trim());
      cells.push([entries, tops.size]);
    }
  }
  const out = document.createElement('pre'); out.id = 'verdict';
  out.textContent = JSON.stringify(cells); document.body.appendChild(out);
});
</script></body>"""


def limit_lines(chromium: str, page: str, width_px: int, printed: bool, tmp_path) -> list[tuple[list[str], int]]:
    text = page.replace("</body>", MEASURE)
    if printed:   # the print rules, applied on screen at the printed width
        text = text.replace("@media print{", "@media all{")
    path = tmp_path / f"limit-{width_px}.html"
    path.write_text(text)
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width_px},1000",
                          "--virtual-time-budget=5000", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="verdict">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    return [tuple(x) for x in json.loads(html.unescape(m.group(1)))]


@pytest.mark.timeout(240)
def test_a_comparisons_limit_reads_in_a_line_or_two_not_a_word_a_line(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'golden.db'}"
    fill_store(url)
    page = render("html", Report.of(Store(url), ["base", "tuned"]))
    for width, printed in ((1200, False), (A4_TEXT_WIDTH_PX, True)):
        lines = limit_lines(chromium, page, width, printed, tmp_path)
        # the golden store's comparison has its disk's and its TCP's limits, each for base and tuned
        assert ["base: ! cache: above the 1 Gbit/s link", "tuned: ! cache: above the 1 Gbit/s link"] in [
            e for e, _ in lines], lines
        assert all(n <= 2 * len(entries) for entries, n in lines if entries), (width, lines)
