"""`clusterbench import` of Himeno and STREAM logs (tests/fixtures/import,
made as tests/fixtures/README says): each run a himeno or stream step in
the kernels' vocabulary where it is the same measurement, its figures and
what the file states kept; a failed check, a run cut before its results
and an implausible figure refused in one line, nothing stored. All parsed
in-process: the round trip with `clusterbench run` is in
test_import_roundtrip.py."""
from __future__ import annotations

import pytest

from conftest import REPO

from clusterbench.errors import BadInput
from clusterbench.importers.import_runs import parse_bytes, parse_file

FIXTURES = REPO / "tests" / "fixtures" / "import"
MIB = 2**20


def one(name: str, data: bytes | None = None):
    (run,) = parse_file(str(FIXTURES / name)) if data is None else parse_bytes(name, data)
    (step,) = run.steps
    return run, step


def refusal(name: str, data: bytes) -> str:
    with pytest.raises(BadInput) as e:
        parse_bytes(name, data)
    assert "\n" not in e.value.message
    return e.value.message


def test_himenobmtxpa_mflops_scaled_to_the_points_it_updates_and_kept_as_printed():
    """himenoBMTxpa updates (I-2)(J-2)(K-2) points of its grid but counts 34 flops on (I-3)(J-3)(K-3):
    its figure is 8.8 % low at XS against the kernel's and the static version's count."""
    run, step = one("himeno-xpa-XS.txt")
    (s,) = step.samples
    assert (run.tool, run.version, step.kernel, step.ranks) == ("Himeno", "himenoBMTxpa", "himeno", 1)
    assert step.params == {"size": "XS", "mode": "time", "seconds": "0.5"}
    assert (s.phase, s.condition, s.unit) == ("jacobi", "time", "MFLOPS")
    assert s.value == pytest.approx(1850.173853 * 30 * 30 * 62 / (29 * 29 * 61))
    rec = s.record
    assert rec["mflops_reference_count"] == 1850.173853 and "mflops_printed" not in rec
    assert (rec["points"], rec["reference_points"], rec["grid"]) == (55800, 51301, "32x32x64")
    assert (rec["iterations"], s.seconds, rec["gosa"], rec["calibration_gosa"]) == (1276, 1.202937, 1.501541e-06,
                                                                                   6.227474e-03)
    assert any("counts 34 flops on 51,301 points, not the 55,800 it updates" in n for n in run.notes), run.notes
    # the target it ran for: 0.5 s, read back from 1276 sweeps after a 3-sweep rehearsal of 0.001175 s
    assert any("its target was changed" in n and "taken as 0.5 s" in n for n in run.notes)


def test_himeno_size_l_asked_at_the_prompt_is_the_l_grid():
    """Run without an argument, himenoBMTxpa lists the sizes and asks ("Grid-size = "): a user's log
    holds that list before the run's lines, and its grid line says which size was typed."""
    run, step = one("himeno-xpa-L-size-prompt.txt")
    (s,) = step.samples
    assert step.params == {"size": "L", "mode": "time", "seconds": "2"} and step.name == "Himeno L"
    assert (s.record["grid"], s.record["iterations"], s.record["mflops_reference_count"]) == ("256x256x512", 6,
                                                                                            2842.788077)
    assert s.value == pytest.approx(2842.788077 * 254 * 254 * 510 / (253 * 253 * 509))


def test_himeno_static_serial_version_allocates_one_point_more_and_counts_as_the_kernel():
    """The static C version prints mimax = 33 for XS (its arrays, one point more per axis than the grid)
    and a score line without himenoBMTxpa's "using Fortran 77"; its count is the kernel's."""
    run, step = one("himeno-xps-serial-XS.txt")
    (s,) = step.samples
    assert (run.version, step.params["size"], s.record["grid"]) == ("himenoBMTxps", "XS", "32x32x64")
    assert s.value == 18714.488636 == s.record["mflops_printed"] and s.seconds == 0.202752


def test_himeno_mpi_static_counts_as_the_kernel_and_its_decomposition_is_its_ranks():
    run, step = one("himeno-mpi-static-XS-1rank.txt")
    assert (run.version, step.ranks, step.params["size"]) == ("C+MPI static arrays", 1, "XS")
    assert "decomposition" not in step.params   # one rank: the kernel's "auto" is 1x1x1
    (s,) = step.samples
    assert s.value == 6732.726495 and s.record["mflops_printed"] == 6732.726495 and s.seconds == 1.021762
    run, step = one("himeno-mpi-static-XS-1x1x2.txt")
    assert (step.ranks, step.params["decomposition"], step.name) == (2, "1x1x2", "Himeno XS 1x1x2")
    (s,) = step.samples
    assert (s.value, s.record["grid"], s.record["gosa"]) == (755.731889, "32x32x64", 2.131324e-04)


def test_himeno_mpi_dynamic_arrays_print_the_grid_itself_and_rank_0s_block_tells_which():
    """The static MPI version prints MX0 (grid + 1) as its "Sequential version array size", the
    dynamic-array one (calorie/himeno_benchmark 8ad5722) the grid: 33 and 32 for XS. Rank 0's block
    ("imax = 32 jmax = 32 kmax =33" on 1x1x2) fits only one of them."""
    data = (FIXTURES / "himeno-mpi-dynamic-XS-gosa-zero.txt").read_bytes()
    # that build's Gosa is 0 from its first sweeps: not Himeno's problem, refused (below); with a Gosa
    # its grid is read as the dynamic version's
    fixed = data.replace(b"0.003759 0.000000e+00", b"0.003759 6.231196e-03")
    run, step = one("dynamic.txt", fixed)
    assert (run.version, step.params["size"], step.ranks, step.samples[0].value) == ("C+MPI dynamic arrays", "XS",
                                                                                     2, 1163.317566)
    message = refusal("dynamic.txt", data)
    assert "line 10: Gosa 0 after the 3 rehearsal sweeps" in message, message
    # a block no split of either grid gives is refused, not guessed
    assert "fit no grid" in refusal("odd.txt", fixed.replace(b"imax = 32 jmax = 32 kmax =33",
                                                            b"imax = 32 jmax = 32 kmax =40"))


def test_himeno_fortran_axes_are_reversed_into_the_kernels_grid():
    """Fortran's first index is C's last: himenoBMTxp.f90 prints XS as mimax= 65 mjmax= 33 mkmax= 33."""
    run, step = one("himeno-f90-XS.txt")
    (s,) = step.samples
    assert (run.version, step.params["size"], s.record["grid"]) == ("Fortran 90", "XS", "32x32x64")
    assert (s.value, s.seconds, s.record["iterations"], s.record["gosa"]) == (18972.0, 0.001, 10, 5.10933856e-03)


def test_himeno_fortran_77_is_its_own_version_timed_by_cpu_time():
    """RIKEN's himenoBMTxp_s.f (Fortran 77, S): the lines of the Fortran 90 version but no clock
    tick line; its dtime is CPU time. It was read as "Fortran", the 90 version's name."""
    run, step = one("himeno-f77-S.txt")
    (s,) = step.samples
    assert (run.version, step.kernel, step.params) == ("Fortran 77", "himeno", {"size": "S", "mode": "time",
                                                                                 "seconds": "60"})
    assert (s.value, s.seconds, s.record["iterations"], s.record["grid"]) == (9154.91602, 48.0238762, 26698,
                                                                             "64x64x128")
    # single precision: 26,698 sweeps took the residual to 0; the rehearsal's 3 left 3.29e-3
    assert (s.record["gosa"], s.record["calibration_gosa"]) == (0.0, 3.28862783e-03)
    assert any("dtime: the process's CPU time" in n for n in run.notes)


def test_himeno_fortran_mpi_decomposition_is_named_in_the_kernels_axes():
    """HimenoBMTxp_f90_MPI's I-decomp splits its first axis, the long one: `2 1 1` is the kernel's
    --decomposition=1x1x2. Its array lines under the headings are not runs of their own, and the
    MPI library's warnings after the run are lines it does not read."""
    runs = parse_file(str(FIXTURES / "himeno-f90-mpi-XS-2x1x1.txt"))
    (run,) = runs
    (step,) = run.steps
    (s,) = step.samples
    assert (run.version, step.ranks, step.params) == ("Fortran+MPI", 2, {"size": "XS", "mode": "time",
                                                                          "seconds": "0.5",
                                                                          "decomposition": "1x1x2"})
    assert (s.value, s.seconds, s.record["iterations"], s.record["grid"]) == (856.69110094819018,
                                                                             0.17937994199999707, 81, "32x32x64")


def test_himeno_loop_timed_at_0_s_is_no_measurement():
    """A loop within one tick of the clock: C prints inf MFLOPS (not finite: left out), Fortran, which
    divides only `if(cpu /= 0.0)`, prints its rehearsal's figure again beside time(s) 0."""
    data = (FIXTURES / "himeno-f90-XS.txt").read_bytes()
    timed_at_0 = data.replace(b"18972.0000       time(s):   1.0000000000000000E-003",
                              b"5691.59961       time(s):   0.0000000000000000")
    assert "line 20: the loop took 0 s on its clock" in refusal("f.txt", timed_at_0)
    data = (FIXTURES / "himeno-xpa-XS.txt").read_bytes()
    message = refusal("c.txt", data.replace(b"1850.173853\tcpu : 1.202937", b"inf\tcpu : 0.000000"))
    assert "figure(s) not finite (nan, inf): not taken" in message, message


def test_stream_5_10_is_the_stream_kernels_best_rate_in_mib_per_s():
    run, step = one("stream-5.10-omp2.txt")
    assert (run.tool, run.version, step.kernel) == ("STREAM", "5.10", "stream")
    assert step.params == {"array-size": "8000000", "passes": "10", "threads": "2"}
    copy, scale, add, triad = step.samples
    assert [s.phase for s in step.samples] == ["copy", "scale", "add", "triad"]
    assert (triad.condition, triad.unit, triad.value) == ("best", "MiB/s", pytest.approx(142784.8e6 / MIB))
    assert (triad.decimal, triad.decimal_unit, triad.seconds, triad.bytes) == (142784.8, "MB/s", 0.000168, 24_000_000)
    assert (copy.bytes, copy.record["avg_time_s"], copy.record["max_time_s"]) == (16_000_000, 0.000315, 0.001674)
    rec = triad.record
    assert (rec["threads"], rec["threads_requested"], rec["passes_counted"], rec["array_elements"],
            rec["element_bytes"], rec["offset_elements"], rec["validated"]) == (2, 2, 9, 1_000_000, 8, 0, True)
    # built without OpenMP, stream.c prints no thread line: one thread
    _, serial = one("stream-5.10-serial.txt")
    assert serial.params["threads"] == "1" and "threads_requested" not in serial.samples[0].record


def test_stream_fortran_and_stream_c_5_9_tables_are_read():
    run, step = one("stream-f-5.6-omp2.txt")
    assert (run.version, step.params) == ("5.6 Fortran", {"array-size": "156250k", "passes": "10", "threads": "2"})
    assert step.samples[3].decimal == 38307.8 and step.samples[3].record["passes_counted"] == 8
    # 5.9's "Rate (MB/s)" table and "bytes per DOUBLE PRECISION word" (the public log ran Copy alone and
    # failed its check, below: here it passed)
    data = (FIXTURES / "stream-5.9-copy-failed-validation.txt").read_bytes()
    passed = data[:data.index(b"Failed Validation")] + b"Solution Validates\n"
    run, step = one("passed.txt", passed)
    (copy,) = step.samples
    assert (run.version, step.params["array-size"], copy.decimal, copy.seconds) == ("5.9", "31250k", 11024.9489,
                                                                                  0.0058)


def test_stream_mpi_is_a_stream_step_of_its_ranks_each_with_its_share_of_the_arrays():
    """stream_mpi.c (the official site's MPI version, 'Total Aggregate Array size'): 'not any known
    format'-like refusal before ('no Array size ... line'). Its rates count the aggregate arrays."""
    run, step = one("stream-mpi-1.8-2ranks.txt")
    assert (run.tool, run.version, step.kernel, step.ranks) == ("STREAM", "1.8 MPI", "stream", 2)
    # 2,000,000 elements over 2 ranks: each rank's arrays of 1,000,000 doubles are the kernel's --array-size
    assert step.params == {"array-size": "8000000", "passes": "10", "threads": "1"}
    copy, _, _, triad = step.samples
    assert (copy.decimal, copy.bytes, copy.seconds) == (190942.2, 2 * 8 * 2_000_000, 0.000168)
    assert copy.bytes / copy.seconds / 1e6 == pytest.approx(190942.2, rel=1e-2)   # the time printed to 1 us
    assert (triad.record["array_elements"], triad.record["total_array_elements"], triad.record["ranks"]) == \
        (1_000_000, 2_000_000, 2)
    assert "offset_elements" not in triad.record   # stream_mpi ignores OFFSET
    # built with -fopenmp: "Number of Threads requested for each MPI rank = 1", "... counted for rank 0 = 1"
    _, omp = one("stream-mpi-1.8-omp1-2ranks.txt")
    assert (omp.params["threads"], omp.samples[0].record["threads_requested"]) == ("1", 1)
    # the ranks' lines gone: refused in one line, not read as one rank's arrays
    data = (FIXTURES / "stream-mpi-1.8-2ranks.txt").read_bytes()
    cut = b"".join(line for line in data.splitlines(keepends=True) if b"MPI rank" not in line)
    assert "its ranks are unknown" in refusal("f.txt", cut)


@pytest.mark.parametrize("name, arrays", [("stream-5.10-omp2.txt", "22.9 MiB"),
                                          ("stream-mpi-1.8-2ranks.txt", "22.9 MiB a rank"),
                                          ("stream-f-5.6-omp2.txt", "457.8 MiB"),
                                          ("stream-5.10-float-omp2.txt", "11.4 MiB")])
def test_stream_import_says_the_cache_check_was_not_made_with_the_arrays_size(name, arrays):
    """The stream kernel warns when its three arrays fit in the last-level caches (cache bandwidth);
    an imported STREAM said nothing. Its file states no cache size and import guesses nothing of the
    host: the note says the check was not made, and the arrays' size to hold against the caches."""
    run, _ = one(name)
    (note,) = [n for n in run.notes if n.startswith("cache check not made")]
    assert f"three arrays ({arrays})" in note and "fit in the last-level caches" in note


def test_stream_of_floats_is_a_tool_step_not_the_kernels():
    """STREAM_TYPE=float moves 4 bytes an element with float arithmetic: not the kernel's doubles."""
    run, step = one("stream-5.10-float-omp2.txt")
    assert step.kernel == "mccalpin-stream" and step.params["element-bytes"] == "4"
    assert step.samples[3].bytes == 3 * 4 * 1_000_000
    assert any("not the stream kernel's arithmetic" in n for n in run.notes)


def test_stream_whose_check_failed_or_never_ran_is_refused_in_one_line():
    """A failed check means the arrays were not what the loops should have made (a corrupted
    element, here set by a debugger): the kernel stores no figure of such a run, nor does import."""
    message = refusal("f.txt", (FIXTURES / "stream-5.10-failed-validation.txt").read_bytes())
    assert "line 29: STREAM's check failed ('Failed Validation on array a[]')" in message, message
    assert "line 26: STREAM's check failed" in refusal("f.txt", (FIXTURES /
                                                            "stream-5.9-copy-failed-validation.txt").read_bytes())
    good = (FIXTURES / "stream-5.10-serial.txt").read_bytes()
    assert "ends before STREAM's check" in refusal("f.txt", good[:good.index(b"Solution Validates")])


@pytest.mark.parametrize("name,cut_at", [("stream-5.10-omp2.txt", b"Function"),
                                         ("himeno-xpa-L-size-prompt.txt", b" Loop executed"),
                                         ("himeno-mpi-static-XS-1x1x2.txt", b"cpu : "),
                                         ("himeno-f90-XS.txt", b"  Loop executed")])
def test_a_run_killed_before_its_results_is_refused_in_one_line(name, cut_at):
    data = (FIXTURES / name).read_bytes()
    assert "the run ends before its results" in refusal(name, data[:data.index(cut_at)])


def test_a_job_log_of_stream_then_himeno_twice_keeps_each_run():
    stream, himeno = ((FIXTURES / n).read_bytes() for n in ("stream-5.10-omp2.txt", "himeno-xpa-XS.txt"))
    runs = parse_bytes("job.log", b"+ module load gcc\n" + stream + b"srun: job step done\n" + himeno + himeno)
    assert sorted((r.tool, r.steps[0].kernel) for r in runs) == [("Himeno", "himeno"), ("Himeno", "himeno"),
                                                                 ("STREAM", "stream")]
    assert any("the file holds the output of Himeno, STREAM" in n for n in runs[0].notes), runs[0].notes


def test_a_stream_figure_beyond_any_memory_is_refused_naming_its_line():
    data = (FIXTURES / "stream-5.10-serial.txt").read_bytes()
    row = next(line for line in data.split(b"\n") if line.startswith(b"Triad:"))
    message = refusal("f.txt", data.replace(row, b"Triad:     99999999999.9     0.000389     0.000320     0.000636"))
    assert "line 27: triad" in message and "beyond any link or memory ever built" in message, message
