"""What a failed launch said, as the one line a step stores and shows."""
from __future__ import annotations

import re

from clusterbench.output.number_ranges import ranges_text
from clusterbench.results.records import error_message, parse_line

# Longer than any sentence a launcher prints for one failure; a runaway
# stderr is not stored whole.
MESSAGE_MAX_CHARS = 1000


# A line of Hydra's call trace: "[mpiexec@vm] main (.../mpiexec.c:270): process
# manager error ...", "[proxy:0:0@h01] HYDU_sock_write (utils/sock/sock.c:254): ...".
# It says where in Hydra the failure surfaced; what caused it (ssh could not
# reach a node) is the line before the trace, from the program Hydra started.
_HYDRA_TRACE = re.compile(r"^\[[^\]\s]*@[^\]\s]*\] \w+ \([^()]*:\d+\): ")


# A launch's note of where its ranks go, written before them for a message naming a silent rank's
# host (qrsh: Grid Engine's $PE_HOSTFILE, granted on the execution host): never the launch's failure
PLACEMENT_NOTE = "[clusterbench placement] "


def _is_rule(line: str) -> bool:
    return len(line) >= 3 and set(line) <= set("-=*#")


def failure_line(stderr: str, status: int) -> str:
    """cbk's error record when it wrote one. Else the launcher's own words:
    the first block framed by rule lines (Open MPI's help banners, whose
    first line is a row of dashes), its sentences joined; else the last
    line that is not Hydra's call trace (the cause, e.g. ssh's "Could not
    resolve hostname h09", not "process manager error waiting for
    completion"), else the last line; else the exit status."""
    msg = error_message(stderr)
    if msg:
        return msg
    lines = [line.strip() for line in stderr.splitlines() if not line.startswith(PLACEMENT_NOTE)]
    if any(_is_rule(line) for line in lines):
        block: list[str] = []
        inside = False
        for line in lines:
            if _is_rule(line):
                if inside and block:
                    break
                inside = True
            elif inside and line:
                block.append(line)
        if block:
            # a rank that failed before the launcher ended the job said why above its banner (Open MPI:
            # a node's loader missing a library, exit 127, then "prterun detected that one or more
            # processes exited with non-zero status")
            said = rank_said(stderr)
            return (" ".join(" ".join(line.split()) for line in block)
                    + (f"; before it a rank said: {said}" if said else ""))[:MESSAGE_MAX_CHARS]
    words = [line for line in lines if line and not _is_rule(line)]
    said = [line for line in words if not _HYDRA_TRACE.match(line)] or words
    return said[-1][:MESSAGE_MAX_CHARS] if said else f"exit status {status}"


# cbk's note of a long wait (kernels/core/patient_wait.c): a rank past CBK_WAIT_NOTE_S says whom it waits on,
# or, held in a timed loop (its stall watch), in which part and with whom; anywhere in a line, as srun
# --label puts "3: " before it
_WAITED_ON = re.compile(r"cbk: (rank \d+ \([^)]*\)) has waited ([\d.]+) s (.+)$", re.M)


# what a wait with no peer (a barrier, a collective) says it is of: "of 3 ranks on h01, h02, h03", "of 300 ranks on
# more than 16 hosts" (names left out), "of 3 ranks" (the set-up's, before any host is known)
_OF_EVERY_RANK = re.compile(r"of (\d+) ranks(?: on (more than \d+ hosts|[^\s,:]+(?:, [^\s,:]+)*))?")
_RANK = re.compile(r"rank (\d+) \(([^)]*)\)")


def _placed(silent: list[int], placement, said: list[str]) -> str:
    """The silent ranks by the host the launcher placed each on, "1-2 (placed on h02), 5 (placed on h03)";
    the ranks alone where the placement (launch/rank_placement.py) is not known, or knows no host of one,
    and where their hosts are all in `said` (named after them: "nor any rank on h03")."""
    hosts = [placement.host_of(r) for r in silent] if placement else [None]
    if None in hosts or set(hosts) <= set(said):
        return ranges_text(silent)
    by_host: dict[str, list[int]] = {}
    for r, host in zip(silent, hosts):
        by_host.setdefault(host, []).append(r)
    return ", ".join(f"{ranges_text(ranks)} (placed on {host})" for host, ranks in by_host.items())


def _silent(last: dict[str, tuple[str, str]], placement=None) -> str:
    """The ranks that said nothing while the others said they wait in a
    barrier or collective of every rank: the ones holding them (stopped,
    or busy where no wait is watched), a rank's own note cannot know which
    (kernels/core/patient_wait.h). Each with the host the launcher placed
    it on (placement: launch/rank_placement.py's Placement): a rank
    dead before MPI_Init names none, and the others' notes of MPI_Init are
    made before any host is known. With them each host none of whose
    ranks said anything, where the notes name every host. "" when every
    rank spoke or no note was of every rank."""
    of = [_OF_EVERY_RANK.search(on) for _, on in last.values()]
    of = [m for m in of if m]
    if not of:
        return ""
    size = max(int(m.group(1)) for m in of)
    spoke = {int(n): host for n, host in (_RANK.match(r).groups() for r in last)}
    silent = [r for r in range(size) if r not in spoke]
    if not silent:
        return ""
    hosts = next((m.group(2).split(", ") for m in of if m.group(2) and not m.group(2).startswith("more than")), [])
    quiet_hosts = [h for h in hosts if h not in spoke.values()]
    said = f"rank{'s' if len(silent) > 1 else ''} {_placed(silent, placement, quiet_hosts)} said nothing"
    if quiet_hosts:
        said += f", nor any rank on {', '.join(quiet_hosts)}"
    return f"{said}: the likely holder{'s' if len(silent) > 1 else ''} of the others' waits"


def waits_named(stderr: str, placement=None) -> str:
    """What each rank that waited long said last of whom it waits on,
    "rank 0 (h01) waited 30 s on rank 2 (h03); ..."; "" when none did. A
    step that timed out or stalled then names the node it waited on. Where
    ranks waited in a barrier or collective (no peer of their own), first
    the ranks that said nothing, "rank 2 said nothing, nor any rank on h03:
    the likely holder of the others' waits"; placement (Launcher.placement)
    names the host each silent rank was placed on."""
    last = {rank: (seconds, on) for rank, seconds, on in _WAITED_ON.findall(stderr)}
    waits = [f"{rank} waited {seconds} s {on}" for rank, (seconds, on) in last.items()]
    holders = _silent(last, placement)
    return "; ".join(([holders] if holders else []) + waits)


# a line cbk wrote of its own, anywhere in a line (srun --label puts "2: " before it)
_CBK_SAID = re.compile(r"(?:^|\s)(cbk: .+)$", re.M)


def last_cbk_line(stderr: str) -> str:
    """The last line cbk wrote that is not a note of a long wait; "" when none. A rank that
    fails before MPI_Init (h03's cbk exiting 1 there) says why on stderr, and Hydra then
    waits for ever on the ranks its peers hold in MPI_Init, where no note is made: a step
    ended at its time limit had only "timed out" to say, the failure of its node unsaid."""
    lines = [m.group(1).strip() for m in _CBK_SAID.finditer(stderr) if not _WAITED_ON.search(m.group(1))]
    return lines[-1][:MESSAGE_MAX_CHARS] if lines else ""


def last_said(stderr: str) -> str:
    """The last line of stderr that is neither a record (cbk's "stopped" as the stop reached it)
    nor a note of a long wait: what a rank that never started cbk said, "/opt/cbk: error while
    loading shared libraries: libmpi.so.12: cannot open shared object file"; "" when none."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip() and not parse_line(line) and not _WAITED_ON.search(line)]
    return lines[-1][:MESSAGE_MAX_CHARS] if lines else ""


def rank_said(stderr: str) -> str:
    """What a rank said last in its own words, above any banner of the launcher's (Open MPI's,
    framed by rules): cbk's last line, else the last line that is no record, no note of a wait
    and not a launcher's own, tagged "[host:pid]" or "[mpiexec@host]" (Open MPI's "[vm:3213]
    PMIX ERROR: ..."); "" when none."""
    lines = stderr.splitlines()
    above = lines[:next((i for i, line in enumerate(lines) if _is_rule(line.strip())), len(lines))]
    return last_cbk_line("\n".join(above)) or last_said("\n".join(
        line for line in above if not line.lstrip().startswith("[")))


# Open MPI's words when it ended a job because a rank exited badly (prterun 5, mpirun 4): it sent
# the other ranks SIGTERM, which their cbk reports as a stop ("stopped" record), though no one asked
_JOB_ENDED_BY_A_RANK = re.compile(r"detected that one or more processes exited with non-zero status|"
                                  r"\d+ processe?s? returned\s+a non-zero exit code")


def launcher_ended_the_job(stderr: str) -> bool:
    """Whether the launcher ended the job itself, for a rank that exited badly: the stop signal
    the other ranks then say they ended by is the launcher's, not a user's or a batch system's."""
    return bool(_JOB_ENDED_BY_A_RANK.search(stderr))


# cbk's watchdog line (kernels/core/finalize.c)
_FINALIZE_STALL = re.compile(r"^cbk: rank (\d+): MPI_Finalize did not return within ([\d.e+]+) s", re.M)


def finalize_stall(stderr: str) -> str | None:
    """When cbk's watchdog ended ranks stuck in MPI_Finalize (after every
    record was written), what to say about it; None when it did not. The
    launcher may then fail (Hydra: "process manager error waiting for
    completion"), though the measurement is whole."""
    found = _FINALIZE_STALL.findall(stderr)
    if not found or error_message(stderr):
        return None
    ranks = sorted({int(r) for r, _ in found})
    return (f"MPI_Finalize did not return within {found[0][1]} s on rank(s) {', '.join(map(str, ranks))}; "
            f"cbk ended them after their records were written (the environment variable CBK_FINALIZE_TIMEOUT_S sets how long it waits)")
