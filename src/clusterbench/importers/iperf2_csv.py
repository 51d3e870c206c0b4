"""iperf 2's CSV report (-y C), 2.0.x and 2.1.x: a row per report,

    date,local address,local port,remote address,remote port,id,interval,bytes,bits/s[,jitter ms,lost,total,lost %,out of order]

with exact bytes and bits/s (the text rounds both to three figures) but
the interval to 0.1 s. The rows say nothing of which end ran -c: the end
whose port is in every row is the server's (iperf's 5001 against an
ephemeral port; where both ports are, the lower one), so a row whose
remote port it is was the client's (it wrote the bytes: the sender's
figure) and one whose local port it is the server's (the receiver's).
2.0's client of a UDP test adds the server's report as a row of the
server's view, loss and jitter in its tail; 2.1.8's client writes its own
row alone (total -1). Nor do the rows say -R, -r or -d: rows are taken as
data from the client to the server, and a file of one host's rows both
ways (-r, -d) is refused, its text output says which way each went.
The streams of -P are summed in 2.0's row of id -1; 2.1.8 writes none,
and the streams' rates are added. 2.1.8 dates its rows 19700101000000:
no date.
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, iperf2_udp, measurement

ROW = re.compile(r"^(?P<date>\d{14})(?:\.\d+)?,(?P<local>[^,\s]+),(?P<lport>\d+),(?P<remote>[^,\s]+),(?P<rport>\d+),"
                 r"(?P<id>-?\d+),(?P<start>\d+(?:\.\d+)?)-(?P<end>\d+(?:\.\d+)?),(?P<bytes>\d+),(?P<bps>\d+)(?P<tail>(?:,[^,\n]*)*)\s*$",
                 re.M)


def detect(text: str) -> bool:
    head = text[:4096]
    rows = ROW.findall(head)
    return bool(rows) and len(rows) >= sum(1 for line in head.splitlines() if line.strip()) / 2


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    rows = [(text.count("\n", 0, m.start()) + 1, m) for m in ROW.finditer(text)]
    if not rows:
        raise Unreadable("no iperf -y C row (date,address,port,address,port,id,interval,bytes,bits/s)")
    run = ImportedRun("iperf", None, "CSV", None, no_version="iperf 2's -y C rows name no version")
    if cut:
        run.notes.append(cut)
    streams = [(n, m) for n, m in rows if m.group("id") != "-1"]
    udp = any(UDP_TAIL.match(m.group("tail")) for _, m in streams)
    _date(run, rows[0][1])
    if rows[0][1].group("date").startswith("1970"):
        step = _rows_of_2_1(streams, udp, run)
    else:
        step = _rows_of_2_0(streams, [(n, m) for n, m in rows if m.group("id") == "-1"], udp, run)
    seconds = step.samples[0].record.get("seconds")
    if seconds:
        step.params["duration"] = f"{seconds:g}"
    run.steps.append(step)
    return [run]


def _rows_of_2_0(streams, sums, udp: bool, run: ImportedRun) -> ImportedStep:
    """2.0's rows are each end's view: local address and port first."""
    ports = Counter(p for _, m in streams for p in {m.group("lport"), m.group("rport")})
    every = sorted((p for p, k in ports.items() if k == len(streams)), key=int)
    if not every:
        raise Unreadable("the rows share no port: not one iperf test's (one file per test)")
    listener = every[0]
    client_rows = [(n, m) for n, m in streams if m.group("rport") == listener]
    server_rows = [(n, m) for n, m in streams if m.group("lport") == listener]
    hosts = {m.group("local") for _, m in client_rows}
    if hosts & {m.group("local") for _, m in server_rows}:
        raise Unreadable(f"rows of one host's connections both ways (-r or -d, line {server_rows[0][0]}): "
                         "the CSV does not say which end ran -c; import the text output")
    own = client_rows or server_rows
    role = "client" if client_rows else "server"
    server = own[0][1].group("remote" if client_rows else "local")
    peer = own[0][1].group("local" if client_rows else "remote")
    run.facts["import.server" if client_rows else "import.client"] = server if client_rows else peer
    loopback = any(h.startswith("127.") or h == "::1" for h in (server, peer))
    params = {"role": "loopback" if loopback else role, "direction": "send"}
    run.notes.append("-y C does not say -R, -r or -d: the rows are taken as data from the client to the server")
    if udp:
        return ImportedStep("iperf 2 UDP", "iperf", {**params, "protocol": "udp"}, samples=[_udp(streams, run)])
    finals = _finals(own)
    return ImportedStep("iperf 2 TCP", "tcp", {**params, "streams": str(len(finals))},
                        samples=[_tcp(finals, sums, "sender" if client_rows else "receiver", run)])


def _rows_of_2_1(streams, udp: bool, run: ImportedRun) -> ImportedStep:
    """2.1's rows are alike on both ends, the sending end's address first
    (seen with 2.1.8: the client's for a plain test, the server's for -R),
    so a TCP row says neither which end counted it nor which way the data
    went (-R): an `iperf` step, phase `tcp`, rate_basis unknown, that no
    tcp kernel figure is compared with."""
    if udp:
        received = any(_received(m) for _, m in streams)
        return ImportedStep("iperf 2 UDP", "iperf", {"role": "server" if received else "client", "protocol": "udp"},
                            samples=[_udp(streams, run)])
    run.notes.append("iperf 2.1's -y C rows are alike on the client and the server (the sender's address first): "
                     "which end counted the bytes, and which way they went, is not known (rate_basis unknown)")
    finals = _finals(streams)
    run.facts["import.sender"] = finals[0][1].group("local")
    return ImportedStep("iperf 2 TCP", "iperf", {"protocol": "tcp", "streams": str(len(finals))},
                        samples=[_tcp(finals, [], "unknown", run, phase="tcp")])


def _date(run: ImportedRun, m: re.Match) -> None:
    try:
        when = dt.datetime.strptime(m.group("date"), "%Y%m%d%H%M%S")
    except ValueError:
        when = None
    if when is None or when.year == 1970:
        run.notes.append(f"the rows' date {m.group('date')} is none (iperf 2.1.8 writes 19700101000000): "
                         "give --date")
        return
    run.started = when.replace(tzinfo=dt.timezone.utc)
    run.notes.append("the date is iperf's local time, stored as UTC")


def _finals(rows):
    """Each connection's last row that starts at 0 (-i's intervals come before it)."""
    last = {}
    for n, m in rows:
        if float(m.group("start")) == 0.0:
            last[(m.group("local"), m.group("lport"), m.group("remote"), m.group("rport"), m.group("id"))] = (n, m)
    if not last:
        raise Unreadable("no row from 0 s, the end of a test (only -i's intervals: cut short?)")
    return list(last.values())


def _seconds(m) -> float:
    return float(m.group("end")) - float(m.group("start"))


def _tcp(finals, sums, basis: str, run: ImportedRun, phase: str = "send"):
    if len(finals) == 1:
        (line, m), = finals
        return measurement(phase, "n/a", int(m.group("bps")) / 1e9, "Gbit/s", qualifiers={"rate_basis": basis},
                           line=line, bytes=int(m.group("bytes")), seconds=_seconds(m))
    rates = [int(m.group("bps")) / 1e9 for _, m in finals]
    whole = [(n, m) for n, m in sums if float(m.group("start")) == 0.0]
    if whole:
        line, m = whole[-1]
        value, data, seconds = int(m.group("bps")) / 1e9, int(m.group("bytes")), _seconds(m)
    else:
        run.notes.append(f"no row of id -1 (iperf 2.1 writes none for -P): the rate is the sum of its "
                         f"{len(finals)} streams'")
        line = max(n for n, _ in finals)
        value, data, seconds = sum(rates), sum(int(m.group("bytes")) for _, m in finals), \
            max(_seconds(m) for _, m in finals)
    return measurement(phase, "n/a", value, "Gbit/s", qualifiers={"rate_basis": basis}, line=line, bytes=data,
                       seconds=seconds, streams=len(finals), stream_gbit_per_s=rates)


# a UDP row's tail: jitter ms, lost, total, lost %, out of order
UDP_TAIL = re.compile(r"^,(?P<jitter>\d+(?:\.\d+)?),(?P<lost>-?\d+),(?P<total>-?\d+),(?P<pct>-?\d+(?:\.\d+)?),")


def _received(m) -> bool:
    """A row of the receiver's report: jitter, lost, total (2.1's client writes total -1 in its own)."""
    tail = UDP_TAIL.match(m.group("tail"))
    return bool(tail) and not tail.group("total").startswith("-")


def _udp(streams, run: ImportedRun):
    """The server's report rows of the test's streams (iperf2_udp: -P's added), else the client's own rows."""
    finals = _finals(streams)
    received = [(n, m) for n, m in finals if _received(m)]
    sent = [(n, m) for n, m in finals if not _received(m)]
    if not received:
        run.notes.append("udp: no row of the server's report (iperf 2.1's client writes none): the sender's "
                         "rate is stored (rate_basis sender)")
        return measurement("udp", "n/a", sum(int(m.group("bps")) for _, m in sent) / 1e9, "Gbit/s",
                           qualifiers={"rate_basis": "sender"}, line=max(n for n, _ in sent),
                           bytes=sum(int(m.group("bytes")) for _, m in sent), seconds=max(_seconds(m) for _, m in sent),
                           streams=len(sent) if len(sent) > 1 else None)
    return iperf2_udp.received([_report(n, m) for n, m in received], None,
                               sum(int(m.group("bps")) for _, m in sent) / 1e9 if sent else None, run)


def _report(line: int, m) -> iperf2_udp.Report:
    jitter, lost, total, pct = UDP_TAIL.match(m.group("tail")).group("jitter", "lost", "total", "pct")
    return iperf2_udp.Report(line, int(m.group("bps")) / 1e9, int(m.group("bytes")), _seconds(m), float(jitter),
                             int(lost), int(total), float(pct))
