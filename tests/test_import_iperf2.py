"""clusterbench import of iperf 2 (2.1.8 from Debian, 2.0.6 built from
source; tests/fixtures/README says how each file was made): what each end
counted, which way the data went, and the rows of its CSV. Parsed in
process; one import through the command line."""
from __future__ import annotations

import pytest

from conftest import store_rows

from clusterbench import importers
from clusterbench.importers import Unreadable
from clusterbench.importers.import_runs import parse_file
from test_import import FIXTURES, one


def samples(name: str) -> list[tuple]:
    return [(st.kernel, st.params.get("direction"), s.phase, s.condition, s.value)
            for run in parse_file(str(FIXTURES / name)) for st in run.steps for s in st.samples]


@pytest.mark.parametrize("version", ["2.1.8", "2.0.6"])
def test_iperf2_client_gives_the_senders_rate_and_the_server_the_receivers(version):
    """iperf 2's client prints the bytes it wrote, its server the bytes it read: neither was a known format."""
    client, server = one(f"iperf-{version}-tcp-client.txt"), one(f"iperf-{version}-tcp-server.txt")
    (c,), (s,) = client.steps[0].samples, server.steps[0].samples
    assert (client.tool, client.form, client.facts["import.server"]) == ("iperf", "text", "198.18.7.2")
    assert client.steps[0].kernel == server.steps[0].kernel == "tcp"
    assert client.steps[0].params == {"role": "client", "streams": "1", "direction": "send", "duration": "2"}
    assert server.steps[0].params["role"] == "server" and server.facts["import.client"] == "198.18.7.1"
    assert (c.phase, c.condition, c.unit) == ("send", "sender", "Gbit/s")
    assert (s.phase, s.condition) == ("send", "receiver")
    # "[  1] 0.0000-2.0025 sec  3.60 GBytes  15.5 Gbits/sec" / 2.0.6: "[  3]  0.0- 2.0 sec  3.33 GBytes  14.3 Gbits/sec"
    expected = {"2.1.8": (15.5, 3.60, 2.0025), "2.0.6": (14.3, 3.33, 2.0)}[version]
    assert (c.value, c.bytes, c.seconds) == (expected[0], round(expected[1] * 2**30), expected[2])
    # the server's receiver figure is the tcp kernel's and iperf3's sample key
    iperf3 = one("iperf3-3.12-server-tcp.txt").steps[0].samples[0]
    assert s.key() == iperf3.key() and c.key() != iperf3.key()


def test_iperf2_parallel_streams_take_sum_and_dualtest_sums_each_direction_apart():
    assert samples("iperf-2.1.8-P2-client.txt") == [("tcp", "send", "send", "sender", 1.47)]
    (s,) = one("iperf-2.0.6-P2-client.txt").steps[0].samples
    assert (s.value, s.record["streams"], s.record["stream_gbit_per_s"]) == (10.7, 2, [6.46, 4.33])
    # -d -P 2: iperf's [SUM] adds both directions (21.4 Gbit/s); each direction is its own streams' sum
    assert samples("iperf-2.1.8-dualtest-P2-client.txt") == [
        ("tcp", "bidir", "send", "sender", pytest.approx(4.75 + 5.17)),
        ("tcp", "bidir", "receive", "receiver", pytest.approx(5.82 + 5.59))]
    notes = one("iperf-2.1.8-dualtest-P2-client.txt").notes
    assert "send: iperf's [SUM] adds both directions (-d): this direction's rate is the sum of its streams'" in notes
    assert samples("iperf-2.1.8-dualtest-P2-server.txt") == [
        ("tcp", "bidir", "send", "receiver", pytest.approx(5.18 + 4.78)),
        ("tcp", "bidir", "receive", "sender", pytest.approx(5.79 + 5.58))]
    # 2.0.6 -d: no marks, the connection to the client's own listener is the receive half
    assert samples("iperf-2.0.6-dualtest-client.txt") == [("tcp", "bidir", "send", "sender", 8.14),
                                                          ("tcp", "bidir", "receive", "receiver", 6.96)]
    assert samples("iperf-2.0.6-dualtest-server.txt") == [("tcp", "bidir", "send", "receiver", 8.12),
                                                          ("tcp", "bidir", "receive", "sender", 6.98)]


def test_iperf2_tradeoff_is_two_steps_and_reverse_is_the_receive_phase():
    assert samples("iperf-2.1.8-tradeoff-client.txt") == [("tcp", "send", "send", "sender", 5.72),
                                                          ("tcp", "reverse", "receive", "receiver", 8.51)]
    # the server's connection back to its client is marked "(reverse)" and sends
    assert samples("iperf-2.1.8-tradeoff-server.txt") == [("tcp", "send", "send", "receiver", 5.76),
                                                          ("tcp", "reverse", "receive", "sender", 8.49)]
    assert samples("iperf-2.1.8-reverse-client.txt") == [("tcp", "reverse", "receive", "receiver", 14.8)]
    assert samples("iperf-2.1.8-reverse-server.txt") == [("tcp", "reverse", "receive", "sender", 14.8)]


def test_iperf2_udp_is_the_servers_report_with_its_loss():
    (c,) = one("iperf-2.1.8-udp-client.txt").steps[0].samples
    (s,) = one("iperf-2.1.8-udp-server.txt").steps[0].samples
    # "[  1] 0.0000-1.9618 sec  33.0 MBytes   141 Mbits/sec   0.000 ms 12165/35670 (34%)"
    assert (c.phase, c.value, c.record["lost_packets"], c.record["packets"]) == ("udp", 0.141, 12165, 35670)
    assert c.record["sender_gbit_per_s"] == 0.21 and s.value == c.value and "sender_gbit_per_s" not in s.record
    step = one("iperf-2.0.6-udp-client.txt").steps[0]
    assert (step.kernel, step.params["message-size"], step.samples[0].record["jitter_ms"]) == ("iperf", "1470", 0.004)


def test_iperf2_udp_with_parallel_streams_is_all_of_them_not_the_first():
    """-u -P 2 in a namespace (tests/fixtures/README): the first stream's report was the test's figure."""
    # the server's [SUM]: "[SUM] 0.0000-1.9874 sec  37.6 MBytes   159 Mbits/sec   8804/35642 (25%)" (no jitter)
    (s,) = one("iperf-2.1.8-udp-P2-server.txt").steps[0].samples
    assert (s.value, s.record["lost_packets"], s.record["packets"], s.record["streams"]) == (0.159, 8804, 35642, 2)
    assert s.record["stream_gbit_per_s"] == [0.0768, 0.082] and s.record["jitter_ms"] == 0.001
    # the client prints each stream's server report (82.0 and 76.8 Mbits/sec) and no sum of them: added;
    # its own [SUM] (209 Mbits/sec) is what it sent
    run = one("iperf-2.1.8-udp-P2-client.txt")
    (c,) = run.steps[0].samples
    assert c.value == pytest.approx(0.082 + 0.0768) and c.record["sender_gbit_per_s"] == 0.209
    assert (c.record["lost_packets"], c.record["packets"]) == (3979 + 4825, 17836 + 17806)
    assert any("sum of the streams' server reports" in n for n in run.notes)
    # -y C: 2.1.8 writes no row of id -1; the server's rows added, the client's own rows added (sender)
    (got,) = one("iperf-2.1.8-csv-udp-P2-server.csv").steps[0].samples
    assert (got.value, got.record["packets"]) == (pytest.approx(0.104876781 + 0.104876197), 35672)
    (sent,) = one("iperf-2.1.8-csv-udp-P2-client.csv").steps[0].samples
    assert (sent.condition, sent.value) == ("sender", pytest.approx(0.104872428 + 0.104870803))


def test_iperf2_enhanced_output_gives_date_write_size_and_intervals():
    run = one("iperf-2.1.8-enhanced-interval-client.txt")
    (s,) = run.steps[0].samples
    assert run.started.isoformat() == "2026-12-07T17:48:10+00:00"
    assert run.steps[0].params["message-size"] == "128k"
    assert (s.value, s.record["interval_gbit_per_s"]) == (0.748, [0.824, 0.747])
    (s,) = one("iperf-2.0.6-interval-client.txt").steps[0].samples
    assert (s.value, s.record["interval_gbit_per_s"]) == (13.3, [13.0, 13.6])


def test_iperf2_csv_rows_are_exact_and_say_which_end_only_in_2_0():
    (c,) = one("iperf-2.0.6-csv-P2-client.csv").steps[0].samples
    (s,) = one("iperf-2.0.6-csv-P2-server.csv").steps[0].samples
    # the row of id -1 is the sum: 3846307840 bytes, 15314486091 bits/s on the client, 15148326679 on the server
    assert (c.phase, c.condition, c.bytes, c.value) == ("send", "sender", 3846307840, 15.314486091)
    assert (s.condition, s.value) == ("receiver", 15.148326679)
    udp = one("iperf-2.0.6-csv-udp-client.csv").steps[0].samples[0]
    assert (udp.value, udp.record["sender_gbit_per_s"], udp.record["packets"]) == (0.100517896, 0.100509152, 17094)
    # 2.1.8's rows are alike on both ends (and -R's too): which end counted is not known
    run = one("iperf-2.1.8-csv-P2-client.csv")
    (s,) = run.steps[0].samples
    assert (run.steps[0].kernel, s.phase, s.condition) == ("iperf", "tcp", "unknown")
    assert s.value == pytest.approx(4.859840721 + 5.389327299) and run.started is None
    assert one("iperf-2.1.8-csv-reverse-client.csv").steps[0].samples[0].condition == "unknown"
    (sent,) = one("iperf-2.1.8-csv-udp-client.csv").steps[0].samples
    (got,) = one("iperf-2.1.8-csv-udp-server.csv").steps[0].samples
    assert (sent.condition, got.condition, got.record["packets"]) == ("sender", "n/a", 17837)


def test_iperf2_runs_appended_to_one_log_are_a_run_each():
    text = (FIXTURES / "iperf-2.1.8-tcp-client.txt").read_text() + (FIXTURES / "iperf-2.1.8-P2-client.txt").read_text()
    assert importers.detect(text) == "iperf2"
    first, second = importers.get("iperf2").parse(text)
    assert [r.steps[0].samples[0].value for r in (first, second)] == [15.5, 1.47]
    assert second.steps[0].samples[0].record["streams"] == 2


def test_iperf2_server_left_running_gives_a_run_per_test_it_served():
    first, second = parse_file(str(FIXTURES / "iperf-2.1.8-server-two-tests.txt"))
    assert [(r.steps[0].params["streams"], r.steps[0].samples[0].value) for r in (first, second)] == [
        ("1", 11.8), ("2", 26.1)]


def test_iperf2_streams_cut_before_their_end_reports_are_refused():
    text = (FIXTURES / "iperf-2.0.6-P2-client.txt").read_text()
    cut = text[:text.index("[  4]  0.0- 2.0")]   # stream 3's report, then killed
    with pytest.raises(Unreadable, match="no end-of-test line"):
        importers.get("iperf2").parse(cut)


def test_iperf2_import_through_the_command_line_stores_one_run(cli, store_url, tmp_path):
    r = cli("import", "--label", "old-iperf", str(FIXTURES / "iperf-2.1.8-dualtest-P2-client.txt"))
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select count(*) from samples") == [(2,)]
    damaged = tmp_path / "killed.txt"
    text = (FIXTURES / "iperf-2.0.6-P2-client.txt").read_text()
    damaged.write_text(text[:text.index("[  4]  0.0- 2.0")])
    r = cli("import", str(damaged))
    assert r.status == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]
