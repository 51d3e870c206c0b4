#!/usr/bin/env python3
"""Where the test suite's CPU time goes: runs scripts/test.sh (its arguments
passed on), samples every process's CPU time from /proc every 0.25 s
meanwhile, and charges each process to the test named by PYTEST_CURRENT_TEST
in its environment at exec (else to its parent's test). Prints the machine's
busy and idle CPU seconds, then the test files and commands that used most.

    sudo python3 scripts/test-cpu-profile.py            # the whole suite
    sudo python3 scripts/test-cpu-profile.py tests/test_tcp.py

Why not --durations: the workers share two cores, so a test's wall time says
how long it waited as much as what it cost. Caveats: a process shorter than
a sample is missed (the totals say how much was seen); what the CLI fork
server (tests/cli_forkserver.py) forks is charged to the test that started
the server, and a batch system's jobs to the test that started its daemons,
so read the files' shares, not single tests'. Beside it, each test's own CPU in
its worker and in the children the worker waited for (scripts/
test_cpu_per_test.py, a pytest plugin): what the workers do in-process (the
reports' rendering, analysis) is charged to no test by /proc, whose
PYTEST_CURRENT_TEST a process has only from its start."""
from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")
REPO = Path(__file__).resolve().parent.parent


def machine_ticks() -> tuple[int, int]:
    """(busy, idle) ticks of all CPUs since boot (/proc/stat's cpu line)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return user + nice + system + irq + softirq + steal, idle + iowait


def test_of(pid: str) -> str | None:
    try:
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if item.startswith(b"PYTEST_CURRENT_TEST="):
                return item.split(b"=", 1)[1].decode(errors="replace").rsplit(" (", 1)[0]
    except OSError:
        pass
    return None


def sample(seen: dict, test_by_pid: dict, before: bool = False) -> None:
    """Each process's CPU ticks so far, keyed by (pid, start time) so a reused pid is another
    process; `before` the suite, what each has used already is its base, not charged."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()
        ppid, ticks, start = int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19])
        key = (int(pid), start)
        if key not in seen:
            test = test_of(pid) or test_by_pid.get(ppid)
            test_by_pid[int(pid)] = test
            seen[key] = [0, test, comm, ticks if before else 0]
        seen[key][0] = ticks


def main() -> int:
    seen: dict = {}
    test_by_pid: dict = {}
    sample(seen, test_by_pid, before=True)
    busy0, idle0 = machine_ticks()
    per_test = Path(tempfile.mkdtemp(prefix="cpu-per-test-"))
    env = {**os.environ, "CLUSTERBENCH_TEST_CPU_LOG": str(per_test),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "scripts"), os.environ.get("PYTHONPATH")]))}
    suite = subprocess.Popen(["bash", str(REPO / "scripts" / "test.sh"), "-p", "test_cpu_per_test", *sys.argv[1:]],
                             cwd=REPO, env=env)
    while suite.poll() is None:
        sample(seen, test_by_pid)
        time.sleep(0.25)
    busy1, idle1 = machine_ticks()
    by_file, by_command, by_test_command = collections.Counter(), collections.Counter(), collections.Counter()
    for ticks, test, comm, base in seen.values():
        used = (ticks - base) / HZ
        by_file[test.split("::")[0] if test else "(no test: pytest itself, the kernel, daemons)"] += used
        by_command[comm] += used
        by_test_command[(test or "(no test)", comm)] += used
    print(f"\nCPU: {(busy1 - busy0) / HZ:,.0f} s busy, {(idle1 - idle0) / HZ:,.0f} s idle; "
          f"{sum(by_file.values()):,.0f} s seen in processes")
    print("\nCPU s  test file")
    for name, s in by_file.most_common(30):
        print(f"{s:6.1f}  {name}")
    print("\nCPU s  command")
    for name, s in by_command.most_common(15):
        print(f"{s:6.1f}  {name}")
    print("\nCPU s  command in test (processes /proc saw)")
    for (test, comm), s in by_test_command.most_common(30):
        print(f"{s:6.1f}  {comm} in {test}")
    print_per_test(per_test)
    return suite.returncode


def print_per_test(folder: Path) -> None:
    """The plugin's lines: the tests and files whose own and waited-for children's CPU is most."""
    tests: dict[str, tuple[float, float, float]] = {}
    for log in folder.glob("*.tsv"):
        for line in log.read_text().splitlines():
            nodeid, own, children, wall = line.split("\t")
            tests[nodeid] = (float(own), float(children), float(wall))
        log.unlink()
    folder.rmdir()
    own_all, children_all = sum(t[0] for t in tests.values()), sum(t[1] for t in tests.values())
    print(f"\nper test (in the workers): {own_all:,.0f} s in-process, {children_all:,.0f} s in waited-for children")
    files: collections.Counter = collections.Counter()
    for nodeid, (own, children, _) in tests.items():
        files[nodeid.split("::")[0]] += own + children
    print("\n   CPU s  test file (in-process + children)")
    for name, s in files.most_common(25):
        print(f"{s:8.1f}  {name}")
    print("\n    own  children   wall  test")
    for nodeid, (own, children, wall) in sorted(tests.items(), key=lambda t: -(t[1][0] + t[1][1]))[:40]:
        print(f"{own:7.1f} {children:8.1f} {wall:6.1f}  {nodeid}")


if __name__ == "__main__":
    sys.exit(main())
