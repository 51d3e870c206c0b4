"""Running clusterbench as a user sees it: on a terminal of a given width
(a pseudo-terminal, stdout and stderr both on it, no $COLUMNS), or piped."""
from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

# colours, cursor moves and the like: what a terminal interprets, not what it shows
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class Seen:
    status: int
    text: str  # what the user reads: stdout, or stdout and stderr interleaved on a terminal
    stderr: str = ""  # piped runs only

    @property
    def lines(self) -> list[str]:
        return [line for line in self.text.splitlines() if line.strip()]


def user_env(cbk_bin: str, store_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, TERM="xterm-256color",
               PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    return env


def on_terminal(args: list[str], columns: int, env: dict, timeout_s: float = 120) -> Seen:
    """`python -m clusterbench ARGS` with a terminal `columns` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "clusterbench", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    status = proc.wait(timeout=timeout_s)
    os.close(master)
    text = ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r\n", "\n")
    return Seen(status, text)


def piped(args: list[str], env: dict, timeout_s: float = 120) -> Seen:
    p = subprocess.run([sys.executable, "-m", "clusterbench", *args], capture_output=True, text=True,
                       env=env, timeout=timeout_s)
    return Seen(p.returncode, p.stdout, p.stderr)
