"""pario's layout arithmetic (kernels/mpi/pario/pario_layout.c), compiled
with a small driver and run: where each rank's transfers go, and in which
order. IOR -z's random order must move every offset of the sequential order
exactly once (a repeated offset leaves a hole that the shifted read, taking
the same order, never reads, so --verify cannot see it), the same order on
every rank that recomputes it, and an order that is not nearly sorted."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import REPO

DRIVER = r"""
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "pario_layout.h"
/* shared ranks block transfer segments pieces random seed writer: one offset a line */
int main(int argc, char **argv)
{
    (void)argc;
    struct pario_layout l;
    pario_layout_init(&l, atoi(argv[1]), atoi(argv[2]), strtoull(argv[3], 0, 10), strtoull(argv[4], 0, 10),
                      atoll(argv[5]), atoll(argv[6]), atoi(argv[7]), strtoull(argv[8], 0, 10), 0);
    int w = atoi(argv[9]);
    for (uint64_t i = 0; i < l.ops; i++)
        printf("%" PRIu64 "\n", pario_layout_offset(&l, w, i));
    return 0;
}
"""


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("layout")
    (d / "driver.c").write_text(DRIVER)
    src = REPO / "kernels" / "mpi" / "pario"
    exe = d / "layout"
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{src}", str(d / "driver.c"),
                    str(src / "pario_layout.c"), "-o", str(exe)], check=True, capture_output=True, text=True)

    def offsets(*, shared=False, ranks=1, block, transfer, segments=1, pieces=1, random=False, seed=1,
                writer=0) -> list[int]:
        out = subprocess.run([str(exe), str(int(shared)), str(ranks), str(block), str(transfer), str(segments),
                              str(pieces), str(int(random)), str(seed), str(writer)],
                             check=True, capture_output=True, text=True, timeout=60).stdout
        return [int(x) for x in out.split()]
    return offsets


@pytest.mark.parametrize("ops", [1, 2, 3, 7, 8, 9, 1000, 4097])
def test_random_order_moves_each_sequential_offset_once(layout, ops):
    shape = dict(block=8 * ops, transfer=8)
    sequential = layout(**shape)
    assert sequential == [8 * i for i in range(ops)]
    shuffled = layout(**shape, random=True)
    assert sorted(shuffled) == sequential


@pytest.mark.parametrize("shape", [
    dict(shared=True, ranks=3, block=64 * 1024, transfer=4096, segments=2),           # IOR's segmented file
    dict(shared=True, ranks=4, block=64 * 1024, transfer=4096, segments=3, pieces=4),  # E8's strided one
    dict(shared=False, ranks=2, block=47008 * 5, transfer=47008, segments=7),         # io500 ior-hard's shape
])
def test_random_order_of_every_writer_is_a_permutation_of_its_sequential_offsets(layout, shape):
    for writer in range(shape["ranks"]):
        sequential = layout(**shape, writer=writer)
        shuffled = layout(**shape, random=True, seed=99, writer=writer)
        assert sorted(shuffled) == sorted(sequential) and shuffled != sequential
    if shape["shared"]:   # the writers' offsets tile the shared file without overlap
        every = sorted(o for w in range(shape["ranks"]) for o in layout(**shape, random=True, seed=99, writer=w))
        assert every == list(range(0, shape["block"] * shape["segments"] * shape["ranks"], shape["transfer"]))


def test_random_order_is_recomputed_alike_and_differs_by_writer_and_run(layout):
    shape = dict(shared=True, ranks=2, block=8 * 500, transfer=8)
    first = layout(**shape, random=True, seed=7, writer=0)
    assert layout(**shape, random=True, seed=7, writer=0) == first      # a reader recomputes its writer's order
    assert layout(**shape, random=True, seed=7, writer=1) != [o + 8 * 500 for o in first]
    assert layout(**shape, random=True, seed=8, writer=0) != first


def test_random_order_is_not_nearly_sorted(layout):
    shuffled = layout(block=8 * 10000, transfer=8, random=True, seed=12345)
    rising = sum(b > a for a, b in zip(shuffled, shuffled[1:])) / (len(shuffled) - 1)
    assert 0.4 < rising < 0.6        # a shuffled list rises at half its steps; a sorted one at all
    ends = shuffled[:100]            # the first transfers spread over the file, not its start
    assert max(ends) > 8 * 10000 * 0.9 and min(ends) < 8 * 10000 * 0.1
