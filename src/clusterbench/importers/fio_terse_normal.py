"""fio --output-format=terse,normal: each job's terse line, then the same
results as fio's normal text.

The terse lines hold the exact figures (IOPS and KiB/s as whole numbers,
the latencies and clat percentiles) but no job option and no date; the
text holds both ("rr: (g=0): rw=randread, bs=(R) 4096B-4096B, ...,
ioengine=psync, iodepth=1", "pid=18504: Mon Dec  7 17:53:41 2026") and its
IOPS rounded to three figures. So the figures are the lines', the options
and date the text's, once each job's figures are found the same in both:
read from the lines alone, a job of the file was a `fio` step with no
parameter, which compare matched with any job of its name.
"""
from __future__ import annotations

from clusterbench.importers import ImportedRun, Unreadable
from clusterbench.output.figure_digits import as_given

# fio's text prints IOPS and sizes to 3 significant figures ("14.2k" of 14222, "106MiB"): 0.5 of the last one
TEXT_ROUNDING = 0.005


def _agree(terse: float, text: float) -> bool:
    return abs(terse - text) <= max(1.0, TEXT_ROUNDING * terse)


def merge(terse: ImportedRun, text: ImportedRun) -> ImportedRun:
    """The terse run, each step given the options of its job in the text
    and the run the text's date; refused in one line where a job or a
    figure of one is not in the other (two runs' outputs in one file)."""
    steps = {s.name: s for s in text.steps}
    if set(steps) != {s.name for s in terse.steps}:
        only = sorted(({s.name for s in terse.steps} ^ set(steps)))
        raise Unreadable(f"its terse lines and its normal text (--output-format=terse,normal) are not of the same "
                         f"jobs: {only[0]} is in one of them alone")
    for step in terse.steps:
        said = {s.phase: s for s in steps[step.name].samples}
        for s in step.samples:
            twin = said.get(s.phase)
            if twin is None or not (_agree(s.value, twin.value) and _agree(s.record["bytes"], twin.record["bytes"])):
                printed = f"{as_given(twin.value)} IOPS, {twin.record.get('bytes')} bytes" if twin else "no result"
                raise Unreadable(f"{step.name} {s.phase}: its terse line says {as_given(s.value)} IOPS, "
                                 f"{s.record.get('bytes')} bytes, its normal text {printed}: not one run's "
                                 "(--output-format=terse,normal prints the same results twice)")
        step.params = dict(steps[step.name].params)
    terse.started = text.started
    terse.form = f"{terse.form} and text"
    terse.notes = [n for n in terse.notes if not n.startswith("terse output holds no job options")]
    terse.notes.append("terse,normal: the figures are the terse lines' (exact), each job's options and the date "
                       "the normal text's, whose figures agree with them")
    terse.notes += [n for n in text.notes if n.startswith("text output: the date")]
    return terse
