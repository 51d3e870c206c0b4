"""The one way clusterbench writes a file a user names (reports, exports,
summaries) or keeps state in: whole or not at all, and never through a
name someone else planted. The temporary file is made by mkstemp in the
target's directory (a fresh random name, O_CREAT|O_EXCL: an existing file
or symlink there is never opened), synced, then renamed over the target;
os.replace swaps a symlink at the target itself, never writes through it."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def _mode_for(path: Path) -> int:
    """The target's permissions when it is a regular file, else what a new
    file gets under the umask (mkstemp's 0600 would hide a shared report)."""
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: str | os.PathLike, data: str | bytes, encoding: str = "utf-8") -> Path:
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fchmod(f.fileno(), _mode_for(path))
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(path.parent)
    return path


def _sync_dir(directory: Path) -> None:
    """The rename reaches the disk too (a crash after it keeps the new file)."""
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass   # some file systems refuse fsync on a directory; the data itself is synced
    finally:
        os.close(dfd)
