"""iperf3 3.21, the newest release (tests/fixtures/README says how each file was made, in a network
namespace on 198.18.0.1): its JSON adds `gso`/`gro` to 3.20's `timemillisecs`, `fq_rate` and
per-stream `reorder`, its text the same lines. Every rate the import reads is the one the file
printed, client and server, TCP, -P 2 -R, --bidir (with -P 2: `[SUM][TX-C]` lines) and UDP."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clusterbench.importers.import_runs import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
# which of the JSON's end sums each direction's receiver rate is
JSON_SUMS = {"tcp": {"send": "sum_received"}, "tcp-P2-reverse": {"receive": "sum_received"},
             "bidir": {"send": "sum_received", "receive": "sum_received_bidir_reverse"}}
UNITS = {"G": 1.0, "M": 1e-3, "K": 1e-6}


def rates(name: str) -> dict[str, float]:
    (run,) = parse_file(str(FIXTURES / name))
    (step,) = run.steps
    return {s.phase: s.value for s in step.samples}


@pytest.mark.parametrize("test", sorted(JSON_SUMS))
def test_json_rates_are_the_receivers_sums_iperf3_wrote(test):
    end = json.loads((FIXTURES / f"iperf3-3.21-{test}.json").read_text())["end"]
    (run,) = parse_file(str(FIXTURES / f"iperf3-3.21-{test}.json"))
    assert run.version == "3.21"
    assert rates(f"iperf3-3.21-{test}.json") == {d: end[k]["bits_per_second"] / 1e9 for d, k in JSON_SUMS[test].items()}


def test_udp_json_is_the_receivers_rate_jitter_and_loss():
    received = json.loads((FIXTURES / "iperf3-3.21-udp.json").read_text())["end"]["sum_received"]
    (run,) = parse_file(str(FIXTURES / "iperf3-3.21-udp.json"))
    (s,) = run.steps[0].samples
    assert (s.phase, s.value) == ("udp", received["bits_per_second"] / 1e9)


def test_json_stream_is_read_as_its_end_event():
    events = [json.loads(line) for line in (FIXTURES / "iperf3-3.21-tcp-json-stream.json").read_text().splitlines()]
    (end,) = [e["data"] for e in events if e["event"] == "end"]
    assert rates("iperf3-3.21-tcp-json-stream.json") == {"send": end["sum_received"]["bits_per_second"] / 1e9}


def printed_receiver_rates(name: str) -> dict[str, float]:
    """Each direction's receiver line as printed: the [SUM] one where there is one, in Gbit/s."""
    text = (FIXTURES / name).read_text()
    found: dict[str, tuple[bool, float]] = {}
    line = r"^\[(SUM|\s*\d+)\](?:\[(TX-C|RX-C)\])?\s+0\.00-\S+\s+sec\s+\S+ \wBytes\s+([\d.]+) (\w)bits/sec.*receiver$"
    for sid, role, value, unit in re.findall(line, text, re.M):
        direction = "receive" if role == "RX-C" or (not role and "Reverse mode" in text) else "send"
        if sid == "SUM" or direction not in found or not found[direction][0]:
            found[direction] = (sid == "SUM", float(value) * UNITS[unit])
    return {d: v for d, (_, v) in found.items()}


@pytest.mark.parametrize("name", [f"iperf3-3.21-{t}.txt" for t in ("tcp", "tcp-verbose", "tcp-P2-reverse", "bidir",
                                                                   "bidir-P2")])
def test_text_rates_are_the_receiver_lines_printed(name):
    printed = printed_receiver_rates(name)
    assert printed and rates(name) == pytest.approx(printed)


def test_udp_text_is_the_receiver_line():
    # "100 Mbits/sec  0.006 ms  0/382 (0%)  receiver"
    assert rates("iperf3-3.21-udp.txt") == {"udp": pytest.approx(0.1)}


def test_verbose_text_states_version_and_time():
    (run,) = parse_file(str(FIXTURES / "iperf3-3.21-tcp-verbose.txt"))
    assert run.version == "3.21" and run.started.isoformat() == "2026-12-07T21:07:21+00:00"


@pytest.mark.parametrize("name,expected", [
    # the server received --bidir's send half ([RX-S] receiver) and sent its receive half ([TX-S] sender)
    ("iperf3-3.21-server-bidir.txt", {"send": 18.7, "receive": 11.0}),
    ("iperf3-3.21-server-bidir-P2.txt", {"send": 22.0, "receive": 28.6}),
    ("iperf3-3.21-server-P2-reverse.txt", {"receive": 64.0}),   # -R: the server's [SUM] sender line
])
def test_server_text_rates_are_its_end_lines(name, expected):
    (run,) = parse_file(str(FIXTURES / name))
    (step,) = run.steps
    assert step.params["role"] == "server"
    assert {s.phase: s.value for s in step.samples} == expected


def test_run_starts_at_the_millisecond_3_20_on_state():
    # "timemillisecs" (3.20 on): the start was its whole second, up to 1 s early, as timesecs alone says
    stamp = json.loads((FIXTURES / "iperf3-3.21-tcp.json").read_text())["start"]["timestamp"]
    (run,) = parse_file(str(FIXTURES / "iperf3-3.21-tcp.json"))
    assert run.started.timestamp() * 1e3 == pytest.approx(stamp["timemillisecs"], abs=1)
    assert (run.finished - run.started).total_seconds() == 1   # -t 1
    (old,) = parse_file(str(FIXTURES / "iperf3-3.12-tcp.json"))   # timesecs alone
    assert old.started.microsecond == 0


def test_json_stream_full_output_is_one_test_without_a_note():
    """--json-stream-full-output (3.20 on) prints the events, then the same test as -J's document:
    read as the run twice, "a log appended to itself", taken once with that note."""
    lines = (FIXTURES / "iperf3-3.21-tcp-json-stream-full.json").read_text().splitlines()
    events = [json.loads(line) for line in lines if line.startswith('{"event"')]
    document = json.loads("\n".join(line for line in lines if not line.startswith('{"event"')))
    assert [e["event"] for e in events] == ["start", "interval", "end"] and document["end"] == events[2]["data"]
    (run,) = parse_file(str(FIXTURES / "iperf3-3.21-tcp-json-stream-full.json"))
    assert run.notes == []
    received = document["end"]["sum_received"]["bits_per_second"]
    assert rates("iperf3-3.21-tcp-json-stream-full.json") == {"send": received / 1e9}
