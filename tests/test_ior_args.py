"""IOR 4.0 command lines through `clusterbench ior`: the option forms IOR's
parser takes, -O directives and -f scripts, refusals that name every
unsupported option at once, IOR's own rejections; then a table of IOR
lines run for real at 2 and 3 ranks whose output is read by parsers
written from IOR's format (the 27-column summary, JSON, CSV); and the
behaviours IOR documents for -m, -Z/-X and -C (which rank reads whose
file, checked by verifying the data read)."""
from __future__ import annotations

import ctypes
import json
import re
import shlex

import pytest

from clusterbench.errors import BadInput
from clusterbench.tools.ior_args import translate
from clusterbench.tools.option_tokens import tokens
from conftest import tree

pytestmark = pytest.mark.long_module   # scheduled first (conftest)

BASE = {"api": "posix", "strategy": "independent", "read": "same", "block-size": "1m",
        "transfer-size": "256k", "segments": "1", "dir": "."}

TABLE = [
    # E3 (GlusterFS): MPI-IO, 4 GiB per task, 4 MiB transfers, one repetition, file per process
    ("mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output", 36, None,
     {"api": "mpiio", "block-size": "4g", "transfer-size": "4m", "strategy": "split", "dir": "/gluster"}),
    # IOR's README example: file per process, fsync, task reordering for reads
    ("mpirun -np 64 ior -t 1m -b 16m -s 16 -F -C -e -o /scratch/ior/test", 64, None,
     {"transfer-size": "1m", "block-size": "16m", "segments": "16", "strategy": "split", "read": "shifted",
      "shift-nodes": "1", "fsync": "end", "dir": "/scratch/ior"}),
    ("mpiexec -n 8 -ppn 4 ior -a MPIIO -c -b 256m -t 1m -W -R -w -r -o /lustre/f", 8, 4,
     {"api": "mpiio", "strategy": "collective", "block-size": "256m", "transfer-size": "1m", "verify": "true",
      "dir": "/lustre"}),
    ("ior -wYz -b 64k -t 4k -i 3 -d 5 -o out", None, None,
     {"fsync": "each", "offsets": "random", "phases": "write-only", "block-size": "64k", "transfer-size": "4k",
      "repetitions": "3", "delay": "5"}),
    ("/opt/ior/bin/ior -r -C -Q 2 --posix.odirect -b1g -t2m -k", None, None,
     {"phases": "read-only", "read": "shifted", "shift-nodes": "2", "direct": "true", "block-size": "1g",
      "transfer-size": "2m"}),
    ("ior -F -Z -X -5 -m -i 2", None, None,
     {"strategy": "split", "read": "random", "seed": "-5", "shift-nodes": "1", "multi-file": "true",
      "repetitions": "2"}),
    ("ior -O blockSize=8m,transferSize=2m,filePerProc=1,reorderTasksRandom=1 -O reorderTasksRandomSeed=3", None, None,
     {"block-size": "8m", "transfer-size": "2m", "strategy": "split", "read": "random", "seed": "3",
      "shift-nodes": "1"}),
    ("ior -O useO_DIRECT=1 -a POSIX -b 4m -t 4m", None, None,
     {"direct": "true", "block-size": "4m", "transfer-size": "4m"}),
    ("ior -zk -b 8k -t 4k", None, None, {"offsets": "random", "block-size": "8k", "transfer-size": "4k"}),
    ("ior -g -O intraTestBarriers=1", None, None, {"phase-barriers": "true"}),
    ("ior -z-k -b 8k -t 4k", None, None, {"offsets": "random", "block-size": "8k", "transfer-size": "4k"}),
    ("ior -Fb 8k -t=4k --collective -a MPIIO", None, None,
     {"strategy": "split", "api": "mpiio", "block-size": "8k", "transfer-size": "4k"}),
    ("ior -N 4 -b 1p", 4, None, {"block-size": str(1 << 50)}),
    # a name ending in '/': IOR's file-per-process names are <name>.<rank>, inside that directory
    ("ior -F -o /scratch/run1/", None, None, {"strategy": "split", "dir": "/scratch/run1"}),
    ("ior -F -o /", None, None, {"strategy": "split", "dir": "/"}),
    # IOR splits the name at '@' (ParseFileName); a shared file is the first name
    ("ior -o /scratch/a/f@/scratch/b/f", None, None, {"dir": "/scratch/a"}),
    ("IOR", None, None, {}),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("line,ranks,ppn,expected", TABLE, ids=[t[0] for t in TABLE])
def test_translation_table(line, ranks, ppn, expected):
    t = translate(shlex.split(line))
    assert t.params == {**BASE, **expected}
    assert (t.ranks, t.ranks_per_node) == (ranks, ppn)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("argv,options", [
    ("-zk", [("-z", None), ("-k", None)]),
    ("-z-k", [("-z", None), ("-k", None)]),          # IOR's parser skips the '-'
    ("-b4m", [("-b", "4m")]),                        # IOR would also set -m here; getopt does not
    ("-b=4m -t 1m", [("-b", "4m"), ("-t", "1m")]),
    ("-Fb 4m", [("-F", None), ("-b", "4m")]),
    ("-v=3", [("-v", "3")]),
    ("--posix.odirect --mpiio.hintsFileName h.txt --mpiio.hintsFileName=i.txt",
     [("--posix.odirect", None), ("--mpiio.hintsFileName", "h.txt"), ("--mpiio.hintsFileName", "i.txt")]),
])
def test_option_forms_as_iors_parser_reads_them(argv, options):
    from clusterbench.tools.ior_args import GRAMMAR
    parsed = tokens(shlex.split(argv), GRAMMAR)
    assert parsed.options == options and parsed.problems == []


@pytest.mark.timeout(10)
def test_notes_say_what_is_ignored():
    t = translate(shlex.split("ior -k -x -j 3 -o /x/y"))
    for opt in ("-k", "-x", "-j"):
        assert any(n.startswith(f"{opt} ignored") for n in t.notes), t.notes
    t = translate(shlex.split("ior -c -a POSIX"))
    assert any("POSIX has no collective I/O" in n for n in t.notes)


BAD = [
    ("ior -a HDF5", ["-a HDF5: IOR's HDF5 backend (HDF5 library) is not offered; pario offers the APIs POSIX, MPIIO"]),
    # IOR's DUMMY backend and its options are IOR's, not unknown ones
    ("ior -a dummy --dummy.delay-create=1000 --dummy.delay-xfer 50 -b 2m -t 1m",
     ["-a dummy: IOR's DUMMY backend (no I/O: it only waits, to test IOR itself) is not offered; "
      "pario offers the APIs POSIX, MPIIO"]),
    ("ior -a FROB", ["-a FROB: not an IOR backend (IOR 4.0 has POSIX, MPIIO, DUMMY"]),
    # lines IOR 4.0's ValidateTests rejects
    ("ior -b 0 -t 1m", ["block size must not be smaller than transfer size"]),
    ("ior -z -w -r -R -b 2m -t 1m", ["random offset with read check option requires to set the random seed"]),
    ("ior -D 5 -O stoneWallingStatusFile=s,stoneWallingWearOutIterations=9 -M 50% -y -F -T 2 -E",
     ["stoneWallingStatusFile: splitting", "stoneWallingWearOutIterations: a fixed transfer count",
      "-M: the memory hog", "-y: dual mount", "-T: a time limit", "-E: pario always writes fresh files"]),
    ("ior --mpiio.hintsFileName=h -a MPIIO --posix.rangelocks --mpiio.useFileView -wq",
     ["--mpiio.hintsFileName", "--posix.rangelocks", "--mpiio.useFileView", "-q: unknown option"]),
    ("ior -C -Z", ["Both Constant and Random task re-ordering specified"]),
    ("ior -z -C -b 8k -t 4k", ["random offset and reorder tasks specified with single-shared-file"]),
    ("ior -z -b 4k -t 4k", ["choose blocksize > transferSize"]),
    ("ior -r -R", ["use -G"]),
    # IOR checks after its write phase, on the file it wrote: without -w it opens none
    ("ior -W", ["-W without -w"]),
    ("ior -W -r -F", ["-W without -w"]),
    # IOR opens a shared test file by this name: a directory, so IOR fails
    ("ior -o /scratch/run1/", ["-o /scratch/run1/: names a directory"]),
    ("ior -F -o /scratch/a/f@/scratch/b/f", ["-o /scratch/a/f@/scratch/b/f: several test file names"]),
    # IOR writes into the null device itself; pario would write files in /dev, a memory file system
    ("ior -o /dev/null", ["-o /dev/null: names a device, which IOR writes into and pario cannot"]),
    ("ior -b 3k -t 2k", ["block size must be a multiple of transfer size"]),
    ("ior -t 0", ["zero transfer size"]),
    ("ior -y", ["Dual Mount can only be used with File Per Process"]),
    ("ior -O stoneWallingWearOut=1", ["only sensible when setting a stonewall deadline with -D"]),
    ("ior -O summaryFormat=XML", ["Unknown summaryFormat"]),
    ("ior -O frobnicate=1", ["-O frobnicate: unknown IOR parameter"]),
    # IOR 4.1's: refused for what they do, not as unknown
    ("ior -O savePerOpDataCSV=ops --posix.lustre.pool=fast", ["savePerOpDataCSV: per-operation CSV files are not "
                                                             "written", "--posix.lustre.pool: file-system specific"]),
    # directives IOR 4.0's DecodeDirective knows though no option lists them: refused for what they do
    ("ior -O interIODelay=100,memoryPerTask=1g", ["interIODelay: a wait between transfers",
                                                 "memoryPerTask: the memory hog"]),
    ("ior -O blocksize", ["expected key=value"]),
    # IOR's value ends at the first blank: it runs these with a block of 64 bytes (checked with IOR 4.1)
    ("ior -O 'blockSize=64 k'", ["-O blockSize=64 k: IOR reads the value up to the first blank ('64') and ignores "
                                 "the rest; write it without blanks"]),
    ("ior -b", ["-b: needs a value"]),
    ("ior -b four", ["-b four: expected a size"]),
    ("ior -s 0", ["-s 0: expected a count of at least 1"]),
    ("ior extra", ["'extra': unexpected word"]),
    ("mpiexec -hosts a,b -n 2 ior", ["launcher option -hosts"]),
    ("mpiexec -n 2 ior -N 3", ["-N 3: give the rank count to the launcher"]),
    ("ior -f /nonexistent/script", ["cannot read the script"]),
]


@pytest.mark.parametrize("line,said", [
    # a size that did not read was checked as 8 bytes: "-b 8 -t 65536: block size must be a multiple of
    # transfer size (IOR); -b 8 -t 65536: block size must not be smaller than transfer size (IOR)"
    ("ior -b 1mx -t 64k", "IOR line refused: -b 1mx: IOR would read 1048576 and ignore 'x'; give a whole number with "
                          "an optional k, m, g, t or p (binary multiples)"),
    ("ior -b 4m -t 1.5m -z", "IOR line refused: -t 1.5m: IOR would read 1 and ignore '.5m'; give a whole number with "
                             "an optional k, m, g, t or p (binary multiples)"),
    ("ior -b four", "IOR line refused: -b four: expected a size like 4g, 4m, 512k or 4096"),
    # one reason for a pair of sizes, the first IOR's ValidateTests stops at, with the sizes as written
    ("ior -t 4m -b 1m", "IOR line refused: -b 1m -t 4m: block size must be a multiple of transfer size (IOR)"),
    ("ior -t 2m", "IOR line refused: -b 1m (IOR's default) -t 2m: block size must be a multiple of transfer size "
                  "(IOR)"),
    ("ior -b 0 -t 1m", "IOR line refused: -b 0 -t 1m: block size must not be smaller than transfer size (IOR)"),
])
def test_a_refused_size_is_named_as_written_and_nothing_is_said_of_sizes_nobody_wrote(line, said):
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    assert e.value.message == said


@pytest.mark.parametrize("line,block,transfer,segments,repetitions", [
    # IOR's string_to_bytes is sscanf(" %lld %c "): the first letter after the number is the multiple and the
    # rest is never read, so IOR runs these as 1 GiB, 4 MiB, 1 MiB (its output says so); they were refused
    ("ior -b 1gb -t 4MB", "1073741824", "4194304", "1", 1),
    ("ior -b 1G -t 1MiB", "1g", "1048576", "1", 1),
    ("ior -b '1 g' -t 64KiB", "1073741824", "65536", "1", 1),
    ("ior -O blockSize=2mb,transferSize=1kib -s 4096b", "2097152", "1024", "4096", 1),
    # -s and the 'd' options (-i, -X, -N, ...) go through the same reader: -s 1k is 1024 segments to IOR
    ("ior -b 1m -t 1k -s 1K -i 1k", "1m", "1k", "1024", 1024),
])
def test_sizes_and_counts_read_as_iors_sscanf_reads_them(line, block, transfer, segments, repetitions):
    t = translate(shlex.split(line))
    assert (t.params["block-size"], t.params["transfer-size"], t.params["segments"]) == (block, transfer, segments)
    assert t.tests[0].repetitions == repetitions


def test_a_size_not_written_as_iors_help_writes_it_says_the_bytes_it_was_read_as():
    """"1GB" is 2^30 to IOR, not 10^9: the note says what was read."""
    notes = translate(shlex.split("ior -b 1GB -t 4m")).notes
    assert ("-b 1GB read as 1073741824 bytes (1 GiB): IOR takes the letter after the number as a binary multiple "
            "and reads nothing after it") in notes
    assert not [n for n in notes if n.startswith("-t")]   # 4m is IOR's own spelling: nothing to say


@pytest.mark.parametrize("line,said", [
    # what IOR reads without a word, and what it reads (checked against IOR 4.1's -a DUMMY output)
    ("ior -b 8.5g -t 8", "-b 8.5g: IOR would read 8 and ignore '.5g'"),
    ("ior -b 16x -t 8", "-b 16x: IOR would read 16 and ignore 'x'"),
    ("ior -b 1g -t 4k2", "-t 4k2: IOR would read 4096 and ignore '2'"),
    ("ior -b 1m -t 1k -s 2.5", "-s 2.5: IOR would read 2 and ignore '.5'"),
    ("ior -b 1m -t 1k -i 2x", "-i 2x: IOR would read 2 and ignore 'x'"),
    ("ior -b 1e6", "-b 1e6: IOR would read 1 and ignore 'e6'"),
    ("ior -d five", "-d five: expected a whole number"),
    ("ior -b 99999999p", "-b 99999999p: larger than IOR's 64-bit numbers"),
])
def test_a_value_ior_would_misread_is_refused_with_what_ior_would_read(line, said):
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    assert said in e.value.message and "\n" not in e.value.message


@pytest.mark.parametrize("line,ranks,ppn", [
    ("srun -n 4 ior -b 1m", 4, None), ("srun -n4 ior", 4, None), ("srun --ntasks=8 -N 2 ior", 8, 4),
    ("srun --ntasks 6 --ntasks-per-node 3 ior", 6, 3), ("srun --nodes=2 -n 6 --ntasks-per-node=3 ior", 6, 3)])
def test_an_srun_prefix_gives_the_ranks_and_the_srun_launcher(line, ranks, ppn):
    t = translate(shlex.split(line))
    assert (t.ranks, t.ranks_per_node, t.launcher) == (ranks, ppn, "srun")
    assert translate(shlex.split("mpiexec -n 2 ior")).launcher is None   # the default launcher, as before


@pytest.mark.parametrize("line,said", [
    ("srun -n 4 --mpi=pmi2 ior", "launcher option --mpi=pmi2 is not understood here: give the ranks with -n N (and "
                                 "-N nodes or --ntasks-per-node M)"),
    ("srun -N 3 -n 8 ior", "srun -N 3: give -n, a multiple of the nodes, so every node runs as many ranks"),
    ("srun -N 2 ior", "srun -N 2: give -n, a multiple of the nodes, so every node runs as many ranks"),
    ("srun -n 0 ior", "launcher option -n needs a positive count"),
])
def test_an_srun_prefix_it_cannot_follow_is_refused_in_one_line(line, said):
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    assert e.value.message == said


@pytest.mark.parametrize("line,said", [
    # io500's ior-rnd4K read: IOR after 4.0 draws random offsets (repeats too) for -z -z, and allows -b = -t then
    ("ior -r -D 30 -z -z -t=4096 -b=4096 -s=100 -O stoneWallingWearOut=1 -C -Q 2 -F -a POSIX",
     "IOR line refused: -z twice (randomOffset above 1): IOR 4.1 draws the offsets at random, repeats and overlaps "
     "included, which is not implemented; -z once for a shuffled order of the block's offsets (IOR 4.0 read -z -z "
     "as -z)"),
    ("ior -O randomOffset=2 -b 64k -t 16k", "IOR line refused: -z twice (randomOffset above 1): IOR 4.1 draws"),
    ("ior -F -Z -Z -b 64k -t 16k", "IOR line refused: -Z twice (reorderTasksRandom above 1): IOR 4.1 shuffles the "
                                   "ranks (every file read by exactly one rank), which is not implemented"),
])
def test_a_flag_ior_reads_as_another_mode_when_given_twice_is_refused_not_taken_as_once(line, said):
    """-z -z and -Z -Z ran as -z and -Z: shuffled offsets and a random draw of
    files where IOR 4.1 draws offsets with repeats and shuffles the ranks."""
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    assert e.value.message.startswith(said)


def test_unique_directories_per_rank_are_refused_with_f_and_noted_without():
    """IOR -u -F opens /dir/<rank>/file.<rank>: every rank creates its file in its
    own directory. pario noted "-u ignored" and created all of them in one
    directory, whose create contention is in the open time IOR's figure holds."""
    for line in ("ior -u -F -b 1m -t 64k", "ior -uF -b 1m -t 64k", "ior -F -O uniqueDir=1 -b 1m -t 64k"):
        with pytest.raises(BadInput) as e:
            translate(shlex.split(line))
        assert e.value.message == ("IOR line refused: -u with -F: a directory per rank (IOR writes "
                                   "/dir/<rank>/file.<rank>) is not implemented; pario's ranks would create their "
                                   "files in one directory, a different open time"), line
    # without -F IOR has one shared file and reads no -u: a note, and nothing said of an -O uniqueDir=0
    assert "-u ignored: without -F, IOR's one shared file takes no directory per rank either" in translate(
        shlex.split("ior -u -b 1m -t 64k")).notes
    assert not [n for n in translate(shlex.split("ior -F -O uniqueDir=0 -b 1m -t 64k")).notes if "-u" in n]


def test_dummy_options_alone_are_noted_and_nothing_else_is_said_of_dummy():
    with pytest.raises(BadInput) as e:
        translate(shlex.split("ior -a dummy --dummy.delay-create=1000 -b 2m -t 1m"))
    assert "unknown" not in e.value.message and e.value.message.count("DUMMY") == 1
    t = translate(shlex.split("ior -a POSIX --dummy.delay-create=1000 -O dummy.delay-xfer=5 -b 2m -t 1m"))
    assert any(n.startswith("--dummy.delay-create ignored: an option of IOR's DUMMY backend") for n in t.notes)
    assert translate(shlex.split("ior -z -w -r -R -b 2m -t 1m --random-offset-seed=7")).params["offsets"] == "random"


@pytest.mark.timeout(10)
@pytest.mark.parametrize("line,messages", BAD, ids=[b[0] for b in BAD])
def test_bad_lines_name_every_problem_in_one_line(line, messages):
    with pytest.raises(BadInput) as e:
        translate(shlex.split(line))
    for m in messages:
        assert m in e.value.message, e.value.message
    assert "\n" not in e.value.message


SCRIPT = """# two tests, the second inherits the first's settings
IOR START
    api=POSIX
    blockSize=64k   # per task
    transferSize=16k
    filePerProc=1
RUN
    api=MPIIO, filePerProc=0
    repetitions=2
RUN
IOR STOP
"""


@pytest.mark.timeout(10)
def test_script_runs_one_test_per_run_with_the_settings_in_force(tmp_path):
    script = tmp_path / "s.ior"
    script.write_text(SCRIPT + "blockSize=1g\n")  # after IOR STOP: ignored, as IOR does
    t = translate(["ior", "-f", str(script), "-o", str(tmp_path / "f")])
    assert [(x.params["api"], x.params["strategy"], x.params["block-size"], x.repetitions) for x in t.tests] == \
        [("posix", "split", "64k", 1), ("mpiio", "independent", "64k", 2)]
    assert all(x.params["dir"] == str(tmp_path) for x in t.tests)
    script.write_text("IOR START\nblockSize=8k\ntransferSize=4k\nRUN\nRUN\nsegmentCount=2\nIOR STOP\n")
    t = translate(["ior", "-f", str(script)])
    # two RUNs in a row repeat the test; a directive after a RUN starts the next
    assert [x.params["segments"] for x in t.tests] == ["1", "1", "2"]


TRANSLATE_UNDER_1_GIB = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))   # unfixed, /dev/zero is a MemoryError, not the OOM killer
from clusterbench.errors import BadInput
from clusterbench.tools.ior_args import translate
try:
    translate(sys.argv[1:])
except BadInput as e:
    print(e)
"""


def test_a_script_or_hints_file_that_is_no_small_regular_file_is_refused_unread(tmp_path):
    """ior -f /dev/zero was read until the OOM killer ended it (21 GiB), a
    FIFO with no writer blocked for ever, and so did the hints file's."""
    import os
    import subprocess
    import sys

    fifo, big = tmp_path / "fifo", tmp_path / "big.ior"
    os.mkfifo(fifo)
    big.write_text("IOR START\n" + "# " + "x" * (1 << 20) + "\nRUN\nIOR STOP\n")
    for args, why in ((["-f", "/dev/zero"], "-f /dev/zero: cannot read the script: not a regular file"),
                      (["-f", str(fifo)], "cannot read the script: not a regular file"),
                      (["-f", str(big)], "cannot read the script: larger than 1 MiB"),
                      (["-a", "MPIIO", "-O", "mpiio.hintsFileName=/dev/zero"],
                       "--mpiio.hintsFileName /dev/zero: cannot read it: not a regular file")):
        r = subprocess.run([sys.executable, "-c", TRANSLATE_UNDER_1_GIB, "ior", *args, "-o", str(tmp_path / "f")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and why in r.stdout, (args, r.stdout, r.stderr[-500:])


# ---- real runs -------------------------------------------------------------------------------
MIB = 1048576
SUMMARY_COLUMNS = ["Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)", "Mean(OPs)",
                   "StdDev", "Mean(s)", "Stonewall(s)", "Stonewall(MiB)", "Test#", "#Tasks", "tPN", "reps", "fPP",
                   "reord", "reordoff", "reordrand", "seed", "segcnt", "blksiz", "xsize", "aggs(MiB)", "API", "RefNum"]


def parse_summary(text: str) -> list[dict]:
    """IOR 4's 'Summary of all tests:' table: a header of 27 names, one row per test and operation."""
    lines = text.splitlines()
    i = lines.index("Summary of all tests:")
    assert lines[i + 1].split() == SUMMARY_COLUMNS
    rows = []
    for line in lines[i + 2:]:
        if line.startswith("Finished"):
            break
        cells = line.split()
        assert len(cells) == 27, line
        rows.append(dict(zip(["op", *SUMMARY_COLUMNS[1:]], cells)))
    return rows


def check_default(out: str, exp: dict, ranks: int) -> list[dict]:
    lines = out.splitlines()
    assert lines[0] == "IOR-4.0.0: MPI Coordinated Test of Parallel I/O"
    assert lines[1].startswith("Began               : ") and lines[-1].startswith("Finished            : ")
    assert lines.count("Options: ") == exp.get("tests", 1) and lines.count("Results: ") == exp.get("tests", 1)
    results = [line.split() for line in lines if re.match(r"^(write|read) +\d", line) and len(line.split()) == 11]
    assert len(results) == sum(exp["reps_of"]) * len(exp["ops"])
    assert ("Max Write:" in out) == (exp.get("verbose", False) and "write" in exp["ops"])
    rows = parse_summary(out)
    assert [r["op"] for r in rows] == exp["ops"] * exp.get("tests", 1)
    for r in rows:
        assert float(r["Max(MiB)"]) >= float(r["Mean(MiB)"]) >= float(r["Min(MiB)"]) > 0
        assert float(r["Max(OPs)"]) >= float(r["Min(OPs)"]) > 0
        assert int(r["#Tasks"]) == ranks and int(r["tPN"]) == ranks
        assert int(r["reps"]) == exp["reps_of"][int(r["Test#"])]
        assert (int(r["fPP"]), r["API"]) == (exp["fpp"], exp["api"])
        assert int(r["blksiz"]) == exp["block"] and int(r["xsize"]) == exp["xfer"]
        agg_mib = round(exp["block"] * exp.get("seg", 1) * ranks / MIB, 1)
        assert float(r["aggs(MiB)"]) == pytest.approx(agg_mib, abs=0.05)
        assert int(r["RefNum"]) == exp.get("refnum", 0)
    return rows


def check_json(out: str, exp: dict, ranks: int) -> None:
    doc = json.loads(out)
    assert doc["Version"] == "4.0.0" and len(doc["tests"]) == exp.get("tests", 1)
    for test in doc["tests"]:
        assert test["Options"]["tasks"] == ranks
        assert {r["access"] for r in test["Results"]} == set(exp["ops"])
    assert [s["operation"] for s in doc["summary"]] == exp["ops"] * exp.get("tests", 1)
    for s in doc["summary"]:
        assert s["numTasks"] == ranks and s["blockSize"] == exp["block"] and s["filePerProc"] == exp["fpp"]
        assert s["bwMaxMIB"] >= s["bwMinMIB"] > 0 and s["xsizeMiB"] > 0


def check_csv(out: str, exp: dict, ranks: int) -> None:
    lines = out.splitlines()
    assert lines[0] == ("access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),"
                        "numTasks,iter")
    rows = [line.split(",") for line in lines[1:]]
    assert len(rows) == sum(exp["reps_of"]) * len(exp["ops"])
    for r in rows:
        assert r[0] in exp["ops"] and float(r[1]) > 0 and int(r[10]) == ranks and float(r[4]) == exp["block"] / 1024


W, WR = ["write"], ["write", "read"]
P64 = {"block": 65536, "xfer": 16384}


def e(ops=WR, fpp=0, api="POSIX", reps=(1,), **kw):
    return {"ops": ops, "fpp": fpp, "api": api, "reps_of": list(reps), **P64, **kw}


# option spellings (-zk, -z-k, -b64k, -b=64k) are proven by the parser tests above; a run each
# here would repeat them at half a second of two ranks apiece
RUNS = [
    (2, "-a POSIX -b 64k -t 16k", e()),
    (2, "-a POSIX -b 64k -t 16k -F", e(fpp=1)),
    (2, "-a POSIX -b 64kb -t 16KiB -F", e(fpp=1)),   # IOR reads the first letter: 64 KiB, 16 KiB
    (2, "-a MPIIO -b 64k -t 16k", e(api="MPIIO")),
    (2, "-a MPIIO -b 64k -t 16k -F", e(api="MPIIO", fpp=1)),
    (2, "-a MPIIO -c -b 64k -t 16k", e(api="MPIIO")),
    (2, "-a POSIX -c -b 64k -t 16k", e()),
    (2, "-w -b 64k -t 16k", e(ops=W)),
    (2, "-r -b 64k -t 16k", e(ops=["read"])),
    (2, "-wr -C -b 64k -t 16k -F", e(fpp=1)),
    (2, "-w -r -Z -X 7 -F -b 64k -t 16k", e(fpp=1)),
    (2, "-Z -X -3 -i 2 -F -b 64k -t 16k", e(fpp=1, reps=(2,))),
    (2, "-m -i 2 -F -b 64k -t 16k", e(fpp=1, reps=(2,))),
    (2, "-e -b 64k -t 16k", e()),
    (2, "-Y -b 64k -t 16k -F", e(fpp=1)),
    (2, "-z -b 64k -t 16k -F", e(fpp=1)),
    (2, "-s 3 -b 32k -t 8k", e(block=32768, xfer=8192, seg=3)),
    (2, "-W -w -b 64k -t 16k", e(ops=W)),
    (2, "-w -r -R -b 64k -t 16k", e()),
    (2, "-r -R -G 5 -b 64k -t 16k", e(ops=["read"])),
    (2, "-O summaryFormat=JSON -b 64k -t 16k", e(fmt="json")),
    (2, "-O summaryFormat=CSV,repetitions=2 -b 64k -t 16k", e(fmt="csv", reps=(2,))),
    (2, "-O blockSize=64k,transferSize=16k,filePerProc=1", e(fpp=1)),
    (2, "--mpiio.showHints -a MPIIO -b 64k -t 16k", e(api="MPIIO")),
    (2, "-v -b 64k -t 16k", e(verbose=True)),
    (2, "-vv -g -k -K -j 5 -x -u -l t -A 42 -b 64k -t 16k", e(verbose=True, refnum=42)),
    (2, "-f SCRIPT", e(fpp=None, api=None, tests=2, reps=(1, 2))),
    (2, "-f SCRIPT -O summaryFormat=JSON", e(fpp=None, api=None, tests=2, reps=(1, 2), fmt="json")),
    (2, "-d 0 -i 2 -b 64k -t 16k", e(reps=(2,))),
    (2, "-N 2 -b 64k -t 16k", e()),
    (2, "-Q 1 -C -b 64k -t 16k -F", e(fpp=1)),
    (3, "-a POSIX -b 64k -t 16k -F -C -e -i 2", e(fpp=1, reps=(2,))),
    (3, "-a MPIIO -c -b 48k -t 16k -s 2", e(api="MPIIO", block=49152, seg=2)),
    (3, "-a MPIIO -b 64k -t 16k -O summaryFormat=JSON", e(api="MPIIO", fmt="json")),
    (3, "-Z -X 11 -F -w -r -R -b 64k -t 16k", e(fpp=1)),
    (3, "-m -i 3 -F -b 32k -t 8k", e(fpp=1, reps=(3,), block=32768, xfer=8192)),
    (3, "-z -b 64k -t 16k -F -O summaryFormat=CSV", e(fpp=1, fmt="csv")),
    (3, "-w -Y -b 64k -t 16k", e(ops=W)),
    (3, "-a POSIX -b 64k -t 16k -v", e(verbose=True)),
    (3, "-f SCRIPT", e(fpp=None, api=None, tests=2, reps=(1, 2))),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ranks,line,exp", RUNS, ids=[f"{r} ranks: {line}" for r, line, _ in RUNS])
def test_ior_line_runs_and_prints_iors_output(cli, mpiexec, tmp_path, ranks, line, exp):
    target = tmp_path / "target"
    target.mkdir()
    args = shlex.split(line)
    if "SCRIPT" in args:
        script = tmp_path / "tests.ior"
        script.write_text(SCRIPT)
        args[args.index("SCRIPT")] = str(script)
    r = cli("ior", "--quiet", "mpiexec", "-n", str(ranks), "ior", *args, "-o", str(target / "testFile"))
    assert r.status == 0, r.stderr
    fmt = exp.get("fmt", "default")
    if exp["api"] is None:  # the script: test 0 POSIX file per process, test 1 MPIIO shared
        if fmt == "json":
            doc = json.loads(r.stdout)
            assert [(s["API"], s["filePerProc"]) for s in doc["summary"]] == [("POSIX", 1)] * 2 + [("MPIIO", 0)] * 2
        else:
            rows = parse_summary(r.stdout)
            expected = [("POSIX", "1", "1")] * 2 + [("MPIIO", "0", "2")] * 2
            assert [(x["API"], x["fPP"], x["reps"]) for x in rows] == expected
    elif fmt == "json":
        check_json(r.stdout, exp, ranks)
    elif fmt == "csv":
        check_csv(r.stdout, exp, ranks)
    else:
        check_default(r.stdout, exp, ranks)
    assert tree(target) == []


@pytest.mark.timeout(60)
def test_refused_line_names_every_unsupported_option_and_leaves_nothing(cli, tmp_path):
    r = cli("ior", "--np", "2", "-T", "5", "-M", "50%", "--mpiio.useFileView", "-E", "-K", "-q",
            "-o", str(tmp_path / "f"))
    assert r.status == 2
    line = r.stderr.strip().splitlines()[-1]
    for opt in ("-T:", "-M:", "--mpiio.useFileView:", "-E:", "-q: unknown option"):
        assert opt in line, line
    assert "-K" not in line  # IOR's keepFileWithError is accepted (a note)
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_a_rank_count_that_disagrees_names_where_the_lines_count_came_from(cli, tmp_path):
    """IOR's -N 3 against --np 2 was said as "the launcher's -n 3", an
    option the line never had."""
    r = cli("ior", "--np", "2", "-N", "3", "-o", str(tmp_path / "f"))
    assert r.status == 2 and "--np 2 and the line's 3 ranks (its launcher's -n, or IOR's -N) disagree" in r.stderr
    assert tree(tmp_path) == []


def run_records(store_url: str, stdout_err: str) -> list[dict]:
    from clusterbench.store.opening import open_store
    from clusterbench.report.data import load_run
    run_id = int(re.search(r"stored as run (\d+)", stdout_err).group(1))
    run = load_run(open_store(store_url), run_id)
    return [s.record for step in run["steps"] for s in step["samples"]]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ranks,seed", [(2, 0), (3, 7), (3, 11)])
def test_random_task_reordering_reads_the_file_ior_would_pick(cli, mpiexec, store_url, tmp_path, ranks, seed):
    """-Z -X S: rank r reads the file of (r + rand() % N) after srand(r + S),
    as IOR; the data read is verified against that writer's stamp."""
    libc = ctypes.CDLL("libc.so.6")
    libc.srand(0 + seed)
    expected = libc.rand() % ranks
    target = tmp_path / "t"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", str(ranks), "ior", "-Z", "-X", str(seed), "-F", "-w", "-r", "-R",
            "-b", "64k", "-t", "16k", "-o", str(target / "f"))
    assert r.status == 0, r.stderr
    (read,) = [x for x in run_records(store_url, r.stderr) if x["phase"] == "read"]
    assert read["rank0_read_data_of_rank"] == expected and read["verify_ok"] is True


@pytest.mark.timeout(120)
def test_g_makes_every_rank_wait_for_the_slowest_open_inside_its_time(cli, mpiexec, store_url, tmp_path):
    """IOR -g (intraTestBarriers): a barrier after the open and one after the
    transfers, inside the timing, so a slow open holds every rank. With rank
    1's open made 1 s slower (a test hook), rank 0's own time holds the wait.
    -g was noted as changing nothing, and rank 0 wrote its file meanwhile."""
    target = tmp_path / "t"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", "2", "ior", "-g", "-F", "-w", "-b", "64k", "-t", "16k", "-o", str(target / "f"),
            env={"CBK_TEST_PARIO_SLOW_OPEN_MS": "1000"})
    assert r.status == 0, r.stderr
    (write,) = [x for x in run_records(store_url, r.stderr) if x["phase"] == "write"]
    assert write["open_s_max"] >= 1.0                  # the hook slowed rank 1's open
    # rank 0 began its open at most a fraction of a second before rank 1 did, and passed the barrier after it
    assert write["rank_seconds_min"] >= 0.5, write
    assert tree(target) == []


@pytest.mark.timeout(120)
def test_constant_reordering_reads_the_next_ranks_file(cli, mpiexec, store_url, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", "3", "ior", "-C", "-F", "-w", "-r", "-R", "-b", "64k", "-t", "16k",
            "-o", str(target / "f"))
    assert r.status == 0, r.stderr
    (read,) = [x for x in run_records(store_url, r.stderr) if x["phase"] == "read"]
    assert read["rank0_read_data_of_rank"] == 1 and read["verify_ok"] is True


@pytest.mark.timeout(120)
def test_multifile_gives_every_repetition_its_own_files(cli, mpiexec, tmp_path):
    """-m: IOR appends the repetition to the file name; the listing hook
    shows each repetition's files as they were on disk."""
    target = tmp_path / "t"
    target.mkdir()
    listing = tmp_path / "listing.txt"
    r = cli("ior", "--quiet", "mpiexec", "-n", "2", "ior", "-m", "-i", "3", "-F", "-b", "64k", "-t", "16k",
            "-o", str(target / "f"), env={"CBK_TEST_LISTING": str(listing)})
    assert r.status == 0, r.stderr
    names = sorted((int(rep), name) for rep, name, _ in (line.split() for line in listing.read_text().splitlines()))
    assert names == [(rep, f"data.{rank:08d}.{rep}") for rep in range(3) for rank in range(2)]
    assert tree(target) == []


@pytest.mark.timeout(120)
def test_stonewalling_stops_at_the_deadline_and_wear_out_evens_the_ranks(cli, mpiexec, store_url, tmp_path):
    """-D 1 with stoneWallingWearOut=1: a write that cannot finish in a second
    (fsync after every 64 KiB) stops after it, every rank then goes on to the
    largest count any rank reached, and the read reads what was written."""
    target = tmp_path / "t"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", "2", "ior", "-D", "1", "-O", "stoneWallingWearOut=1", "-b", "1g", "-t", "64k",
            "-Y", "-F", "-w", "-r", "-R", "-o", str(target / "f"))
    assert r.status == 0, r.stderr
    recs = {x["phase"]: x for x in run_records(store_url, r.stderr)}
    write, read = recs["write"], recs["read"]
    assert write["stonewall_s"] > 1.0 and write["transfers_min"] == write["transfers_max"]
    assert 0 < write["bytes"] < 2 * 1024 ** 3 and write["bytes"] == 2 * write["transfers_max"] * 65536
    assert read["bytes"] <= write["bytes"] and read["verify_ok"] is True
    (row, _) = parse_summary(r.stdout)
    assert float(row["Stonewall(s)"]) >= 1.0 and float(row["Stonewall(MiB)"]) > 0
    # IOR's lines with wear-out: one before each result row, and the first write's count at the test's end
    lines = r.stdout.splitlines()
    before = lines[next(i for i, line in enumerate(lines) if line.startswith("write "))  - 1]
    m = re.fullmatch(r"stonewalling pairs accessed min: (\d+) max: (\d+) -- min data: [\d.]+ GiB mean data: [\d.]+ "
                     r"GiB time: ([\d.]+)s", before)
    assert m and (int(m[1]), int(m[2])) == (write["stonewall_transfers_min"], write["transfers_max"]), before
    assert int(m[1]) <= int(m[2]) and float(m[3]) >= 1.0
    assert f"Pairs deadlineForStonewallingaccessed: {write['transfers_max']}" in lines
    assert tree(target) == []


@pytest.mark.timeout(120)
def test_with_a_summary_file_iors_stonewall_lines_stay_on_stdout_as_iors_do(cli, mpiexec, tmp_path):
    """IOR prints its stonewalling lines on its log (stdout) and its results
    into -O summaryFile: the file a script reads holds no line IOR's lacks."""
    target, summary = tmp_path / "t", tmp_path / "summary.txt"
    target.mkdir()
    r = cli("ior", "--quiet", "mpiexec", "-n", "2", "ior", "-w", "-D", "30", "-O", "stoneWallingWearOut=1",
            "-b", "64k", "-t", "16k", "-O", f"summaryFile={summary}", "-o", str(target / "f"))
    assert r.status == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == f"Writing output to {summary}"
    assert re.fullmatch(r"stonewalling pairs accessed min: 4 max: 4 -- min data: 0\.0 GiB mean data: 0\.0 GiB "
                        r"time: [\d.]+s", out[1]) and out[2:] == ["Pairs deadlineForStonewallingaccessed: 4"]
    text = summary.read_text()
    assert "pairs accessed" not in text and "Pairs" not in text and "Summary of all tests:" in text
    assert tree(target) == []


@pytest.mark.timeout(120)
def test_hints_file_reaches_mpi_file_open_and_show_hints_prints_them(cli, mpiexec, store_url, tmp_path):
    """--mpiio.hintsFileName: IOR_HINT__MPI__ lines become MPI_File_open's
    info; the library's answer (MPI_File_get_info) shows ROMIO took them."""
    hints = tmp_path / "hints"
    hints.write_text("IOR_HINT__MPI__romio_cb_write=enable\n# a comment\nIOR_HINT__MPI__cb_buffer_size=2097152\n")
    target = tmp_path / "t"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", "2", "ior", "-a", "MPIIO", "-c", f"--mpiio.hintsFileName={hints}",
            "--mpiio.showHints", "-b", "64k", "-t", "16k", "-o", str(target / "f"))
    assert r.status == 0, r.stderr
    passed = "\nhints passed to MPI_File_open() {\n\tromio_cb_write = enable\n\tcb_buffer_size = 2097152\n}\n"
    assert r.stdout.count(passed) == 2  # before the write row and before the read row, as IOR prints at each open
    returned = r.stdout.split("hints returned from opened file {\n")[1].split("}")[0]
    assert "\tromio_cb_write = enable\n" in returned and "\tcb_buffer_size = 2097152\n" in returned
    (write,) = [x for x in run_records(store_url, r.stderr) if x["phase"] == "write"]
    assert "cb_buffer_size=2097152" in write["mpi_hints_in_effect"].split(";")
    bad = tmp_path / "gpfs"
    bad.write_text("IOR_HINT__GPFS__hint=1\n")
    with pytest.raises(BadInput, match="only IOR_HINT__MPI__"):
        translate(["ior", "-a", "MPIIO", f"--mpiio.hintsFileName={bad}"])


@pytest.mark.timeout(120)
def test_an_ior_line_says_on_stderr_what_its_figures_cannot_claim_and_keeps_stdout_iors(cli, mpiexec, tmp_path):
    """`clusterbench ior ... -F` without -e: IOR's table reported a write
    several times the disk's rate and nothing said it never reached the
    disk; show and report carried "no fsync: the data may still be in a
    cache", the command itself did not (and the docs said our table came first)."""
    target = tmp_path / "target"
    target.mkdir()
    r = cli("ior", "mpiexec", "-n", "2", "ior", "-a", "POSIX", "-b", "256k", "-t", "64k", "-i", "2", "-F",
            "-o", str(target / "testFile"))
    assert r.status == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
    assert "warning: test 0: 2 of 2 repetitions: no fsync: the data may still be in a cache when the timing ends" \
        in warnings, r.stderr
    run_id = re.search(r"stored as run (\d+) in \S+ \(clusterbench show (\d+): ", r.stderr).groups()
    assert run_id[0] == run_id[1]
    shown = cli("show", run_id[0]).stdout
    assert all(w.split(": ", 2)[2] in " ".join(shown.split()) for w in warnings)   # the warnings show prints
    assert "warning" not in r.stdout and r.stdout.startswith("IOR-4.0.0: MPI Coordinated Test of Parallel I/O")
    check_default(r.stdout, e(fpp=1, reps=(2,), block=262144, xfer=65536), 2)
    quiet = cli("ior", "--quiet", "mpiexec", "-n", "2", "ior", "-a", "POSIX", "-b", "256k", "-t", "64k", "-F",
                "-o", str(target / "testFile"))
    assert quiet.status == 0 and "warning" not in quiet.stderr, quiet.stderr
