"""Where a file a user names with -o (report, export, history, run --report)
goes, decided by what is at that name now:

- nothing, a regular file, or a symbolic link (its own name): replaced whole
  or not at all (safe_write.write_atomically: never written through);
- `-`, a FIFO, a character device (/dev/null, a terminal), or a name of one of
  this process's descriptors (/dev/stdout, /dev/fd/N): written as a stream,
  so a reader gets the bytes and the device stays a device;
- a directory, a block device, a socket: refused, exit 2, nothing touched;
- a file the command reads (a run's suite or host file), an SQLite database
  or its -wal, -shm, -journal (the store, named by
  mistake), and stdout or a descriptor the command was started without:
  refused the same way.

An error is one line: what the user can fix (no such directory, permission)
exit 2, what the system could not do (a full disk, an I/O error) exit 1."""
from __future__ import annotations

import errno
import os
import re
import stat
import sys
from pathlib import Path

from clusterbench.errors import BadInput, WriteFailed

STDOUT = "-"
# errors of the system, not of the name given: retrying later (after freeing space) may succeed
_SYSTEM_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.ENOMEM, errno.EPIPE}
_REFUSED_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def _own_descriptor(path: str) -> int | None:
    """The descriptor N when path names one of this process's own (/dev/stdout,
    /dev/stderr, /dev/fd/N, /proc/self/fd/N, through any chain of links): that
    descriptor is written, never the link replaced (as root, /dev/stdout is
    the system's) nor reopened at offset 0 (`>> log` keeps appending)."""
    own_fd_dir = re.compile(rf"/proc/{os.getpid()}(?:/task/\d+)?/fd")
    for _hop in range(40):   # the kernel's own limit on a chain of links
        parent, name = os.path.split(path)
        if own_fd_dir.fullmatch(os.path.realpath(parent or ".")) and name.isdigit():
            return int(name)
        try:
            target = os.readlink(path)
        except OSError:
            return None
        path = os.path.join(parent, target)
    return None


_CLOSED = {1: "standard output is closed", 2: "standard error is closed"}


def _open_for_us(fd: int) -> bool:
    """Whether fd is a descriptor this command was given. Python sets
    sys.stdout (sys.stderr) to None when it starts with 1 (2) closed, and
    the number is then free for the next file opened (SQLite puts /dev/null
    there), so fstat cannot tell: writing to it went nowhere, or through a
    stdout of None, a traceback."""
    stream = {1: sys.stdout, 2: sys.stderr}.get(fd, True)
    if stream is None:
        return False
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _kind(path: str) -> str | None:
    """What must happen at path: 'stream', 'replace', or None if it is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError:
            return "replace"   # a dangling or looping link: its own name is replaced
        return "stream" if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) else "replace"
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return "stream"
    if stat.S_ISREG(st.st_mode):
        return "replace"
    return _REFUSED_KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")


_BESIDE_A_DATABASE = ("-wal", "-shm", "-journal")


def _database_at(path: str) -> str | None:
    """path where it is a regular file that is an SQLite database, the
    database where path is its -wal, -shm or -journal, else None:
    `report 3 -o results.db` replaced the store itself with the report
    (every run gone), a name the shell completes."""
    from clusterbench.files.sqlite_header import SQLITE_MAGIC

    beside = [path[:-len(end)] for end in _BESIDE_A_DATABASE if path.endswith(end)]
    for name in (path, *beside):
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode) and os.pread(fd, len(SQLITE_MAGIC), 0) == SQLITE_MAGIC:
                return name
        except OSError:
            pass
        finally:
            os.close(fd)
    return None


def _same_file(path: str, other: str) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:   # either missing (the output not made yet), or not to be looked at
        return False


def check(path: str, option: str = "-o", reads: tuple[str, ...] = ()) -> None:
    """Refuses (exit 2) a target that cannot be written, before any work is
    done for it: a run's report is refused before the run, not after.
    reads: files the command reads (a run's suite and host file), which it
    must not replace: `run s.toml --report s.toml` wrote the report over
    the suite."""
    if not path:
        raise BadInput(f"{option}: give the name of a file to write (- for stdout)")
    if "\x00" in path:
        raise BadInput(f"{option}: the name holds a NUL byte, which no file name can")
    fd = 1 if path == STDOUT else _own_descriptor(path)
    if fd is not None:
        if not _open_for_us(fd):
            raise BadInput(f"{option} {path}: {_CLOSED.get(fd, f'descriptor {fd} is not open')}:"
                           " give the name of a file to write")
        return
    try:
        kind = _kind(path)
    except OSError as e:
        raise _error(option, path, e) from None
    if kind == "stream":
        return
    if kind not in (None, "replace"):
        raise BadInput(f"{option} {path}: {kind}; give the name of a file to write")
    read = next((name for name in reads if _same_file(path, name)), None)
    if read is not None:
        raise BadInput(f"{option} {path}: {read} is what this command reads, which the output would replace; "
                       "give another name")
    database = _database_at(path)
    if database == path:
        raise BadInput(f"{option} {path}: an SQLite database (a results store?), which a report or export would "
                       "replace with every run in it; give another name")
    if database:
        raise BadInput(f"{option} {path}: a file SQLite keeps beside the database {database} (a results store?); "
                       "give another name")
    parent = Path(path).parent
    if not parent.is_dir():
        raise BadInput(f"{option} {path}: no such directory {parent}")
    try_a_file_in(parent, option, path)


def try_a_file_in(parent: Path, option: str, path: str) -> None:
    """A file is replaced through a temporary one beside it: make one now and
    remove it, so a directory that takes none (no permission, a read-only
    file system, /proc) is refused before the work, not after it."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".clusterbench-check.", dir=parent)
    except OSError as e:
        raise _error(option, path, e) from None
    os.close(fd)
    os.unlink(tmp)


def written(path: str) -> str:
    """What a command says on stderr once it has written `path`: "wrote -" read as a file named -."""
    return "wrote standard output (-o -)" if path == STDOUT else f"wrote {path}"


def write(path: str, data: str | bytes, option: str = "-o") -> str:
    """Writes data to path as check() describes; returns the name written
    ('-' for stdout)."""
    from clusterbench.files.safe_write import write_atomically
    from clusterbench.output.reader_gone import point_at_devnull

    payload = data.encode() if isinstance(data, str) else data
    check(path, option)
    try:
        fd = 1 if path == STDOUT else _own_descriptor(path)
        if fd is not None:
            if sys.stdout is not None:   # what was printed before comes first
                sys.stdout.flush()
            try:
                _write_all(fd, payload)
            except BrokenPipeError:
                if fd not in (1, 2):
                    raise
                point_at_devnull(fd)   # `-o - | head`: the reader took what it wanted (output/reader_gone.py)
            return path
        if _kind(path) == "stream" and _stream(path, payload):
            return path
        return str(write_atomically(path, payload))
    except OSError as e:
        raise _error(option, path, e) from None


def _stream(path: str, payload: bytes) -> bool:
    """Writes to the FIFO or character device at path; False if what opened
    is no longer one (swapped for a file since check: then replaced whole)."""
    # no O_CREAT, no O_TRUNC: opening changes nothing; a FIFO waits for its reader here
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            return False
        _write_all(fd, payload)
        return True
    finally:
        os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _error(option: str, path: str, e: OSError) -> BadInput | WriteFailed:
    why = e.strerror or str(e)
    if e.errno == errno.EPIPE:
        why = "the reader closed the pipe"
    cls = WriteFailed if e.errno in _SYSTEM_ERRNOS else BadInput
    return cls(f"{option} {path}: cannot write: {why}")
