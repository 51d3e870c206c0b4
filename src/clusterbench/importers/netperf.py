"""netperf's output (2.4.x's classic tests, 2.6+'s "MIGRATED" omni tests,
the omni -o/-k output selectors), with the command from a shell
transcript where the log shows it: E5's network figures.

    MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 198.18.0.2 () port 0 AF_INET
    Recv   Send    Send
    Socket Socket  Message  Elapsed
    Size   Size    Size     Time     Throughput
    bytes  bytes   bytes    secs.    10^6bits/sec

    131072  16384  16384    10.00    9395.21

Which test a row is comes from the banner, else from the command's -t
(-P 0 prints the rows alone: without the command they are not read).
netperf's stream throughput counts what the receiver got (omni: the
remote's bytes for a send, its own for a receive; 2.4's TCP_STREAM the
remote's bytes_received), so TCP_STREAM and TCP_MAERTS are tcp steps,
phases `send` and `receive` in Gbit/s, rate_basis receiver, as the tcp
kernel and iperf3; TCP_RR is the tcp kernel's `rr` (one transaction in
flight, 1-byte request and response by default: its transactions/s, and
the mean round trip they imply, 1/rate, or -k/-o's MEAN_LATENCY where
printed). UDP_STREAM is a `netperf` step of the receiver's rate (the
second row) with the sender's beside it; UDP_RR and other tests are
`netperf` steps of what they print.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, cut_short, invocations, locale_numbers,
                                   measurement, printed_versions)
from clusterbench.importers.shell_transcript import command
from clusterbench.results.sizes import size_arg

BANNER = re.compile(r"^(?:MIGRATED )?(?P<test>[A-Z][A-Za-z0-9/| ]*?) TEST from \S+ \([^)]*\) port \d+ \S+ "
                    r"to (?P<host>\S+) \((?P<address>[^)]*)\) port \d+ \S+(?P<rest>.*)$", re.M)
COMMAND = command("netperf", r"(?P<args>(?:\s+[^\s<>|;&]+)*)")
MARK = re.compile(f"{BANNER.pattern}|{COMMAND.pattern}", re.M)
# `netperf -V`'s line (netsh.c): no test prints a version (omni's -k LOCAL_VERSION prints "Deprecated" in 2.7.1)
VERSION = re.compile(r"^Netperf version (\d+\.\d+\S*)\s*$", re.M)
NO_VERSION = "netperf prints its version only for netperf -V, whose line the file does not hold"
KEYVAL = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)=(?P<value>.*?)\s*$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# the banner's test (2.4's classic names, 2.6+'s omni names) -> -t's name
BANNER_TESTS = {"TCP STREAM": "TCP_STREAM", "TCP MAERTS": "TCP_MAERTS", "TCP REQUEST/RESPONSE": "TCP_RR",
                "UDP STREAM": "UDP_STREAM", "UDP UNIDIRECTIONAL SEND": "UDP_STREAM",
                "UDP REQUEST/RESPONSE": "UDP_RR", "OMNI Send": "TCP_STREAM", "OMNI Receive": "TCP_MAERTS",
                "OMNI Send|Recv": "TCP_RR", "TCP Connect/Request/Response": "TCP_CRR"}
# -o's column headings (nettest_omni.c's set_output_elt words) -> -k's keys
OMNI_HEADINGS = {"Throughput": "THROUGHPUT", "Throughput Units": "THROUGHPUT_UNITS",
                 "Elapsed Time (sec)": "ELAPSED_TIME", "Mean Latency Microseconds": "MEAN_LATENCY",
                 "Minimum Latency Microseconds": "MIN_LATENCY", "Maximum Latency Microseconds": "MAX_LATENCY",
                 "Stddev Latency Microseconds": "STDDEV_LATENCY", "50th Percentile Latency Microseconds": "P50_LATENCY",
                 "90th Percentile Latency Microseconds": "P90_LATENCY",
                 "99th Percentile Latency Microseconds": "P99_LATENCY", "Transaction Rate Tran/s": "TRANSACTION_RATE",
                 "Round Trip Latency usec/tran": "RT_LATENCY", "Request Size Bytes": "REQUEST_SIZE",
                 "Response Size Bytes": "RESPONSE_SIZE", "Local Send Size": "LOCAL_SEND_SIZE",
                 "Remote Recv Size": "REMOTE_RECV_SIZE", "Protocol": "PROTOCOL", "Direction": "DIRECTION",
                 "Local Transport Retransmissions": "LOCAL_TRANSPORT_RETRANS"}
# -o/-k's latencies (us) as the tcp kernel's rr record names them
LATENCY_FIELDS = {"MIN_LATENCY": "latency_us_min", "MAX_LATENCY": "latency_us_max", "P50_LATENCY": "latency_us_p50",
                  "P90_LATENCY": "latency_us_p90", "P99_LATENCY": "latency_us_p99",
                  "STDDEV_LATENCY": "latency_us_stddev"}
# throughput units (netlib.c's format_units: -f k/m/g are 10^3/6/9 bits, K/M/G 2^10/20/30 bytes): one Gbit/s
# in each; dividing keeps "6704.26 10^6bits/sec" 6.70426, not 6.7042600000000006
UNITS_PER_GBIT = {"10^3bits": 1e6, "10^6bits": 1e3, "10^9bits": 1.0, "KBytes": 1e9 / 8 / 2**10,
                  "MBytes": 1e9 / 8 / 2**20, "GBytes": 1e9 / 8 / 2**30}
FORMAT_UNITS = {"k": "10^3bits", "m": "10^6bits", "g": "10^9bits", "K": "KBytes", "M": "MBytes", "G": "GBytes"}
# the result rows, by test: whole numbers where netperf prints sizes and counts, decimals for times and rates
I, F = r"\s+(\d+)", r"\s+(\d+(?:\.\d+)?)"
STREAM_ROW = re.compile(rf"^{I}{I}{I}{F}{F}(?:{F}{F}{F}{F})?\s*$")   # recv/send socket, message, s, rate[, -c -C]
RR_ROW = re.compile(rf"^{I}{I}{I}{I}{F}{F}")                        # send/recv socket, request, response, s, rate
UDP_SENT_ROW = re.compile(rf"^{I}{I}{F}{I}{I}{F}\s*$")              # socket, message, s, sent, errors, rate
UDP_RECEIVED_ROW = re.compile(rf"^{I}{F}{I}{F}\s*$")                # socket, s, received, rate
UNIT = re.compile(r"\b(10\^[369]bits|[KMG]Bytes)/s(?:ec)?\b")


def locale_lines(text: str) -> list[int]:
    """The lines holding figures in another locale (import_runs' note): not
    a command's options, whose "-r 64,1024" is a request and response size."""
    lines = text.split("\n")
    return [n for n in locale_numbers.lines_of(text) if not COMMAND.match(lines[n - 1])]


def detect(text: str) -> bool:
    head = text[:65536]
    return bool("TEST from" in head and BANNER.search(head)) or any(
        COMMAND.match(line) and _command(COMMAND.match(line).group("args")).test for line in head.split("\n")
        if "netperf" in line)


@dataclass
class _Command:
    test: str | None = None
    host: str | None = None
    length: str | None = None
    units: str | None = None       # -f's letter
    options: dict[str, str] = field(default_factory=dict)   # the test's options after "--" (-m, -r, -o, -k, -b)
    text: str = ""


def _command(args: str) -> _Command:
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    cmd, target, i = _Command(text="netperf" + args), "global", 0
    while i < len(words):
        w = words[i]
        if w == "--":
            target = "test"
        elif w.startswith("-") and len(w) >= 2:
            flag, value = w[:2], w[2:]
            takes = flag in ("-H", "-t", "-l", "-f", "-m", "-M", "-r", "-s", "-S", "-b", "-P", "-p", "-o", "-k", "-O")
            if takes and not value and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value, i = words[i + 1], i + 1
            if target == "test":
                cmd.options[flag] = value
            elif flag == "-H":
                cmd.host = value
            elif flag == "-t":
                cmd.test = value.upper()
            elif flag == "-l":
                cmd.length = value
            elif flag == "-f":
                cmd.units = value
        i += 1
    if cmd.test is None and cmd.host is not None:
        cmd.test = "TCP_STREAM"    # netperf's default test
    return cmd


@dataclass
class _Block:
    """One netperf run in the log: its command (where shown), banner and lines."""
    line: int
    command: _Command | None = None
    banner: re.Match | None = None
    lines: list[tuple[int, str]] = field(default_factory=list)


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    blocks: list[_Block] = []
    for n, line in enumerate(text.split("\n"), 1):
        c = COMMAND.match(line) if "netperf" in line else None
        if c and re.search(r"(?:^|\s)-V(?:\s|$)", c.group("args")):   # netperf -V: its version line, no test
            continue
        b = BANNER.match(line) if "TEST from" in line else None
        if c:
            blocks.append(_Block(n, _command(c.group("args"))))
        elif b and blocks and blocks[-1].banner is None and blocks[-1].command is not None \
                and not any(NUMBER.fullmatch(x.split()[0]) for _, x in blocks[-1].lines if x.split()):
            blocks[-1].banner = b
        elif b:
            blocks.append(_Block(n, None, b))
        elif blocks:
            blocks[-1].lines.append((n, line))
    versions = printed_versions.lines_of(text, VERSION)
    runs = invocations.each_taken(blocks, lambda block: _run(block, versions),
                                  lambda block: f"the netperf test at line {block.line}",
                                  "no netperf banner (\"... TEST from ... to ...\") or command")
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _run(block: _Block, versions: list[tuple[int, str]]) -> ImportedRun:
    cmd = block.command or _Command()
    banner_test = block.banner.group("test") if block.banner else None
    test = cmd.test or BANNER_TESTS.get(banner_test or "", banner_test)
    if test is None:
        raise Unreadable("the test is not known (no banner, no -t)")
    run = ImportedRun("netperf", printed_versions.before(versions, block.line), "text", cmd.text or None,
                      no_version=NO_VERSION)
    host = cmd.host or (block.banner.group("host") if block.banner else None)
    if host:
        run.facts["import.server"] = host
    warning = [line.strip("! ").strip() for _, line in block.lines if line.startswith("!!!")]
    if warning:
        run.notes.append("netperf: " + " ".join(w for w in warning if w))
    said = [line.strip() for _, line in block.lines if re.match(r"^(?:netperf|establish[ _]control|recv_response)\b", line)]
    fields, field_lines = _selected(block, cmd)
    rows = [(n, " " + line) for n, line in block.lines]
    units = _units(block, cmd)
    role = "loopback" if host and (host.startswith("127.") or host in ("localhost", "::1")) else "client"
    common = {"role": role}
    if fields:
        step = _omni(test, fields, field_lines, common, cmd, run)
    elif test in ("TCP_STREAM", "TCP_MAERTS", "TCP_SENDFILE"):
        step = _stream(test, rows, units, common, cmd)
    elif test in ("TCP_RR", "UDP_RR"):
        step = _rr(test, rows, common, cmd, run)
    elif test == "UDP_STREAM":
        step = _udp(rows, units, common, cmd)
    else:
        raise Unreadable(f"{test}: a netperf test that is not read (TCP_STREAM, TCP_MAERTS, TCP_RR, UDP_STREAM, "
                         "UDP_RR, or any with -o/-k)")
    if step is None:
        why = f": netperf said \"{said[0]}\"" if said else " (killed, or cut short?)"
        raise Unreadable(f"{test}: no result row{why}")
    run.steps.append(step)
    return run


def _selected(block: _Block, cmd: _Command) -> tuple[dict[str, str], dict[str, int]]:
    """The omni output selectors' fields: -k's KEY=value lines, or -o's
    heading line and its values (without the heading, -P 0, the keys are
    -o's list on the command line)."""
    fields, where = {}, {}
    for n, line in block.lines:
        kv = KEYVAL.match(line)
        if kv:
            fields[kv.group("key")], where[kv.group("key")] = kv.group("value"), n
    if fields:
        return fields, where
    csv_lines = [(n, line.split(",")) for n, line in block.lines if "," in line and not line.startswith("!!!")]
    listed = cmd.options.get("-o")
    keys = [k.strip().upper() for k in listed.split(",")] if listed and "," in listed else None
    for i, (n, parts) in enumerate(csv_lines):
        if parts and NUMBER.fullmatch(parts[0].strip()) is None and i + 1 < len(csv_lines) \
                and len(csv_lines[i + 1][1]) == len(parts):
            keys = [OMNI_HEADINGS.get(p.strip(), p.strip()) for p in parts]
            n, values = csv_lines[i + 1]
            return dict(zip(keys, (v.strip() for v in values))), {k: n for k in keys}
        if keys and len(parts) == len(keys):
            return dict(zip(keys, (v.strip() for v in parts))), {k: n for k in keys}
    return {}, {}


def _units(block: _Block, cmd: _Command) -> str:
    for _, line in block.lines:
        m = UNIT.search(line)
        if m:
            return m.group(1)
    return FORMAT_UNITS.get(cmd.units or "m", "10^6bits")


def _duration(cmd: _Command, elapsed: float | None) -> dict[str, str]:
    """The step's duration: -l's seconds, else the elapsed time netperf printed (none where it printed none)."""
    if cmd.length and cmd.length.isdigit() and int(cmd.length) > 0:
        return {"duration": cmd.length}
    if not elapsed:
        return {}
    return {"duration": str(round(elapsed)) if abs(elapsed - round(elapsed)) < 0.1 else f"{elapsed:g}"}


def _row(rows, pattern: re.Pattern) -> tuple[int, tuple[str, ...]] | None:
    """The first row of the pattern: its line and fields."""
    return next(((n, m.groups()) for n, m in ((n, pattern.match(line)) for n, line in rows) if m), None)


def _stream(test: str, rows, units: str, common: dict, cmd: _Command):
    row = _row(rows, STREAM_ROW)
    if row is None:
        return None
    n, r = row
    elapsed, rate = float(r[3]), float(r[4]) / UNITS_PER_GBIT[units]
    phase = "receive" if test == "TCP_MAERTS" else "send"
    params = {**common, "streams": "1", **_duration(cmd, elapsed), "message-size": size_arg(int(r[2])),
              "direction": "reverse" if phase == "receive" else "send"}
    cpu = {}
    if r[5] is not None:   # -c -C: utilization (%) and service demand (us/KB), local and remote
        cpu = {"cpu_local_percent": float(r[5]), "cpu_remote_percent": float(r[6]),
               "service_demand_local_us_per_kb": float(r[7]), "service_demand_remote_us_per_kb": float(r[8])}
    s = measurement(phase, "n/a", rate, "Gbit/s", qualifiers={"rate_basis": "receiver"}, line=n, seconds=elapsed,
                    recv_socket_bytes=int(r[0]), send_socket_bytes=int(r[1]), message_bytes=int(r[2]), **cpu)
    return ImportedStep(f"netperf {test}", "tcp", params, samples=[s])


def _rr(test: str, rows, common: dict, cmd: _Command, run: ImportedRun, latency_us: float | None = None):
    row = _row(rows, RR_ROW)
    if row is None:
        return None
    n, r = row
    elapsed, rate = float(r[4]), float(r[5])
    request, response = int(r[2]), int(r[3])
    return _rr_step(test, rate, elapsed, request, response, n, common, cmd, run, latency_us)


def _rr_step(test, rate, elapsed, request, response, line, common, cmd, run, latency_us, **extra):
    burst = cmd.options.get("-b")
    in_flight = 1 + (int(burst) if burst and burst.isdigit() else 0)
    if latency_us is None and rate > 0:
        latency_us = in_flight * 1e6 / rate
        run.notes.append(f"{test}: netperf printed no latency: the mean round trip is what the rate implies with "
                         f"{in_flight} transaction(s) in flight, {in_flight} / rate = {latency_us:.4g} us")
    params = {**common, "test": "rr", "streams": "1", **_duration(cmd, elapsed),
              "request-size": size_arg(request), "response-size": size_arg(response)}
    s = measurement("rr", "n/a", rate, "transactions/s", qualifiers={"rate_basis": "round-trip"}, line=line,
                    seconds=elapsed, request_bytes=request, response_bytes=response, latency_us_mean=latency_us,
                    **extra)
    if test == "UDP_RR" or in_flight > 1:
        return ImportedStep(f"netperf {test}", "netperf",
                            {**params, "protocol": "udp" if test == "UDP_RR" else "tcp", "burst": str(in_flight - 1)},
                            samples=[s])
    return ImportedStep(f"netperf {test}", "tcp", params, samples=[s])


def _udp(rows, units: str, common: dict, cmd: _Command):
    """UDP_STREAM's two rows: the sender's (socket, message size, elapsed,
    messages sent, errors, rate) and the receiver's (socket, elapsed,
    messages received, rate); the receiver's is the sample."""
    sent, got = _row(rows, UDP_SENT_ROW), _row(rows, UDP_RECEIVED_ROW)
    if sent is None or got is None:
        return None
    (_, s), (n, g) = sent, got
    okay, received = int(s[3]), int(g[2])
    sample = measurement("udp", "n/a", float(g[3]) / UNITS_PER_GBIT[units], "Gbit/s", line=n, seconds=float(g[1]),
                         sender_gbit_per_s=float(s[5]) / UNITS_PER_GBIT[units], packets=okay,
                         lost_packets=max(okay - received, 0), send_errors=int(s[4]), message_bytes=int(s[1]))
    params = {**common, "protocol": "udp", **_duration(cmd, float(s[2])), "message-size": size_arg(int(s[1]))}
    return ImportedStep("netperf UDP_STREAM", "netperf", params, samples=[sample])


def _float(fields: dict[str, str], key: str) -> float | None:
    v = fields.get(key)
    return float(v) if v is not None and NUMBER.fullmatch(v) else None


def _omni(test: str, fields: dict[str, str], where: dict[str, int], common: dict, cmd: _Command, run: ImportedRun):
    """A test run with -o or -k: what the selectors printed. THROUGHPUT in
    THROUGHPUT_UNITS (Trans/s for a request/response test); DIRECTION and
    PROTOCOL, where selected, say which test it was, else -t or the banner."""
    direction, protocol = fields.get("DIRECTION"), fields.get("PROTOCOL", "TCP" if test.startswith("TCP") else "UDP")
    if direction:
        test = {"Send": f"{protocol}_STREAM", "Receive": f"{protocol}_MAERTS", "Send|Recv": f"{protocol}_RR"}.get(
            direction, test)
    rate, units = _float(fields, "THROUGHPUT"), fields.get("THROUGHPUT_UNITS", "")
    elapsed = _float(fields, "ELAPSED_TIME")
    if test.endswith("_RR"):
        rate = _float(fields, "TRANSACTION_RATE") or rate
        if rate is None:
            return None
        line = where.get("TRANSACTION_RATE", where.get("THROUGHPUT"))
        extra = {name: _float(fields, key) for key, name in LATENCY_FIELDS.items() if _float(fields, key) is not None}
        return _rr_step(test, rate, elapsed, int(_float(fields, "REQUEST_SIZE") or 1),
                        int(_float(fields, "RESPONSE_SIZE") or 1), line, common, cmd, run,
                        _float(fields, "MEAN_LATENCY"), **extra)
    unit = units.removesuffix("/s")
    if rate is None or unit not in UNITS_PER_GBIT:
        return None
    size = _float(fields, "LOCAL_SEND_SIZE")
    phase = "receive" if test.endswith("MAERTS") else "send" if protocol == "TCP" else "udp"
    params = {**common, "streams": "1", "direction": "reverse" if phase == "receive" else "send"}
    qualifiers = {"rate_basis": "receiver"} if protocol == "TCP" else None
    params.update(_duration(cmd, elapsed))
    if size:
        params["message-size"] = size_arg(int(size))
    s = measurement(phase, "n/a", rate / UNITS_PER_GBIT[unit], "Gbit/s", qualifiers=qualifiers,
                    line=where.get("THROUGHPUT"), seconds=elapsed)
    if protocol != "TCP":
        return ImportedStep(f"netperf {test}", "netperf", {**params, "protocol": protocol.lower()}, samples=[s])
    return ImportedStep(f"netperf {test}", "tcp", params, samples=[s])
