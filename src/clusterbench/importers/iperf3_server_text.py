"""What `iperf3 -s` prints (to its terminal, or to --logfile: the same
lines), 3.x: the server's side of each test a client ran against it. A
server left running serves test after test ("Server listening on 5201
(test #2)"), so a run per "Accepted connection from" line.

Its end-of-test lines (after the "- - -" rule, marked receiver or sender)
are the server's: for a plain test it is the receiver, and its [SUM] line
(or one stream's) is the test's receiver rate, as the client's file gives
it; each stream's receiver rate is kept in the record. For -R the server
sent and prints only its sender line: the sender's rate (rate_basis
sender), as iperf3_text and the JSON do for the sending side's own file.
--bidir's [RX-S] lines are the client's send half, [TX-S] its receive half.
A UDP test is the server's receiver line, jitter and loss (iperf3_text).
The test's parameters are the client's, so the step is the client's test
(tcp kernel's names, role `server`), the client's address as
`import.client`, and a note says the client's file repeats it.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, iperf3_text, measurement
from clusterbench.importers.iperf3_text import (STARTING, UNAME, VERSION, end_line, gbit_per_s, summary_line,
                                                transfer_bytes)
from clusterbench.results.sizes import size_arg

ACCEPTED = re.compile(r"^Accepted connection from (\S+), port (\d+)\s*$", re.M)
LISTENING = re.compile(r"^Server listening on \d+(?: \(test #\d+\))?\s*$", re.M)
# "[  5] local 198.18.0.2 port 5201 connected to 198.18.0.1 port 59408": one per data stream
CONNECTED = re.compile(r"^\[\s*\d+\] local \S+ port \d+ connected to \S+ port \d+\s*$", re.M)
# "iperf3: the client has unexpectedly closed the connection": why a test has no results
IPERF3_ERROR = re.compile(r"^iperf3: (.+)$", re.M)
MARK = ACCEPTED


def detect(text: str) -> bool:
    """iperf3 -s's "Server listening on 5201" line: with no "Accepted connection from" after it (no
    client came) the file is refused as a server that ran no test, not as no known format."""
    return bool(LISTENING.search(text[:8192]))


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    accepted = list(ACCEPTED.finditer(text))
    if not accepted:
        raise Unreadable("no \"Accepted connection from\" line: the server ran no test")
    version, uname = VERSION.search(text), UNAME.search(text)   # -V prints them once, as the server starts
    runs, unfinished = [], []
    listening = [m.start() for m in LISTENING.finditer(text)]
    for i, acc in enumerate(accepted):
        # a test's lines: from its "Server listening" line (-V's "Time:" follows it) to the next one
        begin = max([at for at in listening if at < acc.start()] + [accepted[i - 1].end() if i else 0])
        stop = min([at for at in listening if at > acc.start()]
                   + [accepted[i + 1].start() if i + 1 < len(accepted) else len(text)])
        run = _run(text[begin:stop], text.count("\n", 0, begin) + 1, acc.group(1))
        if run is None:   # the client stopped, or the file was cut, before the test's results
            said = IPERF3_ERROR.search(text, acc.end(), stop)
            unfinished.append(f"line {text.count(chr(10), 0, acc.start()) + 1} ({acc.group(1)}"
                              + (f": '{said.group(1).strip()}'" if said else "") + ")")
            continue
        run.version = version.group(1) if version else None
        if uname:
            run.hosts = [uname.group(2)]
            run.facts["import.system_info"] = uname.group(0).strip()
        runs.append(run)
    if not runs:
        raise Unreadable("no end-of-test line (\"... sec ... bits/sec ... receiver\" or \"sender\") after any "
                         "\"Accepted connection from\": every test the server accepted ended before its results "
                         "(client stopped?)")
    if unfinished:
        runs[-1].notes.append(f"{len(unfinished)} of the {len(accepted)} tests the server accepted ended before "
                              f"their results (client stopped, or the file cut?), not taken: accepted at "
                              f"{', '.join(unfinished)}")
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _run(block: str, first_line: int, client: str) -> ImportedRun | None:
    run = ImportedRun("iperf3", None, "server text", None,
                      no_version="iperf3's server text states its version only with -V (its \"iperf 3.x\" line)")
    run.facts["import.client"] = client
    # a damaged Time: line ("Mof, 07 Dec 2026") was a ValueError: "cannot read this file" for the whole log
    iperf3_text.time_line_date(block, run)
    ends = []
    for n, line in enumerate(block.split("\n")):
        m = summary_line(line, first_line + n)
        if m and m.group("side"):   # the end-of-test lines; interval lines name no side
            ends.append((first_line + n, m))
    if not ends:
        return None
    starting = STARTING.search(block)
    bidir = any(m.group("role") for _, m in ends)
    streams = int(starting.group(2)) if starting else max(1, len(CONNECTED.findall(block)) // (2 if bidir else 1))
    sender_only = not any(m.group("side") == "receiver" for _, m in ends)
    params = {"role": "loopback" if client.startswith("127.") or client in ("::1", "localhost") else "server",
              "streams": str(streams)}
    end = float(ends[-1][1].group("end"))
    params["duration"] = starting.group(4) if starting else str(round(end)) if abs(end - round(end)) < 0.1 \
        else f"{end:g}"
    if starting:
        params["message-size"] = size_arg(int(starting.group(3)))
    params["direction"] = "bidir" if bidir else "reverse" if sender_only else "send"
    run.notes.append(f"the server's side of the test (iperf3 -s, client {client}): the same test as the client's "
                     "file, whose figures it repeats; import one of the two")
    run.notes.append("text output: rates and transfers as iperf3 rounded them (3 figures); -J has them exact")
    if re.search(r"Jitter\s+Lost/Total", block):
        step = ImportedStep("iperf3 UDP", "iperf3", {**params, "protocol": "udp"})
        s = iperf3_text.udp_sample(ends, int(starting.group(3)) if starting else None, run)
        step.samples += [s] if s else []
    else:
        step = ImportedStep("iperf3 TCP", "tcp", params)
        # the server receives in the client's send half, sends in its receive half
        halves = [("send", "RX-S"), ("receive", "TX-S")] if bidir else \
            [("receive" if sender_only else "send", None)]
        for phase, role in halves:
            s = _tcp(phase, [e for e in ends if e[1].group("role") == role], streams, run)
            if s:
                step.samples.append(s)
    if not step.samples:
        return None
    run.steps.append(step)
    return run


def _tcp(phase: str, ends, streams: int, run: ImportedRun):
    received, sent = end_line(ends, "receiver", streams, True), end_line(ends, "sender", streams, True)
    per_stream = [gbit_per_s(m) for _, m in ends if m.group("id") != "SUM" and m.group("side") == "receiver"]
    line, m = received or sent or (None, None)
    if m is None:
        return None
    basis = "receiver" if received else "sender"
    if not received:
        run.notes.append(f"{phase}: the server sent (-R, or --bidir's receive half) and prints only its sender "
                         "line: the sender's rate is stored (rate_basis sender)")
        per_stream = [gbit_per_s(s) for _, s in ends if s.group("id") != "SUM" and s.group("side") == "sender"]
    retr = sent[1].group("rest").split() if sent else []
    return measurement(phase, "n/a", gbit_per_s(m), "Gbit/s", qualifiers={"rate_basis": basis}, line=line,
                       bytes=transfer_bytes(m), seconds=float(m.group("end")) - float(m.group("start")),
                       retransmits=int(retr[0]) if retr and retr[0].isdigit() else None,
                       streams=streams if streams > 1 else None,
                       stream_gbit_per_s=per_stream if len(per_stream) > 1 else None)
