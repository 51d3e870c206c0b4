"""iperf3 -J output (3.0-3.20), and its plain text (iperf3_text; the server's, iperf3_server_text): a TCP test becomes a tcp step (streams,
duration, message size, direction in the tcp kernel's names) whose samples
are the tcp kernel's: phase `send` (client to server) or `receive` (server
to client: -R, and the reverse half of --bidir), rate in Gbit/s as the
receiver counted it (rate_basis receiver), so `clusterbench run tcp` on the
same work compares key by key. The sender's figure, retransmits, per-stream
figures and the per-interval rates are kept in the record. Versions that
omit the sums for one stream (3.0-3.1) are read from that stream. A UDP
test is an `iperf3` step with the receiver's rate, jitter and loss: where
the file has only iperf3's `sum` (before 3.11), whose bytes and rate are
the sender's beside the receiver's loss, the receiver's are its datagrams
(packets less lost) times the block size (udp_received).
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, iperf3_server_text, iperf3_text,
                                   json_documents, measurement)
from clusterbench.importers.run_dates import from_epoch
from clusterbench.results.sizes import size_arg

GBIT = 1e9
# where each checked figure of a sample is in the document, for the plausibility gate's message
MEMBERS = {"value": "bits_per_second", "seconds": "seconds", "bytes": "bytes", "sender_gbit_per_s": "bits_per_second",
           "retransmits": "retransmits", "jitter_ms": "jitter_ms", "lost_packets": "lost_packets"}
MARK = iperf3_text.CONNECTING   # where an iperf3 client run starts (importers.other_tools_in)


def detect(text: str) -> bool:
    head = text[:4096]
    return (_is_json(head, text) or iperf3_text.detect(text) or iperf3_server_text.detect(text)
            or iperf3_text.error_only(head) is not None)


# iperf3 --json-stream's first event: "start", or "error" alone where the client ran no test (no server)
STREAM_OPENING = re.compile(r'^\{"event":\s*"(?:start|error)",\s*"data":', re.M)


def _error_alone(said: str) -> Unreadable:
    """A file of iperf3's error alone (the client ran no test: no server at the address, refused,
    timed out), -J's, --json-stream's or the text's: refused in iperf3's own words."""
    return Unreadable(f"the file holds no result, only iperf3's error: \"{said[:200]}\"")


def _is_json(head: str, text: str) -> bool:
    if STREAM_OPENING.search(head):
        return True
    # the document's first line "{", after any lines a job's log holds before it (Slurm's, MPI's warnings)
    brace = json_documents.OPENING.search(head)
    return brace is not None and '"start"' in head[brace.start():] \
        and bool(re.search(r'"(version|system_info|connecting_to|test_start)"\s*:', head)) and "iperf" in text[:8192]


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _dict(d, key) -> dict:
    v = d.get(key) if isinstance(d, dict) else None
    return v if isinstance(v, dict) else {}


def parse(text: str) -> list[ImportedRun]:
    if not _is_json(text[:4096], text):
        said = iperf3_text.error_only(text)
        if said is not None:   # the client ran no test: iperf3's own words, as for -J's lone error
            raise _error_alone(said)
        if not iperf3_text.detect(text) and iperf3_server_text.detect(text):
            return iperf3_server_text.parse(text)   # iperf3 -s's own lines
        return iperf3_text.parse(text)   # plain text (without -J)
    # `iperf3 -J >> log` run several times: one run per document
    docs, skipped = json_documents.documents(text)
    runs = [_run(doc) for doc in _whole_documents(docs)]
    if skipped:
        runs[0].notes.append("lines of other output around the JSON were skipped")
    return runs


def _whole_documents(docs: list[dict]) -> list[dict]:
    """iperf3 --json-stream (3.17 on) writes one object per line, {"event": "start" | "interval" |
    "end" | "error", "data": ...}, where -J writes one document: the events of each test, from its
    "start", put together as -J's document; --json-stream-full-output writes both, the events and
    then the document (of the same "start"), which is taken. Other documents are as they are."""
    whole: list[dict] = []
    for d in docs:
        event = d.get("event") if set(d) == {"event", "data"} else None
        if event is None and whole and "event_stream" in whole[-1] and d.get("start") == whole[-1]["start"]:
            # --json-stream-full-output (3.20 on): the test's events, then the same test as -J's document
            whole[-1] = d
        elif event is None:
            whole.append(d)
        elif event == "start" or not whole or "event_stream" not in whole[-1]:
            whole.append({"event_stream": True, "start": d["data"] if event == "start" else {}, "intervals": []})
        if event == "interval":
            whole[-1]["intervals"].append(d["data"])
        elif event in ("end", "error"):
            whole[-1][event] = d["data"]
    return whole


def _run(doc: dict) -> ImportedRun:
    if doc.get("error") and not _dict(doc, "end"):
        raise _error_alone(str(doc["error"]))
    start, end = _dict(doc, "start"), _dict(doc, "end")
    ts = _dict(start, "test_start")
    version = str(start.get("version", "")).removeprefix("iperf ").strip() or None
    run = ImportedRun("iperf3", version, "JSON", None)
    stamp, ms = _dict(start, "timestamp").get("timesecs"), _dict(start, "timestamp").get("timemillisecs")
    if _num(stamp):
        # 3.20 on: the start in ms, the same second to the millisecond
        exact = _num(ms) and 0 <= ms / 1e3 - stamp < 1
        run.started = from_epoch(ms / 1e3, '"timemillisecs"') if exact else from_epoch(stamp, '"timesecs"')
        if _num(ts.get("duration")):
            try:
                run.finished = run.started + dt.timedelta(seconds=float(ts["duration"]))
            except OverflowError:
                raise Unreadable(f'"duration" {float(ts["duration"]):.15g} s is past any test\'s length') from None
    info = start.get("system_info")
    if isinstance(info, str) and len(info.split()) >= 2:
        run.hosts = [info.split()[1]]
        run.facts["import.system_info"] = info
    server = _dict(start, "connecting_to").get("host")
    if server:
        run.facts["import.server"] = str(server)
    protocol = str(ts.get("protocol", "TCP")).upper()
    streams = int(ts["num_streams"]) if _num(ts.get("num_streams")) else 1
    bidir = "sum_sent_bidir_reverse" in end or bool(ts.get("bidir"))
    reverse = bool(ts.get("reverse")) and not bidir
    peer = _dict(start, "accepted_connection").get("host") if not server else None
    if peer:   # iperf3 -s -J: the server's side of the test, the client's address beside it
        run.facts["import.client"] = str(peer)
        run.notes.append(f"the server's side of the test (iperf3 -s, client {peer}): the same test as the "
                         "client's file, whose figures it repeats; import one of the two")
    loopback = any(str(h or "").startswith("127.") or h in ("::1", "localhost") for h in (server, peer))
    params = {"role": "loopback" if loopback else "server" if peer else "client", "streams": str(streams)}
    if _num(ts.get("duration")) and ts["duration"] > 0:
        params["duration"] = f"{ts['duration']:g}"
    if _num(ts.get("blksize")) and ts["blksize"] > 0:
        params["message-size"] = size_arg(int(ts["blksize"]))
    params["direction"] = "bidir" if bidir else "reverse" if reverse else "send"
    if protocol == "UDP":
        step = ImportedStep("iperf3 UDP", "iperf3", {**params, "protocol": "udp"})
        s = _udp(end, ts.get("blksize"), run)
        if s:
            step.samples.append(s)
    else:
        step = ImportedStep("iperf3 TCP", "tcp", params)
        halves = [("send" if not reverse else "receive", "sum_sent", "sum_received", False)]
        if bidir:
            halves.append(("receive", "sum_sent_bidir_reverse", "sum_received_bidir_reverse", True))
        for phase, sent_key, received_key, reverse_half in halves:
            s = _tcp(phase, end, sent_key, received_key, reverse_half, doc.get("intervals"), run)
            if s:
                step.samples.append(s)
    if doc.get("error"):
        run.notes.append(f"iperf3 reported: {str(doc['error'])[:200]}")
    if not step.samples:
        raise Unreadable("no end-of-test result (\"end\": sum_received or streams)")
    run.steps.append(step)
    return run


def _stream_sum(end: dict, side: str) -> dict:
    """What 3.0/3.1 leave out for one stream: the sum, from the streams
    (--bidir, 3.7 on, always writes its sums)."""
    parts = [_dict(st, side) for st in end.get("streams") or [] if isinstance(st, dict)]
    if not parts or not all(_num(p.get("bytes")) and _num(p.get("seconds")) for p in parts):
        return {}
    seconds = max(p["seconds"] for p in parts)
    data = sum(p["bytes"] for p in parts)
    return {"bytes": data, "seconds": seconds, "bits_per_second": data * 8 / seconds if seconds else 0.0,
            "retransmits": sum(p.get("retransmits", 0) for p in parts if _num(p.get("retransmits")))}


def _tcp(phase: str, end: dict, sent_key: str, received_key: str, reverse_half: bool, intervals, run: ImportedRun):
    received = _dict(end, received_key) or (_stream_sum(end, "receiver") if not reverse_half else {})
    sent = _dict(end, sent_key) or (_stream_sum(end, "sender") if not reverse_half else {})
    if not _dict(end, received_key) and received:
        run.notes.append(f"{phase}: no {received_key} in the file (iperf3 3.0/3.1 with one stream): "
                         "summed from the streams")
    if not _num(received.get("bits_per_second")):
        return None
    if not received.get("bytes") and _num(sent.get("bytes")) and sent["bytes"] > 0:
        # the sending side's own file where it was not told what the receiver got: iperf3 -s -J of a -R
        # test writes sum_received 0 (a receiver rate of 0 Gbit/s, which no TCP test that sent data has)
        run.notes.append(f"{phase}: the file is the sending side's and holds no receiver figure ({received_key} "
                         "is 0): the sender's rate is stored (rate_basis sender)")
        return measurement(phase, "n/a", sent["bits_per_second"] / GBIT, "Gbit/s", member=MEMBERS,
                           qualifiers={"rate_basis": "sender"}, bytes=sent.get("bytes"), seconds=sent.get("seconds"),
                           retransmits=sent.get("retransmits"), streams=len(end.get("streams") or []) or None)
    rates = []
    for iv in intervals if isinstance(intervals, list) else []:
        s = _dict(iv, "sum_bidir_reverse" if reverse_half else "sum")
        # -O N's warm-up seconds are intervals too, "omitted": true, which the end sums leave out
        if _num(s.get("bits_per_second")) and not s.get("omitted"):
            rates.append(s["bits_per_second"] / GBIT)
    return measurement(phase, "n/a", received["bits_per_second"] / GBIT, "Gbit/s", member=MEMBERS,
                       qualifiers={"rate_basis": "receiver"}, bytes=received.get("bytes"),
                       seconds=received.get("seconds"),
                       sender_gbit_per_s=sent["bits_per_second"] / GBIT if _num(sent.get("bits_per_second")) else None,
                       retransmits=sent.get("retransmits"), interval_gbit_per_s=rates or None,
                       streams=len(end.get("streams") or []) or None)


def udp_received(packets, lost, block_bytes, seconds) -> tuple[int, float] | None:
    """(bytes, Gbit/s) the UDP receiver got: the datagrams it counted less
    those lost, each block_bytes long (iperf3 sends blocks of one size), over
    the test's seconds; None when a figure is missing. iperf3 3.12's
    sum_received is the same count: 382 datagrams of 32 KiB in 1.000317 s,
    100.107 Mbit/s."""
    if not all(_num(v) for v in (packets, lost, block_bytes, seconds)) or seconds <= 0 or block_bytes <= 0 \
            or not 0 <= lost <= packets:
        return None
    data = int((packets - lost) * block_bytes)
    return data, data * 8 / seconds / GBIT


def _udp(end: dict, block_bytes, run: ImportedRun):
    loss = {k: s.get(k) for s in [_dict(end, "sum_received") or _dict(end, "sum")]
            for k in ("jitter_ms", "lost_packets", "packets", "lost_percent")}
    received, sent = _dict(end, "sum_received"), _dict(end, "sum_sent") or _dict(end, "sum")
    if _num(received.get("bits_per_second")):
        return measurement("udp", "n/a", received["bits_per_second"] / GBIT, "Gbit/s", member=MEMBERS,
                           bytes=received.get("bytes"), seconds=received.get("seconds"),
                           sender_gbit_per_s=sent["bits_per_second"] / GBIT if _num(sent.get("bits_per_second"))
                           else None, **loss)
    if not _num(sent.get("bits_per_second")):
        return None
    # before 3.11, UDP's only sum: the bytes sent and their rate, with the receiver's loss beside them
    got = udp_received(sent.get("packets"), sent.get("lost_packets"), block_bytes, sent.get("seconds"))
    if got is None:
        run.notes.append("udp: the file gives only the sender's rate (no sum_received, no block size): "
                         "stored as the sender's (rate_basis sender)")
        return measurement("udp", "n/a", sent["bits_per_second"] / GBIT, "Gbit/s", member=MEMBERS,
                           qualifiers={"rate_basis": "sender"}, bytes=sent.get("bytes"), seconds=sent.get("seconds"),
                           **loss)
    run.notes.append("udp: no sum_received (iperf3 before 3.11): the receiver's rate is its datagrams "
                     "(packets less lost) times the block size; the sender's is kept as sender_gbit_per_s")
    return measurement("udp", "n/a", got[1], "Gbit/s", member=MEMBERS, bytes=got[0], seconds=sent.get("seconds"),
                       sender_gbit_per_s=sent["bits_per_second"] / GBIT, **loss)
