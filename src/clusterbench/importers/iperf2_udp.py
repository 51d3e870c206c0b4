"""iperf 2's UDP figure, of one stream or of -P's several, from its text
(iperf2) or its -y C rows (iperf2_csv): what the receiver got (the
server's report), with the sender's rate beside it.

With -P the streams are one test: its rate is what all of them delivered.
The server's text sums them in a [SUM] line with the loss of all (no
jitter); the client's text sums only what it sent ([SUM] of its own
lines) and prints each stream's server report, with no sum of those; 2.1's
CSV sums nothing. So the figure is the receiver's [SUM] where the file has
one, else the streams' reports added; each stream's rate and jitter are
kept, and the worst stream's jitter is the test's."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.importers import ImportedRun, measurement


@dataclass
class Report:
    """One receiver's report line (or a [SUM] of them), as iperf printed it."""
    line: int
    gbit_per_s: float
    bytes: int
    seconds: float
    jitter_ms: float | None = None
    lost: int | None = None         # datagrams lost; negative (reordering) is no count
    total: int | None = None
    lost_percent: float | None = None


def received(streams: list[Report], summed: Report | None, sender_gbit_per_s: float | None, run: ImportedRun):
    """The sample of the test: `summed` (the receiver's [SUM]) or the streams' reports added."""
    if len(streams) == 1 and summed is None:
        (r,) = streams
        return _sample(r, sender_gbit_per_s)
    if summed is None:
        run.notes.append(f"udp: {len(streams)} streams and no [SUM] of what the server received: the rate is the "
                         "sum of the streams' server reports")
        counted = all(r.lost is not None and r.lost >= 0 and r.total is not None for r in streams)
        lost = sum(r.lost for r in streams) if counted else None
        total = sum(r.total for r in streams) if counted else None
        summed = Report(max(r.line for r in streams), sum(r.gbit_per_s for r in streams),
                        sum(r.bytes for r in streams), max(r.seconds for r in streams), None, lost, total,
                        100 * lost / total if counted and total else None)
    jitters = [r.jitter_ms for r in streams if r.jitter_ms is not None]
    summed.jitter_ms = max(jitters) if jitters else None
    return _sample(summed, sender_gbit_per_s, streams=len(streams),
                   stream_gbit_per_s=[r.gbit_per_s for r in streams], stream_jitter_ms=jitters or None)


def _sample(r: Report, sender_gbit_per_s: float | None, **fields):
    return measurement("udp", "n/a", r.gbit_per_s, "Gbit/s", line=r.line, bytes=r.bytes, seconds=r.seconds,
                       sender_gbit_per_s=sender_gbit_per_s, jitter_ms=r.jitter_ms,
                       lost_packets=r.lost if r.lost is not None and r.lost >= 0 else None, packets=r.total,
                       lost_percent=r.lost_percent, **fields)
