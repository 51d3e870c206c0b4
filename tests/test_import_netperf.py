"""clusterbench import of netperf (2.7.1 and 2.4.5 built from github
HewlettPackard/netperf, run between two namespaces: tests/fixtures/README):
which test a row is, in the tcp kernel's names where it is the tcp
kernel's measurement. Parsed in process; one import through the command line."""
from __future__ import annotations

import pytest

from conftest import store_rows

from clusterbench import importers
from clusterbench.errors import BadInput
from clusterbench.importers import Unreadable, netperf
from clusterbench.importers.import_runs import parse_file
from test_import import FIXTURES, one


def steps(name: str) -> list[tuple]:
    """Each sample's step and figure, to 10 figures (netperf prints 6 or 7; the Gbit/s are a division)."""
    return [(st.kernel, st.params.get("direction") or st.params.get("test"), s.phase, s.condition, s.unit,
             float(f"{s.value:.10g}")) for run in parse_file(str(FIXTURES / name)) for st in run.steps for s in st.samples]


def test_netperf_stream_tests_are_the_tcp_kernels_receiver_rate_in_gbit_per_s():
    """netperf's throughput is what the receiver got (omni's remote bytes for a send, its own for a
    receive): 'no known format' before."""
    run = one("netperf-2.7.1-tcp-stream.txt")
    (st,) = run.steps
    assert (run.tool, run.facts["import.server"]) == ("netperf", "198.18.7.2")
    assert st.params == {"role": "client", "streams": "1", "duration": "1", "message-size": "16k",
                         "direction": "send"}
    # "131072  16384  16384    1.00     5239.74" in 10^6bits/sec
    assert steps("netperf-2.7.1-tcp-stream.txt") == [("tcp", "send", "send", "receiver", "Gbit/s", 5.23974)]
    assert steps("netperf-2.7.1-tcp-maerts.txt") == [("tcp", "reverse", "receive", "receiver", "Gbit/s", 5.03505)]
    # -f M: MBytes/sec are 2^20 bytes
    assert steps("netperf-2.7.1-tcp-stream-MBytes.txt")[0][5] == pytest.approx(385.48 * 2**20 * 8 / 1e9)
    s = one("netperf-2.7.1-tcp-stream-cpu.txt").steps[0].samples[0]   # -c -C
    assert (s.record["cpu_local_percent"], s.record["service_demand_remote_us_per_kb"]) == (100.0, 2.772)
    # the same key as clusterbench's tcp kernel and an iperf3 import
    iperf3 = one("iperf3-3.12-server-tcp.txt").steps[0].samples[0]
    assert one("netperf-2.7.1-tcp-stream.txt").steps[0].samples[0].key() == iperf3.key()


def test_netperf_tcp_rr_is_the_tcp_kernels_rr_with_the_latency_its_rate_implies():
    (st,) = one("netperf-2.7.1-tcp-rr.txt").steps
    (s,) = st.samples
    assert (st.kernel, st.params["test"], st.params["request-size"], st.params["response-size"]) == ("tcp", "rr", "1", "1")
    assert (s.phase, s.condition, s.unit, s.value) == ("rr", "round-trip", "transactions/s", 63285.44)
    assert s.record["latency_us_mean"] == pytest.approx(1e6 / 63285.44)   # one transaction in flight
    # -k and -o print the measured latencies: those are taken
    (s,) = one("netperf-2.7.1-tcp-rr-omni-k.txt").steps[0].samples
    assert (s.value, s.record["latency_us_mean"], s.record["latency_us_p99"]) == (69676.222, 14.31, 26.0)
    (s,) = one("netperf-2.7.1-tcp-rr-omni-o.txt").steps[0].samples
    assert (s.value, s.record["latency_us_min"], s.record["latency_us_max"]) == (54175.987, 11.0, 16380.0)
    # UDP_RR is not the tcp kernel's
    assert steps("netperf-2.7.1-udp-rr.txt") == [("netperf", "rr", "rr", "round-trip", "transactions/s", 45705.31)]


def test_netperf_udp_stream_is_the_receivers_row_with_the_senders_beside_it():
    (st,) = one("netperf-2.7.1-udp-stream.txt").steps
    (s,) = st.samples
    # sent: "212992    1472   1.00       140321      0    1650.36"; received: "212992  1.00  90640  1066.04"
    assert (st.kernel, st.params["message-size"], s.phase, s.value) == ("netperf", "1472", "udp", pytest.approx(1.06604))
    assert (s.record["sender_gbit_per_s"], s.record["packets"], s.record["lost_packets"]) == (
        pytest.approx(1.65036), 140321, 49681)


def test_netperf_rows_without_headers_are_read_from_the_command_in_the_transcript():
    """-P 0 prints the rows alone: the transcript's `$ netperf ... -t TCP_MAERTS -P 0` says which test."""
    assert steps("netperf-2.7.1-P0-transcript.txt") == [
        ("tcp", "send", "send", "receiver", "Gbit/s", 6.70426),
        ("tcp", "reverse", "receive", "receiver", "Gbit/s", 7.80266),
        ("tcp", "rr", "rr", "round-trip", "transactions/s", 33446.9),
        ("netperf", None, "udp", "n/a", "Gbit/s", 0.34692),
        ("tcp", "send", "send", "receiver", "Gbit/s", 2.74015),          # -o's values without their heading
        ("tcp", "rr", "rr", "round-trip", "transactions/s", 29969.398)]  # -k
    first = parse_file(str(FIXTURES / "netperf-2.7.1-P0-transcript.txt"))
    assert first[0].steps[0].params["message-size"] == "64k" and first[2].steps[0].params["request-size"] == "64"
    # "-r 64,1024" is netperf's option, not a figure in another locale
    assert not any("another locale" in n for r in first for n in r.notes)
    # without its command, a row alone is no known test
    with pytest.raises(Unreadable):
        netperf.parse("131072  16384  16384    1.00     4362.88\n")


def test_netperf_2_4_classic_banners_are_read_as_the_migrated_ones():
    assert steps("netperf-2.4.5-transcript.txt") == [
        ("tcp", "send", "send", "receiver", "Gbit/s", 6.76593),
        ("tcp", "reverse", "receive", "receiver", "Gbit/s", 6.53601),
        ("tcp", "rr", "rr", "round-trip", "transactions/s", 19360.81),
        ("netperf", None, "udp", "n/a", "Gbit/s", 0.36344),     # "UDP UNIDIRECTIONAL SEND TEST"
        ("tcp", "send", "send", "receiver", "Gbit/s", 4.36288),
        ("tcp", "rr", "rr", "round-trip", "transactions/s", 18973.51)]


def test_netperf_confidence_warning_is_kept_in_the_note():
    run = one("netperf-2.7.1-tcp-stream-confidence.txt")
    assert any("Desired confidence was not achieved" in n and "541.240%" in n for n in run.notes)
    assert run.steps[0].samples[0].value == pytest.approx(6.70448)


def test_netperf_transaction_rate_no_system_reaches_is_refused_with_its_line(tmp_path):
    """The plausibility gate held transactions/s to nothing: 63 trillion per second was taken."""
    text = (FIXTURES / "netperf-2.7.1-tcp-rr.txt").read_text().replace("63285.44", "63285440000000.44")
    (tmp_path / "rr.txt").write_text(text)
    with pytest.raises(BadInput, match=r"netperf: line 7: rr 6.32854e\+13 transactions/s is beyond any system"):
        parse_file(str(tmp_path / "rr.txt"))


def test_netperf_test_that_printed_no_result_is_refused_in_one_line(cli, store_url):
    assert cli("import", str(FIXTURES / "netperf-2.4.5-transcript.txt")).status == 0
    assert store_rows(store_url, "select count(*) from runs") == [(6,)]
    failed = FIXTURES / "netperf-2.7.1-no-server.txt"   # no netserver on the port
    assert importers.detect(failed.read_text()) == "netperf"
    r = cli("import", str(failed))
    assert r.status == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert "netperf said \"establish control: are you sure there is a netserver listening on 198.18.7.2" in r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(6,)]
