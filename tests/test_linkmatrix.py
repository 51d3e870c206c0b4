"""linkmatrix under real mpiexec on this host (3 ranks): every ordered pair
is one record per figure, in the shift pattern and one pair at a time."""
from __future__ import annotations

import pytest

PAIRS = {(s, d) for s in range(3) for d in range(3) if s != d}


@pytest.mark.parametrize("pattern", ["shift", "one-pair"])
def test_every_ordered_pair_once_per_figure_with_its_pattern(run_cbk, mpiexec, pattern):
    r = run_cbk("linkmatrix", f"--pattern={pattern}", "--size=64k", "--iterations=4", "--latency-iterations=10",
                launcher=[mpiexec, "-n", "3"])
    assert r.status == 0, r.stderr
    assert r.run_record()["parameters"]["pattern"] == pattern
    for phase in ("link_bandwidth", "link_latency"):
        recs = r.measurements(phase)
        assert {(x["src_rank"], x["dst_rank"]) for x in recs} == PAIRS and len(recs) == len(PAIRS)
        assert all(x["pattern"] == pattern and x["rate"] > 0 for x in recs), recs
        assert all(x["shift"] == (x["dst_rank"] - x["src_rank"]) % 3 for x in recs)


def test_an_unknown_pattern_is_bad_input(run_cbk):
    r = run_cbk("linkmatrix", "--pattern=ring")
    assert r.status == 2 and "pattern" in r.stderr


def test_a_link_record_names_its_message_size_and_rates_the_bytes_of_its_window(run_cbk, mpiexec):
    """size_bytes was the window's bytes (4 x 64 KiB written as 262144 for --size=64k), where the mpi
    kernel's size_bytes, and --size, are each message's."""
    r = run_cbk("linkmatrix", "--size=64k", "--window=4", "--iterations=4", "--latency-iterations=10",
                launcher=[mpiexec, "-n", "2"])
    assert r.status == 0, r.stderr
    for x in r.measurements("link_bandwidth"):
        assert (x["size_bytes"], x["window"], x["bytes"]) == (65536, 4, 4 * 65536), x
        assert x["rate"] == pytest.approx(x["bytes"] / x["seconds"] / 2**20)
        assert x["messages_per_s"] == pytest.approx(4 / x["seconds"])
    assert [(x["size_bytes"], x["bytes"]) for x in r.measurements("link_latency")] == [(8, 8), (8, 8)]
