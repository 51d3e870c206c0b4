"""Loopback ports for the daemons the tests start (Slurm, Grid Engine)."""
import socket


def free_port() -> int:
    """A port free on 127.0.0.1 now (the OS's pick; a daemon binds it moments later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
