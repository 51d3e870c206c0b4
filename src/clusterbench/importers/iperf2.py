"""iperf 2's text output (2.0.x and 2.1.x, client and server, -P, -u, -i,
-e, -r, -d, -R) and its CSV (-y C, iperf2_csv): E4's and E6's tool.

Unlike iperf3, each side prints only its own count: the client of a TCP
test the bytes it wrote (the sender's figure), the server the bytes it
read (the receiver's). So a TCP step is the tcp kernel's (phase `send`
for data from the host that ran -c to the server, `receive` the other
way), and each sample says which side counted it (`rate_basis` receiver,
as the tcp kernel and iperf3 store, or sender, which compare keeps apart).
UDP is an `iperf` step: the server's report (rate, jitter, loss; the
client prints it after "Server Report:") with the client's own rate
beside it.

Who sent on a connection is read from its line: "local A port P connected
with B port Q" is one this side accepted when P is a port it listens on,
else one it opened; an opened connection sends, an accepted one receives,
and "(reverse)" (2.1, -R) turns that round, but for the connection a
server opens back to its client for -r/-d, which sends (2.1.8 marks it
"(reverse)" too). iperf 2's [SUM] line adds every stream of the run, both
directions of -d included: a direction's sum is its streams' rates then.
Rates and transfers are as iperf printed them (three figures; 2.0 prints
seconds to one decimal), so the printed rate is the sample.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, cut_short, iperf2_csv, iperf2_udp,
                                   measurement, printed_versions)
from clusterbench.importers.iperf3_text import BYTES
from clusterbench.results.sizes import size_arg

CLIENT = re.compile(r"^Client connecting to (\S+), (TCP|UDP) port (\d+)", re.M)
SERVER = re.compile(r"^Server listening on (TCP|UDP) port (\d+)", re.M)
MARK = re.compile(f"{CLIENT.pattern}|{SERVER.pattern}", re.M)
CONNECTION = re.compile(r"^\[\s*\*?(?P<id>\d+)\] local (?P<local>[^\s%]+)(?:%\S+)? port (?P<lport>\d+) connected "
                        r"with (?P<peer>\S+) port (?P<pport>\d+)(?P<rest>.*)$")
REPORT = re.compile(r"^\[\s*\*?(?P<id>\d+|SUM(?:-\d+)?)\]\s+(?P<start>\d+(?:\.\d+)?)\s*-\s*(?P<end>\d+(?:\.\d+)?) sec\s+"
                    r"(?P<bytes>\d+(?:\.\d+)?) (?P<bunit>[KMGT]?)Bytes\s+(?P<rate>\d+(?:\.\d+)?) (?P<runit>[KMGT]?)"
                    r"(?P<rkind>bits|Bytes)/sec(?P<rest>.*)$")
# a server's UDP [SUM] line prints the loss of all its streams without a jitter
UDP_LOSS = re.compile(r"^\s*(?:(?P<jitter>\d+(?:\.\d+)?) ms\s+)?(?P<lost>-?\d+)/\s*(?P<total>\d+) \((?P<pct>-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)%\)")
SERVER_REPORT = re.compile(r"^\[\s*\*?\d+\] Server Report:")
DATAGRAMS = re.compile(r"^(?:Sending|Receiving) (\d+) byte datagrams", re.M)
WRITE_SIZE = re.compile(r"^Write buffer size:\s+(\d+) Byte", re.M)
# -e: "... connected with ... on 2026-12-07 17:47:07 (UTC)"
WHEN = re.compile(r" on (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \((UTC|[A-Z]{2,5})\)")
# bits per Gbit/s by prefix (iperf's bits are 1000-based); dividing keeps "141 Mbits/sec" 0.141, not 0.14100000000000001
BITS_PER_GBIT = {"": 1e9, "K": 1e6, "M": 1e3, "G": 1.0, "T": 1e-3}
# `iperf -v`'s line ("iperf version 2.1.8 (12 August 2022) pthreads"): a test's output prints none
VERSION = re.compile(r"^iperf version (2\.\d+(?:\.\d+)?\S*)", re.M)
NO_VERSION = "iperf 2 prints its version only for iperf -v, whose line the file does not hold"


def detect(text: str) -> bool:
    head = text[:8192]
    return bool(MARK.search(head)) and bool(re.search(r"^\[ ID\] Interval\s+Transfer\s+Bandwidth", head, re.M)) \
        or iperf2_csv.detect(text)


@dataclass
class _Link:
    """One data connection of a run: which way its data went, its report lines."""
    sends: bool                   # this side sent its data
    peer: str
    after_reports: bool           # it came after every earlier connection's end report (-r's second half)
    reports: list = field(default_factory=list)   # (line, match), in file order
    received: tuple | None = None  # UDP: the server's report the client printed (line, match)


def parse(text: str) -> list[ImportedRun]:
    if iperf2_csv.detect(text) and not MARK.search(text):
        return iperf2_csv.parse(text)
    text, cut = cut_short.whole_lines(text)
    versions = printed_versions.lines_of(text, VERSION)
    runs = [r for r in (_run(*block, versions) for block in _blocks(text)) if r is not None]
    if not runs:
        raise Unreadable("no end-of-test line (\"[  1] 0.0-10.0 sec  1.10 GBytes  941 Mbits/sec\")")
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _blocks(text: str) -> list[tuple[list[str], int, set[str]]]:
    """The file's runs (lines, first line number, the ports listened on
    before it): a client's invocations appended to one log, a server's
    successive tests. A run ends where a connection that would start
    another comes after every connection of the run printed its end
    report: one this side opened, for a client (its next invocation), one
    it accepted, for a server (its next client); -r's second half (the
    server opening back, the client accepting) is not one. The header
    lines just before that connection open the next run."""
    lines = text.split("\n")
    blocks, start, listening, listening_at_start = [], 0, set(), set()
    role, open_ids, reported, header_at = None, set(), set(), None
    for n, line in enumerate(lines):
        if MARK.match(line):
            header_at = header_at if header_at is not None else n - 1 if n and lines[n - 1].startswith("---") else n
            s = SERVER.match(line)
            if s:
                listening.add(s.group(2))
            continue
        c = CONNECTION.match(line)
        if c:
            opened = c.group("lport") not in listening
            if open_ids and not open_ids - reported and opened == (role == "client"):
                cut = header_at if header_at is not None else n
                blocks.append((lines[start:cut], start + 1, listening_at_start))
                start, listening_at_start, open_ids, reported = cut, set(listening), set(), set()
            if not open_ids:
                role = "client" if opened else "server"
            open_ids.add(c.group("id"))
            header_at = None
            continue
        r = REPORT.match(line)
        if r:
            reported.add(r.group("id"))
            header_at = None
    blocks.append((lines[start:], start + 1, listening_at_start))
    return blocks


def _links(lines: list[str], first: int, listening: set[str]) -> tuple[dict[str, _Link], list, str | None]:
    """The run's connections by id, its [SUM] lines, and its side ("client"
    when its first connection is one it opened, else "server")."""
    listening = set(listening)
    links: dict[str, _Link] = {}
    sums: list[tuple[int, re.Match]] = []
    role = None
    awaiting_server_report = False
    for i, line in enumerate(lines):
        s = SERVER.match(line)
        if s:
            listening.add(s.group(2))
        c = CONNECTION.match(line)
        if c:
            opened = c.group("lport") not in listening
            role = role or ("client" if opened else "server")
            reverse = "(reverse)" in c.group("rest")
            # a server's connection back to its client (-r, -d) sends, "(reverse)" or not
            sends = True if opened and role == "server" else opened != reverse
            done = all(link.reports for link in links.values())
            links[c.group("id")] = _Link(sends, c.group("peer"), bool(links) and done)
            continue
        if SERVER_REPORT.match(line):
            awaiting_server_report = True
            continue
        r = REPORT.match(line)
        if not r:
            continue
        if r.group("id").startswith("SUM"):
            sums.append((first + i, r))
        elif r.group("id") in links:
            if awaiting_server_report:
                links[r.group("id")].received = (first + i, r)
                awaiting_server_report = False
            else:
                links[r.group("id")].reports.append((first + i, r))
    return links, sums, role


def _run(lines: list[str], first: int, listening: set[str], versions: list[tuple[int, str]]) -> ImportedRun | None:
    text = "\n".join(lines)
    links, sums, role = _links(lines, first, listening)
    if not links or not any(link.reports or link.received for link in links.values()):
        return None
    client = CLIENT.search(text)
    udp = bool(re.search(r"^(?:Client connecting to \S+, |Server listening on )UDP port", text, re.M))
    run = ImportedRun("iperf", printed_versions.before(versions, first + len(lines) - 1), "text", None,
                      no_version=NO_VERSION)
    server = client.group(1) if role == "client" and client else None
    peers = {link.peer for link in links.values()}
    if server:
        run.facts["import.server"] = server
    else:
        run.facts["import.client"] = sorted(peers)[0]
        run.notes.append("the server's side of the test (iperf -s): its client's file holds the sender's figures "
                         "of the same test")
    when = WHEN.search(text)
    try:
        run.started = dt.datetime.strptime(when.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc) \
            if when else None
    except ValueError:
        run.notes.append(f"the date '{when.group(1)}' is not a date: not taken")
    if run.started and when.group(2) != "UTC":
        run.notes.append(f"the date is in {when.group(2)}, stored as UTC")
    loopback = any(h.startswith("127.") or h in ("::1", "localhost") for h in peers | {server or ""})
    common = {"role": "loopback" if loopback else role}
    # the flow from the host that ran -c to the server is the test's `send`
    flows = {"send": [], "receive": []}
    for link in links.values():
        flows["send" if link.sends == (role == "client") else "receive"].append(link)
    steps = _udp_steps(flows, sums, common, text, run) if udp else _tcp_steps(flows, sums, common, text, run)
    run.steps = [st for st in steps if st.samples]
    if not run.steps:
        return None
    run.notes.append("text output: rates and transfers as iperf rounded them (3 figures)")
    return run


def _tcp_steps(flows: dict[str, list[_Link]], sums, common: dict, text: str, run: ImportedRun) -> list[ImportedStep]:
    """A tcp step per direction the test ran in turn (-r), one for both at
    once (-d: `bidir`) or for the one direction; -P's streams in each."""
    all_one_flow = not flows["send"] or not flows["receive"]
    sequential = not all_one_flow and all(link.after_reports for link in flows["receive"] + flows["send"][1:])
    written = WRITE_SIZE.search(text)
    steps: list[ImportedStep] = []
    for phase, flow in flows.items():
        s = _tcp(phase, flow, sums, not all_one_flow, run) if flow else None
        if s is None:
            continue
        direction = "bidir" if not all_one_flow and not sequential else "send" if phase == "send" else "reverse"
        params = {**common, "streams": str(len(flow)), "direction": direction}
        seconds = s.record.get("seconds")
        if seconds:
            params["duration"] = str(round(seconds)) if abs(seconds - round(seconds)) < 0.15 else f"{seconds:g}"
        if written:
            params["message-size"] = size_arg(int(written.group(1)))
        if direction == "bidir" and steps:
            steps[0].samples.append(s)
        else:
            steps.append(ImportedStep(f"iperf 2 TCP {phase}" if sequential else "iperf 2 TCP", "tcp", params,
                                      samples=[s]))
    if sequential:
        run.notes.append("-r (tradeoff): the two directions one after the other, a step each")
    return steps


def _udp_steps(flows: dict[str, list[_Link]], sums, common: dict, text: str, run: ImportedRun) -> list[ImportedStep]:
    step = ImportedStep("iperf 2 UDP", "iperf", {**common, "protocol": "udp"})
    datagram = DATAGRAMS.search(text)
    if datagram:
        step.params["message-size"] = size_arg(int(datagram.group(1)))
    taken = [(phase, flow) for phase, flow in flows.items() if flow]
    if len(taken) > 1:
        run.notes.append("udp both ways (-d, -r): only the client's sending is taken")
    s = _udp(taken[0][1], sums, run) if taken else None
    if s:
        step.params["direction"] = "send" if taken[0][0] == "send" else "reverse"
        step.samples.append(s)
    return [step]


def gbit_per_s(m: re.Match) -> float:
    if m.group("rkind") == "Bytes":
        return float(m.group("rate")) * BYTES[m.group("runit")] * 8 / 1e9
    return float(m.group("rate")) / BITS_PER_GBIT[m.group("runit")]


def _final(link: _Link) -> tuple[int, re.Match] | None:
    """The end report: the last line of the link that starts at 0 (-i's intervals come before it)."""
    whole = [(n, m) for n, m in link.reports if float(m.group("start")) == 0.0]
    return whole[-1] if whole else None


def _seconds(m: re.Match) -> float:
    return float(m.group("end")) - float(m.group("start"))


def _tcp(phase: str, flow: list[_Link], sums, both_ways: bool, run: ImportedRun):
    """The direction's end report: its stream's, or -P's [SUM] (not -d's,
    which adds both ways: then its streams' rates added)."""
    finals = [(link, _final(link)) for link in flow]
    finals = [(link, f) for link, f in finals if f]
    if not finals:
        return None
    basis = "sender" if flow[0].sends else "receiver"
    intervals = [gbit_per_s(m) for n, m in flow[0].reports if (n, m) != finals[0][1]] if len(flow) == 1 else []
    if len(flow) == 1:
        (link, (line, m)), = finals
        return measurement(phase, "n/a", gbit_per_s(m), "Gbit/s", qualifiers={"rate_basis": basis}, line=line,
                           bytes=round(float(m.group("bytes")) * BYTES[m.group("bunit")]), seconds=_seconds(m),
                           interval_gbit_per_s=intervals or None)
    if len(finals) < len(flow):
        run.notes.append(f"{phase}: {len(flow) - len(finals)} of its {len(flow)} streams printed no end report "
                         "(cut short?): not taken")
        return None
    streams = [gbit_per_s(m) for _, (_, m) in finals]
    whole = [(n, m) for n, m in sums if float(m.group("start")) == 0.0]
    if whole and not both_ways:
        line, m = whole[-1]
        return measurement(phase, "n/a", gbit_per_s(m), "Gbit/s", qualifiers={"rate_basis": basis}, line=line,
                           bytes=round(float(m.group("bytes")) * BYTES[m.group("bunit")]), seconds=_seconds(m),
                           streams=len(flow), stream_gbit_per_s=streams)
    if whole:
        run.notes.append(f"{phase}: iperf's [SUM] adds both directions (-d): this direction's rate is the sum "
                         "of its streams'")
    else:
        run.notes.append(f"{phase}: no [SUM] line: the rate is the sum of its {len(flow)} streams'")
    line = max(n for _, (n, _) in finals)
    return measurement(phase, "n/a", sum(streams), "Gbit/s", qualifiers={"rate_basis": basis}, line=line,
                       bytes=sum(round(float(m.group("bytes")) * BYTES[m.group("bunit")]) for _, (_, m) in finals),
                       seconds=max(_seconds(m) for _, (_, m) in finals), streams=len(flow),
                       stream_gbit_per_s=streams)


def _udp(flow: list[_Link], sums, run: ImportedRun):
    """The receivers' reports of the test's streams (the server's own lines,
    or those the client printed after "Server Report:") and -P's [SUM]
    (iperf2_udp); without them the sender's rate."""
    picked = [link.received or (_final(link) if not link.sends else None) for link in flow]
    sent = [f for f in (_final(link) for link in flow if link.sends) if f]
    whole = [(n, m) for n, m in sums if float(m.group("start")) == 0.0]
    # a client's [SUM] adds what it sent, a server's what it received
    summed = whole[-1] if whole and len(flow) > 1 else None
    sender = [summed] if summed and flow[0].sends else sent
    if None in picked:
        if not sender:
            return None
        run.notes.append("udp: no server report in the file (the client got none): the sender's rate is stored "
                         "(rate_basis sender)")
        return measurement("udp", "n/a", sum(gbit_per_s(m) for _, m in sender), "Gbit/s",
                           qualifiers={"rate_basis": "sender"}, line=max(n for n, _ in sender),
                           bytes=sum(_bytes(m) for _, m in sender), seconds=max(_seconds(m) for _, m in sender))
    return iperf2_udp.received([_report(n, m) for n, m in picked],
                               _report(*summed) if summed and not flow[0].sends else None,
                               sum(gbit_per_s(m) for _, m in sender) if sender else None, run)


def _bytes(m: re.Match) -> int:
    return round(float(m.group("bytes")) * BYTES[m.group("bunit")])


def _report(line: int, m: re.Match) -> iperf2_udp.Report:
    loss = UDP_LOSS.match(m.group("rest"))
    return iperf2_udp.Report(line, gbit_per_s(m), _bytes(m), _seconds(m),
                             jitter_ms=float(loss.group("jitter")) if loss and loss.group("jitter") else None,
                             lost=int(loss.group("lost")) if loss else None,
                             total=int(loss.group("total")) if loss else None,
                             lost_percent=float(loss.group("pct")) if loss else None)
