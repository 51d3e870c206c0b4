"""A fork server for the suite's `python -m clusterbench` commands (#33).

The suite runs the CLI about a thousand times; each fresh interpreter spends
about 0.3 CPU-s importing click, rich, SQLAlchemy and clusterbench before it
does anything, a sixth of the suite's CPU on a 2-core machine. This server
imports them once, then forks a child per command that runs the CLI exactly
as `python -m clusterbench ARGS` would: the command's own environment,
working directory, standard streams (the client's pipes, passed over the
socket), argv, and the interpreter's normal exit (SystemExit status, atexit,
a traceback and status 1 for an uncaught exception, death by SIGINT for an
uncaught KeyboardInterrupt).

What a fork cannot change is what the interpreter fixed at its start: the
locale, the PYTHON* variables and the hash seed. The client
(cli_client.run_bounded) falls back to a real subprocess when a command's PYTHON*, LANG or LC_*
differ from the server's. CLUSTERBENCH_TEST_FORK=0 turns the server off.

Run as: python cli_forkserver.py SOCKET_PATH. It prints "ready" once
listening, and exits when its standard input (the suite's pipe) closes, so
a suite killed with -9 does not leave it behind.

Per command: the server forks a keeper, which forks the CLI, sends
{"pid": N}, waits for it and sends {"status": S} (Popen's returncode: minus
the signal for a killed CLI). The server itself ignores SIGCHLD, so keepers
are reaped without a wait.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys

HEADER = struct.Struct("!I")


def preload() -> None:
    """Imports everything a CLI command may import, so no child pays for it
    (clusterbench.__main__ excepted: importing it would run the CLI)."""
    import pkgutil

    import click  # noqa: F401
    import rich.console  # noqa: F401
    import rich.progress  # noqa: F401
    import rich.table  # noqa: F401
    import sqlalchemy  # noqa: F401
    import clusterbench

    for info in pkgutil.walk_packages(clusterbench.__path__, "clusterbench."):
        if info.name != "clusterbench.__main__":
            __import__(info.name)


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the client closed the connection mid-request")
        data += chunk
    return data


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """A request: a length sent with the client's stdin, stdout and stderr
    descriptors, then that many bytes of JSON {argv, env, cwd}."""
    head, fds, _, _ = socket.recv_fds(conn, HEADER.size, 3)
    head += _read_exactly(conn, HEADER.size - len(head))
    (length,) = HEADER.unpack(head)
    return json.loads(_read_exactly(conn, length)), fds


def _wait_or_end_with_client(conn: socket.socket, pid: int) -> None:
    """Returns when the CLI has ended, or has been ended because its client
    hung up: a client sends nothing after its request, so a readable
    connection is a pytest that is gone (a suite killed with -9), and its
    command must not run on without it."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            readable, _, _ = select.select([pidfd, conn], [], [])
            if pidfd in readable:
                return
            try:
                gone = not conn.recv(4096)
            except OSError:
                gone = True
            if gone:
                from clusterbench.launch.processes import stop_tree

                stop_tree(pid, grace_s=2.0)
                return
    finally:
        os.close(pidfd)


def _keep(conn: socket.socket) -> dict | None:
    """In the keeper: forks the CLI and reports on it. Returns the request in
    the CLI's process (which then runs it); never returns in the keeper."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        request, fds = _receive(conn)
    except (EOFError, OSError, ValueError):
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)   # dup2's copy is inheritable, as a real process's 0, 1 and 2 are
        for fd in fds:
            if fd > 2:
                os.close(fd)
        return request
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    except OSError:
        pass
    _wait_or_end_with_client(conn, pid)
    _, status = os.waitpid(pid, 0)
    try:
        conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    except OSError:
        pass
    os._exit(0)


def serve(path: str) -> dict:
    """Accepts commands until stdin closes (then exits); returns, in a CLI's
    process only, that CLI's request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        readable, _, _ = select.select([listener, sys.stdin.fileno()], [], [])
        if sys.stdin.fileno() in readable and not os.read(sys.stdin.fileno(), 4096):
            listener.close()
            os.unlink(path)
            sys.exit(0)
        if listener in readable:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                request = _keep(conn)
                if request is not None:
                    return request
            conn.close()


def become(request: dict) -> None:
    """Turns this forked child into `python -m clusterbench ARGV` started in
    request's cwd with request's environment."""
    import random
    import tempfile
    import time

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    random.seed()
    tempfile.tempdir = None   # gettempdir() reads TMPDIR again
    sys.path[0] = os.getcwd()   # what -m puts first (the server's was tests/)
    sys.argv = ["-m", *request["argv"]]
    # sys.stdout and sys.stderr wrap fds 1 and 2, now the client's pipes


if __name__ == "__main__":
    sys.path.pop(0)   # tests/: not on a CLI's path
    preload()
    _request = serve(sys.argv[1])
    del preload, serve, _read_exactly, _receive, _keep
    become(_request)
    import runpy

    # run_name and alter_sys as -m: __main__, sys.argv[0] the module's file
    runpy.run_module("clusterbench", run_name="__main__", alter_sys=True)
