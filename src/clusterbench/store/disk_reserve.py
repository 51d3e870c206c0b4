"""Room to close a run on a full disk. A run that fills the disk its SQLite
store is on fails at its next write, and closing it (one UPDATE of the run
and of its step) needs a few pages of the store's -wal file too, which the
full disk refuses: the run would stay `running` (later `killed`). So a run's
store holds this reserve, an unnamed file (O_TMPFILE) in the store's
directory with RESERVE_BYTES allocated: released when a write fails, it
gives the close its room. Unnamed, it vanishes with the process, even one
killed with -9; where O_TMPFILE or fallocate is not supported (NFS) there
is no reserve, and a run on a full disk is closed only if space remains."""
from __future__ import annotations

import contextlib
import os

# two UPDATEs in WAL mode write a few 4 KiB frames; the -shm index grows by 32 KiB at most
RESERVE_BYTES = 256 * 1024


class DiskReserve:
    def __init__(self, directory: str):
        self._fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
            # on a disk already nearly full, what room there is (a run there fails soon, and must close)
            for size in (RESERVE_BYTES, RESERVE_BYTES // 4, RESERVE_BYTES // 16):
                try:
                    os.posix_fallocate(fd, 0, size)
                except OSError:
                    continue
                self._fd = fd
                return
            os.close(fd)

    def release(self) -> bool:
        """Frees the reserved space; True if there was any to free."""
        if self._fd is None:
            return False
        fd, self._fd = self._fd, None
        os.close(fd)   # the file has no name: closing it frees its blocks
        return True

    def close(self) -> None:
        self.release()
