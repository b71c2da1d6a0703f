"""The stops a search makes on its own (exit 2, resumable where levels are
kept): --max-memory, over the run's processes (checker/search/proc.py), and
--min-free-disk, over the disk the run writes to."""
from __future__ import annotations

import shutil
from typing import Callable, Sequence

from checker.search.errors import EXIT_BAD_INPUT, KmcError
from checker.search.proc import TreeMemory


class MemoryLimitError(KmcError):
    """The run's processes held more than CheckOptions.max_memory (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def format_size(n: int) -> str:
    """2.0 TiB, 8.0 GiB, 500 MiB, 64 KiB."""
    if n >= 1 << 40:
        return f"{n / (1 << 40):,.1f} TiB"
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB"
    return f"{n / 1024:.0f} KiB"


def check_memory(memory: TreeMemory, level: int, distinct: int, advice: str | Callable[[], str],
                 peak: bool = False) -> None:
    """Raise MemoryLimitError when the run's processes hold more than the
    limit of `memory` (checker/search/proc.py: their PSS summed; with
    peak=True, when they ever did); `advice` (or what it returns) ends the message."""
    held = memory.over(peak)
    if held is not None:
        n = memory.processes if peak else memory.counted
        raise MemoryLimitError(f"memory limit {format_size(memory.limit)} reached at level {level} after "
                               f"{distinct:,} distinct states (the run's {n} "
                               f"process{'es' if n != 1 else ''} hold{'s' if n == 1 else ''} "
                               f"{format_size(held)}); "
                               f"{advice() if callable(advice) else advice}")


class DiskLimitError(KmcError):
    """The run would leave less than CheckOptions.min_free_disk free on the
    disk it writes to (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def check_disk(limit: int | None, folder, level: int, distinct: int, advice: str | Callable[[], str],
               written: int = 0, per_level: Sequence[int] = ()) -> None:
    """Raise DiskLimitError when the filesystem of `folder` has less than
    `limit` bytes free (None: no limit), or would have once level + 1 is
    written, if it grows as `level` did (`written` bytes; per_level: the
    distinct states of each level); `advice` ends the message."""
    if limit is None:
        return
    d = per_level
    need = int(written * d[level] / d[level - 1]) if 0 < level < len(d) and d[level - 1] else 0
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # the folder is not there (yet): nothing written to guard
    if free - need >= limit:
        return
    short = (f"{format_size(free)} free, and level {level + 1} would take about {format_size(need)}" if need
             else f"only {format_size(free)} free")
    raise DiskLimitError(f"disk limit reached at level {level} after {distinct:,} distinct states: "
                         f"the disk of {folder} has {short}; kmc keeps {format_size(limit)} free "
                         f"(--min-free-disk); {advice() if callable(advice) else advice}")


class Limits:
    """The stops a search checks between chunks and levels: a ^C or SIGTERM
    whose exception was dropped (checker/search/stop.py), --max-memory over
    the run's processes, --min-free-disk on the disk it writes to. advice
    functions end the messages (how to go on)."""

    def __init__(self, options, memory: TreeMemory, memory_advice: Callable[[], str],
                 disk_advice: Callable[[], str]):
        self.options = options
        self.memory = memory
        self.memory_advice = memory_advice
        self.disk_advice = disk_advice

    def between_chunks(self, level: int, distinct: int, folder=None) -> None:
        """`folder`: where the run has files now (None: nothing to guard)."""
        from checker.search import stop
        stop.raise_pending()   # a ^C or SIGTERM whose exception was dropped
        self.memory.poll()
        check_memory(self.memory, level, distinct, self.memory_advice)
        if folder is not None:
            check_disk(self.options.min_free_disk, folder, level, distinct, self.disk_advice)

    def memory_now(self, level: int, distinct: int) -> None:
        """--max-memory on the figure just measured (a level's end, with
        what its workers said they held as they exited: a later measurement
        no longer sees them)."""
        check_memory(self.memory, level, distinct, self.memory_advice)

    def between_levels(self, level: int, distinct: int) -> None:
        """After a level whose work ran elsewhere (Spark's executors): the
        run's processes at their most during it."""
        from checker.search import stop
        stop.raise_pending()
        self.memory.measure()
        check_memory(self.memory, level, distinct, self.memory_advice, peak=True)

    def disk_growth(self, folder, level: int, distinct: int, written: int, per_level) -> None:
        """The disk's room for the next level, if it grows as `level` did
        (`written` bytes for it)."""
        check_disk(self.options.min_free_disk, folder, level, distinct, self.disk_advice, written, per_level)
