"""A file a user names that clusterbench reads whole (a suite, an IOR script
or hints file): only a regular file, and never more than a bound, so a
device (/dev/zero), a FIFO with no writer or a huge file cannot hold the
command or fill memory. Opened without blocking and checked on the
descriptor opened, not on the name."""
from __future__ import annotations

import errno
import os
import stat


def read_small(path: str | os.PathLike, limit_bytes: int, what: str) -> bytes:
    """The file's bytes; an OSError whose strerror says why, for a file that
    is not a regular one or is over limit_bytes (what: 'a suite', ...)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = f.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise OSError(errno.EFBIG, f"larger than {limit_bytes >> 20} MiB, which no {what} is")
    return data
