"""iperf3's plain text output (without -J), 3.x: what old logs hold. The
end-of-test lines after the "- - -" rule give, per stream and for their
[SUM], the sender's and the receiver's transfer and rate; a TCP test
becomes the same tcp step and samples as the JSON output does (receiver's
rate in Gbit/s, phase send, or receive for -R and --bidir's reverse half),
a UDP test an iperf3 step with jitter and loss.

The text rounds rates to three figures and transfers to three ("2.56
GBytes", 1024-based; rates are 1000-based): a note says so. -V adds the
version, the uname line, the time and the test's streams, block size and
duration, which are taken when present. One file may hold several runs of
the client (one per "Connecting to host" line): one run each.
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, measurement, number_on_line
from clusterbench.results.sizes import size_arg

CONNECTING = re.compile(r"^Connecting to host (\S+), port (\d+)\s*$", re.M)
SUMMARY = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+(?P<start>[\d.]+)-\s*(?P<end>[\d.]+)\s+sec\s+"
    r"(?P<bytes>[\d.]+) (?P<bunit>[KMGT]?)Bytes\s+(?P<rate>[\d.]+) (?P<runit>[KMGT]?)(?P<rkind>bits|Bytes)/sec"
    r"(?P<rest>.*?)\s*(?P<side>sender|receiver)?\s*$")
UDP_REST = re.compile(r"^\s*(?P<jitter>[\d.]+) ms\s+(?P<lost>\d+)/\s*(?P<total>\d+) \((?P<pct>[\d.e+-]+)%\)")
RATE = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}       # to Gbit/s (iperf3's bits are 1000-based)
BYTES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}   # its Bytes are 1024-based
VERSION = re.compile(r"^iperf (3\.\d+(?:\.\d+)?)\b", re.M)
UNAME = re.compile(r"^(Linux|Darwin|FreeBSD|SunOS|CYGWIN\S*) (\S+) .*$", re.M)
# a client that ran no test prints only its error ("iperf3: error - unable to connect to server: Connection
# refused"), after -V's version and uname lines: the text twin of -J's lone "error"
ERROR = re.compile(r"^iperf3: error - (.+?)\s*$", re.M)


def summary_line(line: str, number: int) -> re.Match | None:
    """The interval or end-of-test line `line` (the file's line `number`), its figures checked: one of
    digits and dots that is none ("7.01.7 Gbits/sec") is refused naming the line, not a ValueError."""
    m = SUMMARY.match(line)
    if m:
        for name in ("start", "end", "bytes", "rate"):
            number_on_line(m.group(name), number)
    return m


def error_only(text: str) -> str | None:
    """iperf3's words where the file holds its error and nothing else it prints (-V's lines aside)."""
    lines = [line for line in text.splitlines() if line.strip()]
    said = ERROR.search(text)
    rest = [line for line in lines if not (ERROR.match(line) or VERSION.match(line) or UNAME.match(line))]
    return said.group(1) if said and not rest else None
STARTING = re.compile(r"^Starting Test: protocol: (\w+), (\d+) streams, (\d+) byte blocks, omitting \d+ seconds, "
                      r"(\d+) second test", re.M)
DONE = re.compile(r"^iperf Done\.\s*$", re.M)
TIME = re.compile(r"^Time: (\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d) GMT", re.M)


# --timestamps (3.9 on) puts the time before every line, "%c " by default: "Mon Dec  7 12:33:43 2026 "
STAMP = re.compile(r"^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}) ", re.M)


def _stamped(text: str) -> bool:
    return bool(re.search(STAMP.pattern + "Connecting to host ", text[:8192], re.M))


def detect(text: str) -> bool:
    head = STAMP.sub("", text[:8192]) if _stamped(text) else text[:8192]
    return bool(CONNECTING.search(head)) and bool(re.search(r"^\[ ID\](\[Role\])? Interval\s+Transfer\s+"
                                                             r"(Bitrate|Bandwidth)", head, re.M))


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    connected = None
    if _stamped(text):
        connected = [m.group(1) for m in re.finditer(STAMP.pattern + "Connecting to host ", text, re.M)]
        text = STAMP.sub("", text)
    runs = _runs(text, connected)
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _runs(text: str, connected: list[str] | None = None) -> list[ImportedRun]:
    """`connected`: each "Connecting to host" line's --timestamps time, where the lines had one."""
    starts = [c.start() for c in CONNECTING.finditer(text)]
    if not starts:
        raise Unreadable("no \"Connecting to host\" line")
    # a run's lines: from the end of the previous run ("iperf Done.", else its start) to its own end;
    # -V prints the version, uname and time above "Connecting", so they fall in the run they belong to
    ends = [m.end() for m in DONE.finditer(text)]
    runs = []
    previous_end = 0
    for i, start in enumerate(starts):
        begin = max([e for e in ends if e <= start] + [previous_end])
        stop = min([e for e in ends if e > start] + [starts[i + 1] if i + 1 < len(starts) else len(text)])
        previous_end = stop
        block = text[begin:stop]
        version = VERSION.search(block)
        run = _run(block, text.count("\n", 0, begin) + 1, CONNECTING.search(block).group(1),
                   version.group(1) if version else None)
        if run is not None and run.started is None and connected and i < len(connected):
            try:
                run.started = dt.datetime.strptime(" ".join(connected[i].split()), "%a %b %d %H:%M:%S %Y") \
                    .replace(tzinfo=dt.timezone.utc)
                run.notes.append("the date is --timestamps' (iperf3's local time), stored as UTC")
            except ValueError:
                pass
        if run is not None:
            runs.append(run)
    if not runs:
        raise Unreadable("no end-of-test line (\"... sec ... bits/sec ... receiver\", or Bytes/sec with -f K/M/G)")
    return runs


def _run(block: str, first_line: int, server: str, version: str | None) -> ImportedRun | None:
    run = ImportedRun("iperf3", version, "text", None,
                      no_version="iperf3's text states its version only with -V (its \"iperf 3.x\" line)")
    uname = UNAME.search(block)
    if uname:
        run.hosts = [uname.group(2)]
        run.facts["import.system_info"] = uname.group(0).strip()
    run.facts["import.server"] = server
    time_line_date(block, run)
    rule = block.find("- - - - -")
    lines = block.split("\n")
    ends: list[tuple[int, re.Match]] = []
    rule_line = block.count("\n", 0, rule) if rule >= 0 else len(lines)
    for n in range(rule_line, len(lines)):
        m = summary_line(lines[n], first_line + n)
        if m:
            ends.append((first_line + n, m))
    udp = bool(re.search(r"Jitter\s+Lost/Total", block))
    reverse = "Reverse mode," in block
    bidir = any(m.group("role") for _, m in ends)
    streams = len({m.group("id") for _, m in ends if m.group("id") != "SUM"}) or 1
    if bidir:
        streams = max(1, streams // 2)
    starting = STARTING.search(block)
    params = {"role": "loopback" if server.startswith("127.") or server in ("::1", "localhost") else "client",
              "streams": str(int(starting.group(2)) if starting else streams)}
    duration = _duration(ends)
    if starting:
        params["duration"] = starting.group(4)
        params["message-size"] = size_arg(int(starting.group(3)))
    elif duration:
        params["duration"] = duration
    params["direction"] = "bidir" if bidir else "reverse" if reverse else "send"
    if udp:
        step = ImportedStep("iperf3 UDP", "iperf3", {**params, "protocol": "udp"})
        s = udp_sample(ends, int(starting.group(3)) if starting else None, run)
        if s:
            step.samples.append(s)
    else:
        step = ImportedStep("iperf3 TCP", "tcp", params)
        halves = [("receive" if reverse else "send", ("TX-C", None))] if not bidir else \
            [("send", ("TX-C",)), ("receive", ("RX-C",))]
        for phase, roles in halves:
            s = _tcp(phase, [e for e in ends if e[1].group("role") in roles], streams)
            if s:
                step.samples.append(s)
    if not step.samples:
        return None
    run.steps.append(step)
    run.notes.append("text output: rates and transfers as iperf3 rounded them (3 figures); -J has them exact")
    return run


def _duration(ends) -> str | None:
    for _, m in ends:
        if m.group("side") == "sender":
            end = float(m.group("end"))
            return str(round(end)) if abs(end - round(end)) < 0.1 else f"{end:g}"
    return None


def end_line(ends, side: str, streams: int, sum_required: bool = False):
    """The [SUM] line of `side` for several streams, else the one stream's.
    `sum_required`: with several streams, only the [SUM] line (a file cut
    before it holds one stream's line, a fraction of the test's rate)."""
    lines = [(n, m) for n, m in ends if m.group("side") == side]
    if streams > 1:
        sums = [(n, m) for n, m in lines if m.group("id") == "SUM"]
        lines = sums if sum_required else sums or lines
    return lines[-1] if lines else None


def gbit_per_s(m) -> float:
    if m.group("rkind") == "Bytes":   # -f K/M/G/T: the rate in iperf3's 1024-based bytes per second
        return float(m.group("rate")) * BYTES[m.group("runit")] * 8 / 1e9
    return float(m.group("rate")) * RATE[m.group("runit")]


def transfer_bytes(m) -> int:
    return int(round(float(m.group("bytes")) * BYTES[m.group("bunit")]))


def _tcp(phase: str, ends, streams: int):
    received, sent = end_line(ends, "receiver", streams, True), end_line(ends, "sender", streams, True)
    if received is None:
        return None
    line, m = received
    retr = sent[1].group("rest").split() if sent else []
    return measurement(phase, "n/a", gbit_per_s(m), "Gbit/s", qualifiers={"rate_basis": "receiver"}, line=line,
                       bytes=transfer_bytes(m), seconds=float(m.group("end")) - float(m.group("start")),
                       sender_gbit_per_s=gbit_per_s(sent[1]) if sent else None,
                       retransmits=int(retr[0]) if retr and retr[0].isdigit() else None,
                       streams=streams if streams > 1 else None)


def udp_sample(ends, block_bytes: int | None, run: ImportedRun):
    """The receiver's line (3.5 on: "receiver" after it); 3.1 prints one end line per stream (and a
    [SUM]) whose transfer and rate are the sender's, the receiver's loss beside them."""
    from clusterbench.importers.iperf3 import udp_received

    picked = end_line(ends, "receiver", 2)
    sender_only = picked is None
    if sender_only:
        lines = [(n, m) for n, m in ends if UDP_REST.match(m.group("rest"))]
        picked = next(((n, m) for n, m in lines if m.group("id") == "SUM"), lines[0] if lines else None)
    if picked is None:
        return None
    line, m = picked
    loss = UDP_REST.match(m.group("rest"))
    seconds = float(m.group("end")) - float(m.group("start"))
    figures = {"jitter_ms": number_on_line(loss.group("jitter"), line) if loss else None,
               "lost_packets": int(loss.group("lost")) if loss else None,
               "packets": int(loss.group("total")) if loss else None,
               "lost_percent": number_on_line(loss.group("pct"), line) if loss else None}
    if not sender_only:
        return measurement("udp", "n/a", gbit_per_s(m), "Gbit/s", line=line, bytes=transfer_bytes(m), seconds=seconds, **figures)
    got = udp_received(figures["packets"], figures["lost_packets"], block_bytes, seconds)
    if got is None:
        run.notes.append("udp: the file gives only the sender's rate (no receiver line; the block size needs -V): "
                         "stored as the sender's (rate_basis sender)")
        return measurement("udp", "n/a", gbit_per_s(m), "Gbit/s", qualifiers={"rate_basis": "sender"}, line=line,
                           bytes=transfer_bytes(m), seconds=seconds, **figures)
    run.notes.append("udp: no receiver line (iperf3 3.1 and before): the receiver's rate is its datagrams "
                     "(packets less lost) times the block size; the sender's is kept as sender_gbit_per_s")
    return measurement("udp", "n/a", got[1], "Gbit/s", line=line, bytes=got[0], seconds=seconds,
                       sender_gbit_per_s=gbit_per_s(m), **figures)


def time_line_date(block: str, run: ImportedRun) -> None:
    """The run's date from -V's `Time:` line (client and server print the same), or a note where the line
    is not iperf3's format (a weekday that is no weekday: a damaged log)."""
    when = TIME.search(block)
    if not when:
        return
    try:
        run.started = dt.datetime.strptime(when.group(1), "%a, %d %b %Y %H:%M:%S").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        run.notes.append(f"the time '{when.group(1)}' is not iperf3's format: not taken")
