"""The suite's CLI fork server (tests/cli_forkserver.py) runs a command as a
fresh `python -m clusterbench` would: same status, standard output and
error, the command's own environment and working directory, and a timeout
that ends the command's whole tree. Every other test relies on it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cli_client

CLI = [sys.executable, "-m", "clusterbench"]


@pytest.fixture
def env(cbk_bin, tmp_path):
    return dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB="sqlite:///relative.db", COLUMNS="200")


def both(args: list[str], env: dict, cwd) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """The command through the fork server in cwd/forked, then as a subprocess
    in cwd/real (each folder's relative store as the other's was before)."""
    for name in ("forked", "real"):
        (cwd / name).mkdir(exist_ok=True)
        if (cwd / "relative.db").exists():
            (cwd / name / "relative.db").write_bytes((cwd / "relative.db").read_bytes())
    served = cli_client.served()
    forked = cli_client.run_bounded([*CLI, *args], timeout=120, env=env, cwd=cwd / "forked")
    assert cli_client.served() == served + 1, "the fork server did not take the command"
    real = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd / "real")
    return forked, real


@pytest.mark.skipif(not cli_client.enabled(), reason="CLUSTERBENCH_TEST_FORK=0")
@pytest.mark.parametrize("args", [["--version"], ["nosuch"], ["list"], ["run", "null", "--seconds=-1"],
                                  ["show", "7"], ["env", "--help"]],
                         ids=["version", "unknown-command", "list", "bad-value", "no-such-run", "help"])
def test_a_forked_command_says_and_exits_as_a_fresh_interpreter_does(args, env, tmp_path):
    forked, real = both(args, env, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


@pytest.mark.skipif(not cli_client.enabled(), reason="CLUSTERBENCH_TEST_FORK=0")
def test_a_forked_command_has_its_own_environment_and_folder(env, tmp_path):
    # a relative store path lands in the command's folder; COLUMNS sets the width of its table
    run = cli_client.run_bounded([*CLI, "run", "null", "--seconds=0.01", "--repeat", "2", "--quiet"],
                                 timeout=120, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "relative.db").is_file()
    # 72: list's nine columns fit it with every word whole (below, report/run_list_terminal.py leaves
    # columns out)
    narrow, real = both(["list"], dict(env, COLUMNS="72"), tmp_path)
    wide, _ = both(["list"], env, tmp_path)
    assert narrow.stdout == real.stdout
    assert max(map(len, narrow.stdout.splitlines())) <= 72 < max(map(len, wide.stdout.splitlines()))


def test_a_command_with_another_locale_runs_as_a_subprocess(env, tmp_path):
    served = cli_client.served()
    p = cli_client.run_bounded([*CLI, "--version"], timeout=120, env=dict(env, LC_ALL="C"), cwd=tmp_path)
    assert p.returncode == 0 and "clusterbench" in p.stdout
    assert cli_client.served() == served


def test_a_timeout_ends_the_forked_command_and_its_cbk(env, tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        cli_client.run_bounded([*CLI, "run", "null", "--seconds=60", "--quiet"], timeout=3, env=env, cwd=tmp_path)
    # no_process_left_behind fails this test if the CLI or its cbk outlived it


@pytest.mark.timeout(60)
def test_a_command_whose_client_is_gone_is_ended(env, tmp_path):
    # A suite killed with -9 closes its end of every connection: the keeper ends the command
    # (and its cbk) instead of letting it run on, orphaned, for the next suite to sweep.
    import json
    import socket
    import time

    import psutil

    from cli_forkserver import HEADER

    server = cli_client.ForkServer()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(server.path)
        request = json.dumps({"argv": ["run", "null", "--seconds=30", "--repeat", "1", "--quiet"],
                              "env": env, "cwd": str(tmp_path)}).encode()
        socket.send_fds(conn, [HEADER.pack(len(request))], [devnull, devnull, devnull])
        conn.sendall(request)
        pid = json.loads(conn.makefile().readline())["pid"]
        deadline = time.monotonic() + 20

        def kernels() -> list:
            found = []
            for c in psutil.Process(pid).children(recursive=True):
                try:
                    if c.name() == "cbk":
                        found.append(c)
                except psutil.NoSuchProcess:   # a child that ended since the listing (cbk --check)
                    pass
            return found

        while not kernels():
            assert time.monotonic() < deadline, "the command started no cbk"
            time.sleep(0.05)
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        conn.close()
        gone, alive = psutil.wait_procs(tree, timeout=15)
        assert not alive, alive
    finally:
        os.close(devnull)
        server.stop()
