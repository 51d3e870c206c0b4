"""A private PostgreSQL server for the tests: Debian's binaries, its own data
directory and Unix socket in a temporary directory, no TCP port, stopped and
removed at the end. As root the server runs as the unprivileged `postgres`
user (initdb and postgres refuse to run as root).

    server = PostgresServer.start()
    url = server.new_database()      # postgresql+psycopg://postgres@/t1?host=...
    server.stop()
"""
from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def server_bin_dir() -> Path | None:
    """The newest Debian server binaries (/usr/lib/postgresql/N/bin), else pg_ctl on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


class PostgresServer:
    def __init__(self, bindir: Path, root: Path, as_user: str | None):
        self.bindir, self.root, self.as_user = bindir, root, as_user
        self.data, self.socket_dir = root / "data", root / "sock"
        self._names = itertools.count(1)

    @classmethod
    def start(cls, bindir: Path | None = None, root: Path | None = None) -> "PostgresServer":
        """root: an empty folder of the caller's for the data and socket (removed by stop), else a new one."""
        bindir = bindir or server_bin_dir()
        if bindir is None:
            raise FileNotFoundError("no PostgreSQL server binaries (Debian package postgresql)")
        as_user = "postgres" if os.geteuid() == 0 else None
        root = root or Path(tempfile.mkdtemp(prefix="cb-pg-"))
        server = cls(bindir, root, as_user)
        server.socket_dir.mkdir()
        if as_user:
            pw = pwd.getpwnam(as_user)
            for p in (root, server.socket_dir):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        try:
            server._as_owner("initdb", "-D", str(server.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                             "--no-sync", "--no-instructions")
            # fsync off: a test server need not survive a power cut, and it is much faster
            opts = f"-k {server.socket_dir} -c listen_addresses='' -c fsync=off -c max_connections=100"
            server._as_owner("pg_ctl", "-D", str(server.data), "-l", str(root / "server.log"), "-w", "-t", "60",
                             "-o", opts, "start")
        except subprocess.CalledProcessError as e:
            log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"PostgreSQL did not start: {e.stderr or e.stdout}\n{log}") from None
        return server

    def _as_owner(self, tool: str, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / tool), *args]
        if self.as_user:
            cmd = ["runuser", "-u", self.as_user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120, cwd=self.root)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """An empty database of its own (one per test), as its SQLAlchemy URL."""
        import sqlalchemy as sa

        name = f"t{os.getpid()}_{next(self._names)}"
        engine = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as c:
            c.execute(sa.text(f'create database "{name}"'))
        engine.dispose()
        return self.url(name)

    def stop(self) -> None:
        try:
            self._as_owner("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
