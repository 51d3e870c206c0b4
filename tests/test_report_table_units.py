"""A step's table shows its figures in a unit that keeps them to five
integer digits at most: a GPU's memory read 3,732,681 MiB/s (3,914,000 MB/s
beside it). The golden store's stream sweep reaches 124,969 MiB/s on two
threads: its table is in GiB/s, one unit for the column, and JSON keeps
the records' MiB/s."""
from __future__ import annotations

import json
import re

from test_golden_reports import golden_cli  # noqa: F401 (a fixture)


def test_a_column_steps_up_a_unit_only_from_six_integer_digits_and_keeps_binary_with_binary():
    from clusterbench.report.table_units import larger_for

    assert larger_for("MiB/s", 99_999).unit == "MiB/s"        # five digits: as recorded
    shown = larger_for("MiB/s", 3_732_681)
    assert (shown.unit, shown.value(3_732_681)) == ("GiB/s", 3_732_681 / 1024)
    assert shown.beside(3_914_000, "MB/s") == (3_914, "GB/s")   # the decimal figure beside steps with it
    assert larger_for("MB/s", 150_000).unit == "GB/s"
    assert larger_for("us", 2_000_000).unit == "us"           # a unit with no larger one named stays


def _stream_rows(text: str) -> list[str]:
    # the step table's rows (n in the third cell), not the comparison's, which names the measurement alike
    return [line for line in text.splitlines() if re.match(r"\| copy \| best, 2 threads \| \d+ \|", line)]


def test_the_stream_sweeps_table_is_in_gib_s_with_at_most_five_integer_digits(golden_cli, tmp_path):
    out = tmp_path / "r.md"
    golden_cli("report", "base", "tuned", "-o", str(out))
    rows = _stream_rows(out.read_text())
    assert rows, "no stream step table"
    for row in rows:
        cells = row.removesuffix(" |").split(" | ")
        assert cells[8].startswith("GiB/s (") and cells[8].endswith(" GB/s)"), row
        for figure in re.findall(r"[\d,]+(?:\.\d+)?", " ".join(cells[3:7])):
            assert len(figure.split(".")[0].replace(",", "")) <= 5, (figure, row)
    assert "| copy | best, 2 threads | 3 | 119.6 | 117.3..122.0 " in rows[0]   # 122,519 MiB/s / 1,024
    html = tmp_path / "r.html"
    # one run: in a comparison the step's figures are plotted with the other configuration's instead
    golden_cli("report", "base", "-o", str(html))
    page = html.read_text()
    assert "<td class=n>119.6</td><td class=ci><span class=\"fig\">117.3..122.0</span></td>" in page
    # the step's plot under its table is read in the table's unit, not in millions of MiB/s
    section = page[page.index('<section class="step"><h3>stream sweep'):]
    section = section[:section.index("</section>")]
    assert "<svg" in section and ">GiB/s<" in section and "MiB/s" not in section
    assert re.search(r"copy\s+│ best, 2 threads │ 3 │\s+119\.6 │ 117\.3\.\.122\.0 \(75%\) │.*│ GiB/s │\s+128\.5 GB/s",
                     golden_cli("show", "1"))


def test_what_is_stored_and_exported_keeps_the_records_unit(golden_cli):
    exported = json.loads(golden_cli("export", "--format", "json", "1"))
    text = json.dumps(exported)
    assert '"rate_unit": "MiB/s"' in text and "124969.370248" in text and "GiB/s" not in text
