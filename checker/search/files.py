"""Files that are whole or absent, and run ids.

The Spark engine's level files (checker/search/spark/levels.py) and the
output's run folders (checker/output/results.py) are both written through
write_atomic: a temp file in the same directory, fsynced, then os.replace,
so an interrupted run never leaves a half-written file. file_digest is what
a resume checks a finished level's files against (a truncated or altered
file is refused in one line, not resumed from).
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import xxhash


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: a temp file in the same
    folder, fsynced, then os.replace. A symlink is followed (its target is
    written, atomically, in the target's folder: the link stays a link); an
    existing target that is not a regular file (a character device such as
    /dev/null, a FIFO, a socket) is opened and written directly, never
    replaced by a regular file (atomicity means nothing there); a folder is
    an error (IsADirectoryError)."""
    path = Path(os.path.realpath(path))  # the symlinks followed (a loop: ELOOP below)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "w", encoding="utf-8") as f:  # a device, a FIFO: written, not replaced
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def safe_component(name: str) -> str:
    """`name` as one safe path component (a spec's folder under --out is
    named by its file's stem): a path separator or NUL becomes "_", and a
    name that is empty, "." or ".." (which would climb out of --out) is
    spelled with underscores instead ("_", "_", "__")."""
    for sep in {"/", "\\", "\0", os.sep, os.altsep or "/"}:
        name = name.replace(sep, "_")
    if name in ("", ".", ".."):
        name = "_" * max(1, len(name))
    return name


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(e: BaseException) -> bool:
    """A write failed for want of space (or of quota)."""
    return isinstance(e, OSError) and e.errno in DISK_FULL


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}-{os.urandom(2).hex()}"


def file_digest(path: Path) -> list:
    """[size, xxh3-64 hex digest] of a file (read in 1 MiB blocks)."""
    h = xxhash.xxh3_64()
    size = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            size += len(block)
    return [size, h.hexdigest()]


def digest_problem(path: Path, digest: list) -> str | None:
    """What is wrong with a file against the [size, digest] written with it
    (None: nothing): a resume's one-line reason to refuse it."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    if file_digest(path) == list(digest):
        return None
    size = path.stat().st_size
    return f"{size:,} bytes, written as {digest[0]:,}" if size != digest[0] else "altered"
