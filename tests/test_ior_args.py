"""IOR command lines -> pario parameters, for a table of real IOR lines."""
from __future__ import annotations

import shlex

import pytest

from clusterbench.errors import BadInput
from clusterbench.ior_args import translate

BASE = {"api": "posix", "strategy": "independent", "read": "same", "block-size": "1m",
        "transfer-size": "256k", "segments": "1"}

TABLE = [
    # E3 (GlusterFS): MPI-IO, 4 GiB per task, 4 MiB transfers, one repetition, file per process
    ("mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output", 36, None,
     {"api": "mpiio", "block-size": "4g", "transfer-size": "4m", "repetitions": "1", "strategy": "split",
      "dir": "/gluster"}),
    # IOR's own README example: shared file, fsync, task reordering for reads
    ("mpirun -np 64 ior -t 1m -b 16m -s 16 -F -C -e -o /scratch/ior/test", 64, None,
     {"transfer-size": "1m", "block-size": "16m", "segments": "16", "strategy": "split", "read": "shifted",
      "fsync": "end", "dir": "/scratch/ior"}),
    # collective MPI-IO on a shared file, write check and read check
    ("mpiexec -n 8 -ppn 4 ior -a MPIIO -c -b 256m -t 1m -W -R -w -r -o /lustre/f", 8, 4,
     {"api": "mpiio", "strategy": "collective", "block-size": "256m", "transfer-size": "1m", "verify": "true",
      "dir": "/lustre"}),
    # write only, fsync per write, random offsets, three repetitions 5 s apart, clustered flags
    ("ior -wYz -b 64k -t 4k -i 3 -d 5 -o out", None, None,
     {"fsync": "each", "offsets": "random", "phases": "write-only", "block-size": "64k", "transfer-size": "4k",
      "repetitions": "3", "delay": "5", "dir": "."}),
    # read only, -C with -Q 2 (two nodes away), O_DIRECT, glued values
    ("/opt/ior/bin/ior -r -C -Q 2 -B -b1g -t2m -k", None, None,
     {"phases": "read-only", "read": "shifted", "shift-nodes": "2", "direct": "true", "block-size": "1g",
      "transfer-size": "2m"}),
    # IOR defaults: shared file, POSIX, 1 MiB block, 256 KiB transfers
    ("IOR", None, None, {}),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("line,ranks,ppn,expected", TABLE, ids=[t[0] for t in TABLE])
def test_translation_table(line, ranks, ppn, expected):
    t = translate(shlex.split(line))
    assert t.params == {**BASE, **expected}
    assert (t.ranks, t.ranks_per_node) == (ranks, ppn)


@pytest.mark.timeout(10)
def test_notes_say_what_is_ignored():
    t = translate(shlex.split("ior -k -g -o /x/y"))
    assert any(n.startswith("-k ignored") for n in t.notes)
    assert any(n.startswith("-g ignored") for n in t.notes)


BAD = [
    ("ior -a HDF5", "IOR -a HDF5"),
    ("ior -E -o /x", "IOR option -E is not supported"),
    ("ior -wK", "unknown IOR option -K"),
    ("ior -c -a POSIX", "-c (collective) needs -a MPIIO"),
    ("ior -F -c -a MPIIO", "cannot be combined"),
    ("ior -b", "-b needs a value"),
    ("ior -b four", "expected a size"),
    ("ior -s 0", "expected a positive count"),
    ("mpiexec -hosts a,b -n 2 ior", "launcher option -hosts"),
    ("ior --posix.odirect", "unexpected IOR argument"),
    ("ior -O stoneWallingWearOut=1", "IOR option -O is not supported"),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("line,message", BAD, ids=[b[0] for b in BAD])
def test_bad_lines_name_the_option(line, message):
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    assert message in e.value.message
    assert "\n" not in e.value.message


@pytest.mark.timeout(90)
def test_cli_runs_an_ior_line_and_prints_ior_summary(cli, mpiexec, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    r = cli("ior", "--quiet", "mpiexec", "-n", "2", "IOR", "-a", "MPIIO", "-b", "256k", "-t", "64k", "-i", "2",
            "-F", "-C", "-e", "-W", "-o", str(target / "output"))
    assert r.status == 0, r.stderr
    r = cli("ior", "mpiexec", "-n", "2", "IOR", "-a", "POSIX", "-b", "256k", "-t", "64k", "-i", "2", "-c")
    assert r.status == 2 and "-c (collective) needs -a MPIIO" in r.stderr
    r = cli("ior", "--np", "2", "-a", "MPIIO", "-c", "-b", "256k", "-t", "64k", "-i", "2", "-R",
            "-o", str(target / "shared"))
    assert r.status == 0, r.stderr
    assert "--strategy=collective" in r.stdout and "(ranks 2)" in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.startswith("Max Write: ") and "MiB/sec (" in line for line in lines)
    assert any(line.startswith("Max Read: ") for line in lines)
    rows = [line.split() for line in lines if line.startswith(("write ", "read "))]
    assert [row[0] for row in rows] == ["write", "read"]
    for row in rows:
        mx, mn, mean = float(row[1]), float(row[2]), float(row[3])
        assert mn <= mean <= mx
        assert row[10:14] == ["2", "2", "2", "0"]  # tasks, tasks per node, reps, file per process
        assert float(row[14]) == 0.5                # aggregate MiB: 2 ranks x 256 KiB
    assert list(target.iterdir()) == []
    r = cli("ior", "--np", "2", "-a", "MPIIO", "-wK")
    assert r.status == 2 and "unknown IOR option -K" in r.stderr


def test_summary_statistics_as_ior():
    from clusterbench.report.ior_summary import _stats, ior_figures

    assert _stats([1.0, 3.0]) == (3.0, 1.0, 2.0, 1.0)  # population standard deviation, as IOR
    from clusterbench.sample import Sample

    cached, synced, cold = (Sample.from_record({"phase": p, "mode": m, "rate": r}) for p, m, r in
                            (("write", "cached", 1.0), ("write", "fsync", 2.0), ("read", "cold", 3.0)))
    assert ior_figures([cached, synced, cold]) == {"write": [synced], "read": [cold]}
