"""Everything kmc reads of /proc (Linux), in one place: the machine's memory
(MemTotal, MemAvailable), this process's address space, the CPU's idle
time, and the memory of a run's whole process tree.

A run's memory (`TreeMemory`) is the sum, over the run's process and every
process below it (the auto engine's forked workers; Spark's driver JVM and
the Python workers it forks; on a standalone cluster on this machine, the
run's executors and their Python workers too), of each process's PSS,
"proportional set size" (/proc/PID/smaps_rollup): its resident pages, each
page shared between n processes counted 1/n in each. So a page shared by a
forked worker and its parent is counted once in the sum, as is the Python
interpreter's code shared by every process. Where smaps_rollup cannot be
read, that process's resident set (/proc/PID/statm) stands in, a figure at
least as high. Without /proc (not Linux) the run's own peak resident set
(getrusage) is all there is.

`bytes_per_state` and the peak in summary.json are this figure's peak, and
`--max-memory` watches the same figure (CheckOptions.max_memory).
"""
from __future__ import annotations

import os
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Callable

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
HAVE_PROC = Path("/proc/self/statm").exists()
METHOD = ("the sum of PSS (/proc/PID/smaps_rollup: shared pages counted once, split between "
          "their sharers) over the run's process tree" if HAVE_PROC
          else "the run's own peak resident set (getrusage: no /proc here)")


# ---- the machine, this process --------------------------------------------------------

def _kb_line(path: str, key: str) -> int | None:
    """A "key: N kB" line of a /proc file, in bytes (None: no such file or line)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_memory(key: str = "MemTotal") -> int | None:
    """/proc/meminfo's MemTotal or MemAvailable, in bytes."""
    return _kb_line("/proc/meminfo", key)


def age() -> float | None:
    """Seconds since this process started (/proc/self/stat's start time
    against /proc/uptime; None where there is no /proc): the interpreter's
    start and the imports included."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def own_status(key: str) -> int | None:
    """/proc/self/status's VmRSS or VmSize, in bytes."""
    return _kb_line("/proc/self/status", key)


def cpu_idle() -> tuple[int, int] | None:
    """(idle + iowait, all) jiffies of every core so far (/proc/stat)."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return values[3] + values[4], sum(values)


# ---- processes ---------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    """The processes `pid`'s threads forked (any thread may: the JVM's do)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return out


def tree(roots) -> list[int]:
    """The processes `roots` and every one below them, each once."""
    out: list[int] = []
    seen: set = set()
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        stack += children(pid)
    return out


def rss(pid: int) -> int | None:
    """A process's resident set now (/proc/PID/statm), in bytes."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return None


def pss(pid: int) -> int | None:
    """A process's proportional set size now (/proc/PID/smaps_rollup), in
    bytes; its resident set where smaps_rollup is not readable; None: gone."""
    value = _kb_line(f"/proc/{pid}/smaps_rollup", "Pss")
    return value if value is not None else rss(pid)


def parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def ancestor_matching(pid: int, word: str, up: int = 4) -> int | None:
    """The nearest of `pid` and its `up` ancestors whose command line holds
    `word` (a Spark executor JVM above its Python workers)."""
    for _ in range(up + 1):
        if pid is None or pid <= 1:
            return None
        if word in command_line(pid):
            return pid
        pid = parent(pid)
    return None


def _own_peak() -> int:
    """This process's and its waited-for children's peak resident sets (getrusage)."""
    scale = 1 if sys.platform == "darwin" else 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale)


# ---- a run's memory --------------------------------------------------------------------------

class TreeMemory:
    """The memory of a run's process tree (module docstring): `measure()`
    reads it now (and keeps the peak); `poll()`, between chunks or levels,
    measures when it is due. A measurement costs ~12 ms per GiB resident
    (the kernel walks the page tables) and 2 ms or so a process, so it is
    due at most every `share` times its last cost (and every `min_interval`
    s): under 1% of the run, and a small part of the auto engine's
    coordinating process. With a limit, `poll()` also sums the tree's
    resident sets (an upper bound of the figure; tens of microseconds a
    process, so at most every `upper_interval` s) and measures at once when
    they pass the limit."""

    def __init__(self, limit: int | None = None, roots=None, min_interval: float = 1.0,
                 share: float = 100.0, upper_interval: float = 0.1):
        self.limit = limit
        self.roots = list(roots) if roots is not None else [os.getpid()]
        self.min_interval = min_interval
        self.share = share
        self.upper_interval = upper_interval
        self.upper_due = 0.0
        self.peak = 0               # bytes, the highest measured
        self.current = 0            # bytes, the last measured
        self.counted = 1            # processes in the last measurement
        self.processes = 1          # processes in the tree at the peak
        self.most_processes = 1
        self.due = 0.0
        self.stamp = 0.0            # time.monotonic() of the last measurement
        self.upper: Callable[[], int] | None = None   # delegate()'s
        self.interval: float | None = None
        self.method = METHOD
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def add_root(self, pid: int) -> None:
        """A process outside this one's tree that belongs to the run (a
        standalone cluster's executor on this machine)."""
        with self._lock:
            if pid not in self.roots:
                self.roots.append(pid)

    def measure(self, exclude=(), extra: int = 0, extra_processes: int = 0) -> int:
        """The tree's figure now, in bytes; the peak kept. exclude, extra: the
        processes whose figure was read elsewhere (the auto engine's workers
        read their own, and the coordinator's, at a level's end; or said what
        they held as they exited) and their sum, in place of reading them here."""
        if not HAVE_PROC:
            self.current = _own_peak()
            self.peak = max(self.peak, self.current)
            return self.current
        t = time.perf_counter()
        with self._lock:
            roots = list(self.roots)
        pids = [p for p in tree(roots) if p not in set(exclude)]
        total = sum(v for v in map(pss, pids) if v is not None) + extra
        n = len(pids) + (extra_processes or len(exclude))
        cost = time.perf_counter() - t
        with self._lock:
            self.current, self.counted = total, n
            self.most_processes = max(self.most_processes, n)
            if total >= self.peak:
                self.peak, self.processes = total, n
            self.stamp = time.monotonic()
            self.due = self.stamp + max(self.min_interval, cost * self.share)
        return total

    def final_peak(self) -> int:
        """The peak, the run's end measured too."""
        self.measure()
        return self.peak

    def is_due(self) -> bool:
        return time.monotonic() >= self.due

    def delegate(self, upper: Callable[[], int] | None, interval: float | None = None) -> None:
        """The run's processes measure themselves at each level's end (the auto
        engine's workers, where a measurement costs this process nothing):
        poll() then reads the tree here only once `interval` s have passed
        since the last measurement, and `upper()` (the resident sets as they
        last said them) stands in for reading theirs. None: undone."""
        self.upper = upper
        self.interval = interval

    def poll(self) -> int:
        """The figure as last measured, measured again when due (or when the
        resident sets pass the limit)."""
        now = time.monotonic()
        if now >= self.due and (self.interval is None or now >= self.stamp + self.interval):
            return self.measure()
        if self.limit is not None and HAVE_PROC and self.current <= self.limit and now >= self.upper_due:
            self.upper_due = now + self.upper_interval
            upper = self.upper() if self.upper is not None else sum(v for v in map(rss, tree(self.roots))
                                                                    if v is not None)
            if upper > self.limit:
                return self.measure()
        return self.current

    def over(self, peak: bool = False) -> int | None:
        """The figure (the peak, with peak=True) when it is above the limit, else None."""
        value = self.peak if peak else self.current
        return value if self.limit is not None and value > self.limit else None

    # a run whose main thread waits on others (Spark's driver): measured by a thread
    def start(self, interval: float = 0.5) -> "TreeMemory":
        if self._thread is None and HAVE_PROC:
            self._stop.clear()

            def run():
                while not self._stop.wait(max(interval, self.due - time.monotonic())):
                    try:
                        self.measure()
                    except (OSError, ValueError, IndexError):  # a process that ended while it was read
                        pass

            self._thread = threading.Thread(target=run, name="kmc-memory", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def summary(self) -> dict:
        """How the figure was taken (summary.json's "memory")."""
        return {"method": self.method, "processes": self.processes,
                "most_processes": self.most_processes}
