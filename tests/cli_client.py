"""Runs `python -m clusterbench` for the tests, through the fork server
(cli_forkserver.py) when it can, as a subprocess otherwise; either way the
caller gets what subprocess.run(capture_output=True, text=True) gives.

One server per pytest process, started at its first command (with the
session's shared process tag: it outlives the test that started it) and
stopped by stop() before the suite's last check for processes left behind.
"""
from __future__ import annotations

import json
import locale
import os
import selectors
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import process_guard
import stale_suites
from cli_forkserver import HEADER

SERVER = Path(__file__).with_name("cli_forkserver.py")
# what the interpreter fixes at its start: a command that sets these otherwise gets a real subprocess
_STARTUP_PREFIXES = ("PYTHON", "LANG", "LC_")


def _startup_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP_PREFIXES)}


class ForkServer:
    def __init__(self):
        # marked: a suite killed with -9 leaves it, and the next suite removes it (stale_suites.sweep)
        self.dir = str(stale_suites.marked_temp_dir("clusterbench-test-fork-"))
        self.path = os.path.join(self.dir, "socket")
        self.served = 0   # commands run through it (tests/test_cli_forkserver.py)
        with process_guard.shared():   # it serves every later test
            self.env = dict(os.environ)
            self.proc = subprocess.Popen([sys.executable, str(SERVER), self.path], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        ready = selectors.DefaultSelector()
        ready.register(self.proc.stdout, selectors.EVENT_READ)
        if not ready.select(timeout=120) or self.proc.stdout.readline() != b"ready\n":
            self.stop()
            raise RuntimeError("the CLI fork server (tests/cli_forkserver.py) did not start")

    def serves(self, env: dict) -> bool:
        return self.proc.poll() is None and _startup_env(env) == _startup_env(self.env)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()   # its lifeline: it exits
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        if self.proc.stdin:
            self.proc.stdin.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, args: list[str], *, env: dict, cwd: str, timeout: float) -> subprocess.CompletedProcess:
        from clusterbench.launch.processes import stop_tree

        cmd = [sys.executable, "-m", "clusterbench", *args]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = None
        try:
            conn.connect(self.path)
            request = json.dumps({"argv": list(args), "env": env, "cwd": cwd}).encode()
            socket.send_fds(conn, [HEADER.pack(len(request))], [0, out_w, err_w])
            conn.sendall(request)
            self.served += 1
            os.close(out_w)
            os.close(err_w)
            out_w = err_w = None
            chunks = {out_r: [], err_r: []}
            replies = b""
            status = None
            sel = selectors.DefaultSelector()
            for fd in (out_r, err_r, conn):
                sel.register(fd, selectors.EVENT_READ)
            deadline = time.monotonic() + timeout
            while len(sel.get_map()) > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(cmd, timeout, self._text(chunks[out_r]), self._text(chunks[err_r]))
                for key, _ in sel.select(timeout=left):
                    if key.fileobj is conn:
                        data = conn.recv(4096)
                        replies += data
                        if not data:
                            sel.unregister(conn)
                    else:
                        data = os.read(key.fileobj, 65536)
                        if data:
                            chunks[key.fileobj].append(data)
                        else:
                            sel.unregister(key.fileobj)
                for line in replies.split(b"\n")[:-1]:
                    reply = json.loads(line)
                    pid = reply.get("pid", pid)
                    status = reply.get("status", status)
                replies = replies[replies.rfind(b"\n") + 1:]
            if status is None:
                raise RuntimeError(f"the CLI fork server gave no exit status for {args}")
            pid = None
            return subprocess.CompletedProcess(cmd, status, self._text(chunks[out_r]), self._text(chunks[err_r]))
        finally:
            if pid is not None:   # interrupted (pytest-timeout, Ctrl-C): the CLI does not outlive it
                stop_tree(pid, grace_s=5.0)
            conn.close()
            for fd in (out_r, err_r, out_w, err_w):
                if fd is not None:
                    os.close(fd)

    @staticmethod
    def _text(chunks: list[bytes]) -> str:
        """As Popen(text=True) decodes: the locale's encoding, universal newlines."""
        text = b"".join(chunks).decode(locale.getpreferredencoding(False))
        return text.replace("\r\n", "\n").replace("\r", "\n")


_server: ForkServer | None = None


def enabled() -> bool:
    return os.environ.get("CLUSTERBENCH_TEST_FORK", "1") != "0"


def run_bounded(cmd: list[str], *, timeout: float, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, capture_output=True, text=True, env=env, **kw) whose
    timeout ends the command's whole process tree (the CLI, its mpiexec, every
    rank), not the command alone, which would orphan its launcher. A
    `python -m clusterbench` command (with no keyword but cwd) goes through
    the fork server."""
    global _server
    if cmd[:3] == [sys.executable, "-m", "clusterbench"] and set(kw) <= {"cwd"} and enabled():
        full_env = dict(os.environ if env is None else env)
        if _server is None:
            _server = ForkServer()
        if _server.serves(full_env):
            return _server.run(cmd[3:], env=full_env, cwd=str(kw.get("cwd") or os.getcwd()), timeout=timeout)
    from clusterbench.launch.processes import stop_tree

    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_tree(p.pid, grace_s=5.0)
            p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def served() -> int:
    """How many commands this process's fork server has run."""
    return _server.served if _server else 0


def stop() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None
