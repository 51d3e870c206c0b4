"""A real one-node Slurm cluster for the tests: a private munged, slurmctld
and slurmd started from a configuration in a temporary directory, on
loopback ports and a private munge socket, and stopped afterwards. The
system's munged is never used: its socket may be left over from a daemon
that is gone (seen in CI), and a test must not depend on the host's key.
Needs root and Debian's slurm-wlm and munge (scripts/apt-packages-test.txt);
`why_not()` says what is missing."""
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

DAEMONS = ("munged", "munge", "slurmctld", "slurmd", "srun", "sinfo")


def why_not() -> str | None:
    if os.geteuid() != 0:
        return "a test Slurm cluster needs root (its daemons run as root here)"
    missing = [d for d in DAEMONS if not shutil.which(d) and not Path("/usr/sbin", d).exists()]
    return f"not installed: {', '.join(missing)} (apt-get install slurm-wlm munge)" if missing else None



def first_job_id() -> int:
    """Where this cluster's job numbers start. Every cluster counting from 1
    gave a second suite's the same job ids, on test hosts with the same names
    (h01, h02) and one /dev/shm and /tmp: MPI's shared-memory segments and
    session folders are named after host and job, so the two suites' ranks
    met in them (an Open MPI rank under srun was killed)."""
    return 1000 + secrets.randbelow(60_000_000)


# a job's states once it has ended (squeue(1), JOB STATE CODES)
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
         "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED"}


def sbatch_wait(args: list[str], *, env: dict, timeout: float, cwd=None, poll_s: float = 0.2
                ) -> subprocess.CompletedProcess:
    """`sbatch --wait ARGS` with a finer poll: sbatch's own sleeps 2 s, then
    8 (see MinJobAge in CONF), so a job of 3 s returned after 10, and a dozen
    such jobs cost the suite a minute. Submits, then reads the job's state
    from scontrol every `poll_s` until every component has ended. Returns
    what sbatch --wait would: "Submitted batch job N" on stdout, the job's
    exit status (its largest, a signal as 128 + number, 1 for an end that
    is not COMPLETED with a zero exit) as returncode; a job past `timeout`
    is cancelled and returns 124, its steps at that moment on stderr."""
    sub = subprocess.run(["sbatch", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    if sub.returncode != 0:
        return sub
    job = sub.stdout.split()[-1]
    deadline = time.monotonic() + timeout
    while True:
        r = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True, env=env,
                           timeout=30)
        if r.returncode != 0:   # purged: MinJobAge passed between two polls
            return subprocess.CompletedProcess(sub.args, 1, sub.stdout,
                                               sub.stderr + f"job {job} no longer known to scontrol: {r.stderr}")
        records = [dict(w.split("=", 1) for w in line.split() if "=" in w) for line in r.stdout.splitlines()]
        if records and all(rec.get("JobState") in ENDED for rec in records):
            rcs = []
            for rec in records:
                code, _, sig = rec.get("ExitCode", "0:0").partition(":")
                rc = int(code) or (128 + int(sig) if sig and int(sig) else 0)
                rcs.append(rc or (0 if rec["JobState"] == "COMPLETED" else 1))
            return subprocess.CompletedProcess(sub.args, max(rcs), sub.stdout, sub.stderr)
        if time.monotonic() > deadline:   # the test's assertion prints why, with the job's output so far
            steps = subprocess.run(["squeue", "-s", "-j", job], capture_output=True, text=True, env=env, timeout=30)
            subprocess.run(["scancel", job], env=env, capture_output=True, timeout=30)
            return subprocess.CompletedProcess(sub.args, 124, sub.stdout, sub.stderr + f"job {job} still running after "
                                               f"{timeout:g} s, cancelled; its steps then:\n{steps.stdout}")
        time.sleep(poll_s)


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


CONF = """\
ClusterName=cbtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
FirstJobId={first_job}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={dir}/munge/socket
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
# sbatch --wait sleeps 2 s, then 8, then 32 between polls, each step taken only while
# it is under MinJobAge/2 (slurm 22.05's sbatch.c): at the default 300 a 12 s job
# returned after 42 s. A job purged before a poll makes sbatch exit 0 whatever the
# job's own exit ("no longer found"): at 6 the polls came every 8 s and a failed
# suite passed as done (a CI run). At 16 they come every 8 s and a job is kept 16.
MinJobAge=16
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


class SlurmCluster:
    def __init__(self, workdir: Path):
        self.dir = workdir
        self.conf = workdir / "slurm.conf"
        self.procs: list[subprocess.Popen] = []
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self, timeout_s: float = 60) -> None:
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        host = socket.gethostname().split(".")[0]
        self.conf.write_text(CONF.format(host=host, dir=self.dir, ctld_port=free_port(), d_port=free_port(),
                                         cpus=os.cpu_count() or 1, first_job=first_job_id()))
        self._start_munged()
        self.procs.append(subprocess.Popen([_exe("slurmctld"), "-D", "-i", "-f", str(self.conf)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env))
        self.procs.append(subprocess.Popen([_exe("slurmd"), "-D", "-f", str(self.conf)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=self.env)
            if r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc"):
                return
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        logs = "\n".join(f.read_text()[-2000:] for f in self.dir.glob("*.log"))
        self.stop()
        raise RuntimeError(f"the test Slurm cluster did not come up:\n{logs}")

    def job_log(self, job: str, lines: int = 40) -> str:
        """The daemons' log lines that name a job (why a step was killed, a
        node declared down): what a failed test prints, since the cluster's
        folder is gone once the module ends."""
        out = []
        for f in sorted(self.dir.glob("*.log")):
            hits = [line for line in f.read_text(errors="replace").splitlines() if job in line]
            if hits:
                out.append(f"--- {f.name}\n" + "\n".join(hits[-lines:]))
        return "\n".join(out) or f"(no daemon log names job {job})"

    def _start_munged(self, timeout_s: float = 20) -> None:
        mdir = self.dir / "munge"
        mdir.mkdir(mode=0o700, exist_ok=True)
        key = mdir / "key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        socket_path = mdir / "socket"
        self.procs.append(subprocess.Popen(
            [_exe("munged"), "--foreground", "--force", f"--socket={socket_path}", f"--key-file={key}",
             f"--log-file={mdir / 'munged.log'}", f"--pid-file={mdir / 'munged.pid'}",
             f"--seed-file={mdir / 'seed'}", "--num-threads=4"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ok = subprocess.run(["munge", f"--socket={socket_path}", "--no-input"],
                                capture_output=True).returncode == 0
            if ok:
                return
            if self.procs[-1].poll() is not None:
                break
            time.sleep(0.2)
        log = (mdir / "munged.log").read_text() if (mdir / "munged.log").exists() else ""
        self.stop()
        raise RuntimeError(f"the test munged did not come up:\n{log[-2000:]}")

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs.clear()


MULTI_CONF = """\
ClusterName=cbtest{cid}
SlurmctldHost={head}({head_addr})
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
FirstJobId={first_job}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={dir}/munge/socket
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
TmpFS={dir}/tmp/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# backfill: Slurm schedules heterogeneous jobs (sbatch -N1 : -N2) with it alone (builtin refused them,
# "Requested operation not supported on this system"); its pass each second, not 30: a het job waits for it
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
# sbatch --wait sleeps 2 s, then 8, then 32 between polls, each step taken only while
# it is under MinJobAge/2 (slurm 22.05's sbatch.c): at the default 300 a 12 s job
# returned after 42 s. A job purged before a poll makes sbatch exit 0 whatever the
# job's own exit ("no longer found"): at 6 the polls came every 8 s and a failed
# suite passed as done (a CI run). At 16 they come every 8 s and a job is kept 16.
MinJobAge=16
SlurmctldTimeout=30
SlurmdTimeout=30
{nodes}
PartitionName=test Nodes={names} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


class MultiNodeSlurm(SlurmCluster):
    """Slurm on a test cluster (clusterbench.testbed.cluster): slurmctld on
    its first host, one slurmd per host, each inside its host's namespaces
    with its own NodeName, spool and TmpFS (PMIx and srun keep per-node files
    there, and every host shares this machine's /tmp). nsenter rather than
    `ip netns exec`, which remounts /sys and so hides the cgroup tree slurmd
    checks. Four CPUs per node whatever the machine has (config_overrides),
    so a node can take four ranks."""

    def __init__(self, workdir: Path, testbed):
        super().__init__(workdir)
        self.testbed = testbed

    def start(self, timeout_s: float = 90) -> None:
        hosts = self.testbed.hosts
        for sub in ("state", "spool", "tmp"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        for h in hosts:
            for sub in ("spool", "tmp"):
                (self.dir / sub / h.name).mkdir(exist_ok=True)
        nodes = "\n".join(f"NodeName={h.name} NodeAddr={h.address} CPUs=4 State=UNKNOWN" for h in hosts)
        self.conf.write_text(MULTI_CONF.format(
            cid=self.testbed.id, head=hosts[0].name, head_addr=hosts[0].address, dir=self.dir,
            ctld_port=free_port(), d_port=free_port(), nodes=nodes, names=",".join(h.name for h in hosts),
            first_job=first_job_id()))
        self._start_munged()
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": self.env}
        self.procs.append(subprocess.Popen(
            self.testbed.command(hosts[0].name, [_exe("slurmctld"), "-D", "-i", "-f", str(self.conf)]), **quiet))
        for h in hosts:
            self.procs.append(subprocess.Popen(
                self.testbed.command(h.name, [_exe("slurmd"), "-D", "-N", h.name, "-f", str(self.conf)]), **quiet))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, env=self.env)
            states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
            if r.returncode == 0 and len(states) == len(hosts) and all(
                    s in ("idle", "mix", "alloc") for s in states.values()):
                return
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        logs = "\n".join(f"{f.name}: {f.read_text()[-1500:]}" for f in self.dir.glob("*.log"))
        self.stop()
        raise RuntimeError(f"the multi-node test Slurm cluster did not come up:\n{logs}")
