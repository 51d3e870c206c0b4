"""A real Grid Engine cell for the tests: Debian's Son of Grid Engine 8.1
(gridengine-master, -exec, -client) run from a private SGE_ROOT and cell in a
temporary directory, on free ports, with one queue and an `mpi` parallel
environment, stopped afterwards. The system's own cell (if any) is not
touched. `why_not()` says what is missing.

One node by default (everything on this machine). Given a test cluster
(clusterbench testbed), the cell spans its hosts: sge_qmaster on the first
(also the submit host, where the tests run qsub and qrsh), one sge_execd on
each of the others, each inside its host's namespaces (own host name,
address and hosts file), sharing SGE_ROOT through the one file system as a
real cell shares it over NFS. One slot per execution host, so a job of two
slots spans two hosts."""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ports import free_port

SYSTEM_ROOT = Path("/var/lib/gridengine")   # Debian's SGE_ROOT: bin, lib, util, utilbin
LIBEXEC = Path("/usr/lib/gridengine")
SHARE = Path("/usr/share/gridengine")
TOOLS = ("qsub", "qrsh", "qconf", "qstat")


def why_not() -> str | None:
    if os.geteuid() != 0:
        return "a test Grid Engine cell needs root (its daemons run as root here)"
    missing = [t for t in TOOLS if not shutil.which(t)]
    missing += [str(p) for p in (Path("/usr/sbin/sge_qmaster"), Path("/usr/sbin/sge_execd"),
                                 LIBEXEC / "spoolinit", SYSTEM_ROOT / "bin") if not p.exists()]
    if missing:
        return f"not installed: {', '.join(missing)} (apt-get install gridengine-master gridengine-exec gridengine-client)"
    return None



# queue_conf(5): qconf -Aq wants every attribute
QUEUE = """qname all.q
hostlist {host}
seq_no 0
load_thresholds NONE
suspend_thresholds NONE
nsuspend 1
suspend_interval 00:05:00
priority 0
min_cpu_interval 00:05:00
processors UNDEFINED
qtype BATCH INTERACTIVE
ckpt_list NONE
pe_list mpi
rerun FALSE
slots {slots}
tmpdir {tmpdir}
shell /bin/sh
prolog NONE
epilog NONE
shell_start_mode posix_compliant
starter_method NONE
suspend_method NONE
resume_method NONE
terminate_method NONE
notify 00:00:60
owner_list NONE
user_lists NONE
xuser_lists NONE
subordinate_list NONE
complex_values NONE
projects NONE
xprojects NONE
calendar NONE
initial_state default
""" + "".join(f"{p}_{r} INFINITY\n" for r in ("rt", "cpu", "fsize", "data", "stack", "core", "rss", "vmem")
              for p in ("s", "h"))

PE = """pe_name mpi
slots 9999
user_lists NONE
xuser_lists NONE
start_proc_args NONE
stop_proc_args NONE
allocation_rule $fill_up
control_slaves TRUE
job_is_first_task TRUE
urgency_slots min
accounting_summary FALSE
qsort_args NONE
"""


class GridEngineCell:
    def __init__(self, workdir: Path, testbed=None):
        self.root = workdir
        self.cell = "cbtest"
        self.env = {**os.environ, "SGE_ROOT": str(workdir), "SGE_CELL": self.cell,
                    "SGE_QMASTER_PORT": str(free_port()), "SGE_EXECD_PORT": str(free_port())}
        self.testbed = testbed
        names = [h.name for h in testbed.hosts] if testbed else [socket.gethostname()]
        self.master = names[0]
        self.exec_hosts = names[1:] if testbed else names

    def on(self, host: str, argv: list[str]) -> list[str]:
        """argv run on a host of the cell (as is, on a one-node cell)."""
        return self.testbed.command(host, argv) if self.testbed else list(argv)

    def run(self, argv: list[str], **kw) -> subprocess.CompletedProcess:
        """A client command (qsub, qrsh, qconf...) on the submit host."""
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("env", self.env)
        return subprocess.run(self.on(self.master, argv), **kw)

    def _run(self, *cmd: str, host: str | None = None) -> None:
        r = subprocess.run(self.on(host or self.master, list(cmd)), capture_output=True, text=True, env=self.env,
                           timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stdout}{r.stderr}")

    def start(self, timeout_s: float = 60) -> None:
        host = self.master
        common = self.root / self.cell / "common"
        common.mkdir(parents=True)
        for sub in ("spool/qmaster/job_scripts", "spool/execd", "spooldb"):
            (self.root / sub).mkdir(parents=True)
        # job numbers from a random start (sge_qmaster reads the last one given from jobseqnum): every cell
        # counting from 1 gave a second suite's the same job ids on hosts of the same names, and MPI's
        # shared-memory segments and session folders are named after host and job
        (self.root / "spool/qmaster/jobseqnum").write_text(f"{1000 + secrets.randbelow(8_000_000)}\n")
        for d in ("bin", "lib", "util", "utilbin"):
            (self.root / d).symlink_to(SYSTEM_ROOT / d)
        (common / "bootstrap").write_text(
            "admin_user root\ndefault_domain none\nignore_fqdn false\nspooling_method berkeleydb\n"
            f"spooling_lib libspoolb\nspooling_params {self.root}/spooldb\nbinary_path /usr/sbin\n"
            f"qmaster_spool_dir {self.root}/spool/qmaster\nsecurity_mode none\nlistener_threads 2\n"
            "worker_threads 2\nscheduler_threads 1\n")
        (common / "act_qmaster").write_text(host + "\n")
        if not self.testbed:
            # the host name resolves to a loopback address whose name is "localhost":
            # without the alias qmaster refuses its own host's clients
            (common / "host_aliases").write_text(f"{host} localhost\n")
        conf = (SHARE / "default-configuration").read_text().splitlines()
        fixed = {"execd_spool_dir": f"{self.root}/spool/execd", "min_uid": "0", "min_gid": "0"}
        conf = [f"{line.split()[0]} {fixed[line.split()[0]]}" if line.split() and line.split()[0] in fixed
                else line for line in conf]
        (self.root / "configuration").write_text("\n".join(conf) + "\n")
        self._run(str(LIBEXEC / "spoolinit"), "berkeleydb", "libspoolb", str(self.root / "spooldb"), "init")
        self._run(str(LIBEXEC / "spooldefaults"), "configuration", str(self.root / "configuration"))
        self._run(str(LIBEXEC / "spooldefaults"), "complexes", str(SHARE / "util/resources/centry"))
        self._run(str(LIBEXEC / "spooldefaults"), "usersets", str(SHARE / "util/resources/usersets"))
        self._run(str(LIBEXEC / "spooldefaults"), "managers", "root")
        self._run("/usr/sbin/sge_qmaster")   # both daemonise
        self._wait(lambda: self.run(["qconf", "-sh"]).returncode == 0, timeout_s, "qmaster")
        self._run("qconf", "-as", host)
        self._fast_scheduler()
        if self.testbed:   # an execution daemon starts only on an administrative host
            self._run("qconf", "-ah", ",".join(self.exec_hosts))
        for h in self.exec_hosts:
            self._run("/usr/sbin/sge_execd", host=h)
        (self.root / "pe").write_text(PE)
        self._run("qconf", "-Ap", str(self.root / "pe"))
        # each cell its own folder for the jobs' TMPDIRs (<job>.<task>.<queue>): job numbers start at 1 in
        # every cell, so two suites' cells side by side made and removed the same /tmp/1.1.all.q under each other
        (self.root / "tmp").mkdir(exist_ok=True)
        (self.root / "queue").write_text(QUEUE.format(host=" ".join(self.exec_hosts), tmpdir=self.root / "tmp",
                                                      slots=1 if self.testbed else max(4, os.cpu_count() or 1)))
        self._run("qconf", "-Aq", str(self.root / "queue"))

        def queue_up() -> bool:
            out = self.run(["qstat", "-f"]).stdout
            return sum(line.startswith("all.q@") and len(line.split()) == 5
                       for line in out.splitlines()) == len(self.exec_hosts)

        self._wait(queue_up, timeout_s, "the execution daemon")

    def _fast_scheduler(self) -> None:
        """A scheduling run every second, and one as soon as a job is
        submitted or ends (the default waits up to 15 s between runs: most
        of a test's time was a job waiting for the scheduler)."""
        conf = self.run(["qconf", "-ssconf"]).stdout.splitlines()
        fast = {"schedule_interval": "0:0:1", "flush_submit_sec": "1", "flush_finish_sec": "1"}
        conf = [f"{line.split()[0]} {fast[line.split()[0]]}" if line.split() and line.split()[0] in fast else line
                for line in conf]
        (self.root / "sched_conf").write_text("\n".join(conf) + "\n")
        self._run("qconf", "-Msconf", str(self.root / "sched_conf"))

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the test Grid Engine cell did not come up: no {what}")

    def stop(self) -> None:
        pids = []
        for f in [self.root / "spool/qmaster/qmaster.pid", *self.root.glob("spool/execd/*/execd.pid")]:
            try:
                pids.append(int(f.read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                pass
        # -kej: the execution daemons signal their jobs. The daemons then take
        # about 8 s to write their state and go (11 s of each test module's
        # teardown); this cell's state is thrown away, so they, the job
        # shepherds and whatever those started are killed at once.
        self.run(["qconf", "-kej", "all"], timeout=60)
        pids += _shepherds_under(self.root)
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while (pids := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)


def _shepherds_under(root: Path) -> list[int]:
    """Job shepherds of this cell (they work in its spool) and everything they
    started, should a job outlive its execution daemon."""
    children: dict[int, list[int]] = {}
    shepherds = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
            children.setdefault(int(stat.rsplit(") ", 1)[1].split()[1]), []).append(int(proc.name))
            if stat.split(" (", 1)[1].startswith("sge_shepherd)") and \
                    Path(os.readlink(proc / "cwd")).is_relative_to(root):
                shepherds.append(int(proc.name))
        except (OSError, IndexError, ValueError):
            pass
    found, todo = [], shepherds
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie has exited: its parent just has not reaped it
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False
