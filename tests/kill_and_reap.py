"""A kill -9 of clusterbench mid-step, with every process of its launch reaped
and how each ended told (tests/test_private_dirs.py, tests/test_cluster_interrupt.py)."""

# `python -c KILL_AND_REAP FOLDER CLUSTERBENCH...`: starts clusterbench as a child subreaper
# (PR_SET_CHILD_SUBREAPER), kill -9s it once a private directory in FOLDER is stamped and a few
# repetitions are in, then reaps every process of the launch, which are reparented here, and prints
# how each ended, by its command name, as JSON.
KILL_AND_REAP = """
import ctypes, json, os, signal, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
folder, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while not [n for n in os.listdir(folder) if os.path.exists(os.path.join(folder, n, ".cbk-owner"))]:
    if p.poll() is not None or time.monotonic() > deadline:
        sys.exit("no stamped directory appeared")
    time.sleep(0.05)
time.sleep(0.5)
names = {}
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            names[int(entry)] = open(f"/proc/{entry}/comm").read().strip()
        except OSError:
            pass
os.kill(p.pid, signal.SIGKILL)
ended = {}
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
    ended.setdefault(names.get(pid, "?"), []).append(how)
print(json.dumps(ended))
"""
