"""The local (and auto) engine's finished levels kept on disk, so that a run can go on
after an interruption (`kmc check SPEC --checkpoint`, then `kmc check SPEC
--resume RUN_DIR`), as TLC's -checkpoint and -recover do.

RUN_DIR/levels/ holds, for every finished level L:
- level-L.<array>: the level's log as the search keeps it (fingerprint,
  parent fingerprint and action id of each new state, uint64 / uint32
  arrays), written once;
- frontier-L.bin: the states the next level expands, in the frontier's own
  packed records (only the newest level's is kept);
- state-L.pickle: the search's counters (generated, per action and level,
  witnesses, first violations, the action table, the time spent);
- checkpoint.json: which level is the newest finished one, its files with
  their sizes and xxh3 digests (a resume refuses a truncated or altered
  file with one line, rather than resuming from wrong data), and the
  identity of the check (model, constants, properties, options), which a
  resume must match.
Each file is fsynced before the checkpoint.json naming it replaces the old
one, so an interruption at any moment leaves the previous level resumable.
A run that writes into the folder (or resumes from it) holds an exclusive
flock on levels/kmc.lock from its first save or its resume to its end: a
second run on the same folder is refused in one line (the folder is in use)
rather than deleting the live run's files; the OS drops the lock when the
process dies, however it dies (SIGKILL included), and forked workers close
their copy (an at-fork hook), so the lock lives exactly as long as the run.
load() checks the manifest's every field (types, the level against its logs
and counters, the frontier file against its record count) before using it:
a damaged manifest is one line, never a traceback.
The seen set is not written: it is the union of the logs' fingerprints,
rebuilt on resume (BFS by levels keeps every first discovery in its log).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import pickle
import time
import weakref
from pathlib import Path
from typing import Any

from checker.search.errors import KmcError, SpecError
from checker.search.files import digest_problem, file_digest
from checker.search.frontier import _HEAD

MANIFEST = "checkpoint.json"
LOCK = "kmc.lock"   # in the levels folder: flocked by the run writing there
FORMAT = 2  # 2: every file's size and digest in the manifest


class RunStopped(KmcError):
    """The run stopped after a finished level on request (the
    KMC_STOP_AFTER_LEVEL hook, as the spark engine's); resume it."""

    exit_code = 130


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # (a full disk): no partial file left behind
        tmp.unlink(missing_ok=True)
        raise


class FolderInUse(SpecError):
    """The run folder's levels are being written by another kmc run (exit 2)."""


class _FolderLock:
    """An exclusive, non-blocking flock on folder/kmc.lock, held until
    release() (or the process's end: the OS drops it then)."""

    def __init__(self, folder: Path):
        self.path = folder / LOCK
        self.fd: int | None = None
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise SpecError(f"cannot lock {self.path}: {e.strerror or e}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = ""
            try:
                pid = os.pread(self.fd, 64, 0).decode("ascii", "replace").strip()
                holder = f" (pid {pid})" if pid.isdigit() else ""
            except OSError:
                pass
            self.release()
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise FolderInUse(f"{folder.parent} is in use by another kmc run{holder}: wait for it "
                                  f"to end (or stop it), then resume") from None
            raise SpecError(f"cannot lock {self.path}: {e.strerror or e}") from None
        try:  # who holds it, for the line of a run refused
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass
        _HELD.add(self)

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)   # (the lock goes with the process's last descriptor of it)

    def __del__(self):
        self.release()


_HELD = weakref.WeakSet()


def _close_in_child() -> None:
    """A forked child (the auto engine's workers) drops its copy of every
    held lock's descriptor: closing a copy never releases the parent's lock,
    and the lock then lives as long as the run that took it, not its workers."""
    for lock in list(_HELD):
        fd, lock.fd = lock.fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


# what a run's identity holds, as the command line (or the spec) sets it
_OPTION_OF = {"max_depth": "--depth", "check_deadlock": "--deadlock", "stop_on_violation": "--continue",
              "constants": "--set (the constants)", "properties": "--invariant (the invariants)",
              "model": "the spec's model", "variant": "the spec's variant",
              "fingerprint_bits": "the spec's fingerprint", "projection": "the spec's projection",
              "format": "the run folder's format"}


def difference(key: str, run, here) -> str:
    """One setting in which a resume differs from its run, by the option
    that sets it: '--depth 11 in the run, 12 here'."""
    if key == "stop_on_violation":   # --continue is the opposite
        return (f"--continue {'not given' if run else 'given'} in the run, "
                f"{'not given' if here else 'given'} here")
    if key == "check_deadlock":
        return (f"{'--deadlock' if run else '--no-deadlock'} in the run, "
                f"{'--deadlock' if here else '--no-deadlock'} here")
    if key == "max_depth":
        return f"--depth {'none' if run is None else run} in the run, {'none' if here is None else here} here"
    if key == "constants" and isinstance(run, dict) and isinstance(here, dict):
        changed = [k for k in sorted(set(run) | set(here)) if run.get(k) != here.get(k)]
        return "--set " + ", ".join(f"{k}={json.dumps(run.get(k))} in the run, {json.dumps(here.get(k))} here"
                                    for k in changed)
    return f"{_OPTION_OF.get(key, key)}: {json.dumps(run)} in the run, {json.dumps(here)} here"


# what a run's identity holds, as the spec file says it
_SPEC_KEY_OF = {"max_depth": "depth", "check_deadlock": "check_deadlock",
                "properties": "invariants", "model": "model", "variant": "variant",
                "fingerprint_bits": "fingerprint", "projection": "projection"}


def spec_difference(key: str, run, here) -> str:
    """One setting in which the spec file differs from the one its run
    started with, by the spec's key: 'constants: MinISR 2 then, 3 now'."""
    if key == "constants" and isinstance(run, dict) and isinstance(here, dict):
        changed = [k for k in sorted(set(run) | set(here)) if run.get(k) != here.get(k)]
        return "constants: " + ", ".join(f"{k} {json.dumps(run.get(k))} then, {json.dumps(here.get(k))} now"
                                         for k in changed)
    def show(v):
        return "none" if v is None else json.dumps(v)
    return f"{_SPEC_KEY_OF.get(key, key)}: {show(run)} then, {show(here)} now"


def recorded_options(run_dir: Path) -> dict | None:
    """The command line that started the run in `run_dir` (its levels'
    manifest, or a spark run's run.json), None when it holds none."""
    for path in (Path(run_dir) / "levels" / MANIFEST, Path(run_dir) / "run.json"):
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        options = obj.get("options") if isinstance(obj, dict) else None
        if isinstance(options, dict):
            return options
    return None


def _plain_name(value) -> bool:
    return (isinstance(value, str) and value not in ("", ".", "..") and "/" not in value
            and "\\" not in value and "\0" not in value)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class Checkpoint:
    """The levels folder of one run: save() after each finished level,
    load() to go on from the newest one."""

    def __init__(self, folder: str | Path, identity: dict, options: dict | None = None):
        self.folder = Path(folder)
        self.identity = identity
        self.options = options   # the command line that started the run (kept, not compared)
        self.sealed = 0   # levels whose logs are in the folder (0: nothing saved yet)
        self._lock: _FolderLock | None = None

    def lock(self) -> None:
        """Hold the folder for this run (FolderInUse if another run does);
        kept until release()."""
        if self._lock is None or self._lock.fd is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise SpecError(f"cannot make {self.folder}: {e.strerror or e}") from None
            self._lock = _FolderLock(self.folder)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    def read_manifest(self) -> dict:
        try:
            obj = json.loads(self.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"{self.folder.parent} has no finished level to resume from "
                            f"({self.manifest} is missing: a run keeps its levels from the first "
                            f"level of 50,000 states, or from level 0 with --checkpoint)") from None
        except (OSError, ValueError) as e:
            raise SpecError(f"cannot read {self.manifest}: {e}") from None
        if not isinstance(obj, dict):
            raise SpecError(f"{self.manifest} is not a checkpoint manifest (a JSON object)")
        if obj.get("format") != FORMAT:
            raise SpecError(f"{self.manifest}: checkpoint format {obj.get('format')!r}, this kmc "
                            f"reads format {FORMAT}")
        identity = obj.get("identity")
        if not isinstance(identity, dict):
            raise SpecError(f"{self.manifest} is not a complete checkpoint manifest (no identity)")
        differ = sorted(k for k in set(identity) | set(self.identity)
                        if identity.get(k) != self.identity.get(k))
        ran = obj.get("options") if isinstance(obj.get("options"), dict) else {}
        spec, then = (self.options or {}).get("spec"), ran.get("spec_digest")
        if differ and then is not None and then != (self.options or {}).get("spec_digest"):
            raise SpecError(f"the spec file {spec} changed since the run in {self.folder.parent} "
                            f"started: " + "; ".join(spec_difference(k, identity.get(k), self.identity.get(k))
                                                    for k in differ)
                            + " (a run goes on with the spec it started with: undo the edit to "
                              "resume, or start a new run)")
        if differ:
            raise SpecError(f"{self.folder.parent} was checked with other settings: "
                            + "; ".join(difference(k, identity.get(k), self.identity.get(k))
                                        for k in differ)
                            + f" (kmc check --resume {self.folder.parent} alone goes on with the "
                              f"run's own options)")
        return obj

    def save(self, search, level: int, frontier) -> int:
        """Level `level` is finished: its log, the frontier that follows it
        and the counters go to disk, then the manifest names them. Returns
        the bytes the level's own files take."""
        self.lock()
        # the first save of a run that started saving late writes the levels before it too
        sealed = {lv: search.levels[lv].seal_into(self.folder, lv) for lv in range(self.sealed, level + 1)}
        log_files = sealed[level]
        frontier_file = self.folder / f"frontier-{level:05d}.bin"
        records = frontier.seal_into(frontier_file)
        state_file = self.folder / f"state-{level:05d}.pickle"
        counters = {
            "generated": search.generated,
            "per_action_generated": dict(search.per_action_generated),
            "per_action_distinct": dict(search.per_action_distinct),
            "per_level_distinct": list(search.per_level_distinct),
            "first_violation": dict(search.first_violation),
            "sometimes": dict(search.sometimes),
            "actions": list(search.actions),
            "elapsed_s": time.perf_counter() - search.start_time,
        }
        _write_bytes(state_file, pickle.dumps(counters, protocol=pickle.HIGHEST_PROTOCOL))
        old = self._previous()
        # the logs of earlier levels were digested when they were written
        digests = dict(old.get("digests", {})) if old is not None else {}
        for path in [*(p for files in sealed.values() for p in files.values()), frontier_file, state_file]:
            digests[Path(path).name] = file_digest(Path(path))
        if old is not None:
            for name in {old["state"], old["frontier"]["file"]} - {state_file.name, frontier_file.name}:
                digests.pop(name, None)
        obj = {"format": FORMAT, "identity": self.identity, "options": self.options, "level": level,
               "distinct": sum(search.per_level_distinct), "generated": search.generated,
               "per_level_distinct": list(search.per_level_distinct),
               "logs": [{name: Path(p).name for name, p in files.items()}
                        for files in (lv.files for lv in search.levels[:level])] + [
                   {name: Path(p).name for name, p in log_files.items()}],
               "frontier": {"file": frontier_file.name, "records": records, "states": len(frontier)},
               "state": state_file.name,
               "digests": digests,
               "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _fsync_dir(self.folder)
        # (no indent: json's indenting encoder leaves cyclic garbage, which
        # would switch level_gc's sampled collections off for the rest of the run)
        _write_bytes(self.manifest, (json.dumps(obj) + "\n").encode())
        _fsync_dir(self.folder)
        self.sealed = level + 1
        if old is not None:  # the level before: its counters and (read by now) frontier
            for name in {old["state"], old["frontier"]["file"]} - {state_file.name, frontier_file.name}:
                try:
                    (self.folder / name).unlink()
                except FileNotFoundError:
                    pass
        return sum(digests[Path(p).name][0] for p in [*log_files.values(), frontier_file, state_file])

    def _previous(self) -> dict | None:
        try:
            return json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def load(self, log_arrays: tuple | None = None) -> tuple[dict, dict]:
        """(the manifest, the counters) of the newest finished level, the
        folder locked for this run first (FolderInUse if another run holds
        it), the manifest's structure checked and every file it names
        checked against its size and digest. log_arrays: the arrays each
        level's log must name (the engine's, for its fingerprint bits)."""
        self.lock()
        obj = self.read_manifest()
        self._check_manifest(obj, log_arrays)
        names = [name for files in obj["logs"] for name in files.values()]
        names += [obj["frontier"]["file"], obj["state"]]
        digests = obj["digests"]
        for name in names:
            problem = digest_problem(self.folder / name, digests[name])
            if problem == "missing":
                raise SpecError(f"{self.folder}: {name} is missing (a damaged run folder)")
            if problem is not None:
                raise SpecError(f"{self.folder}: {name} is damaged ({problem}); the run cannot be "
                                f"resumed from it")
        try:
            with open(self.folder / obj["state"], "rb") as f:
                counters: dict[str, Any] = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
                ImportError, IndexError) as e:
            raise SpecError(f"cannot read the checkpoint's counters "
                            f"{self.folder / obj['state']}: {e}") from None
        self._check_counters(obj, counters)
        self._check_frontier(obj)
        self.sealed = obj["level"] + 1
        return obj, counters

    def _bad(self, what: str) -> SpecError:
        return SpecError(f"{self.manifest} is damaged: {what}; the run cannot be resumed from it")

    def _check_manifest(self, obj: dict, log_arrays: tuple | None) -> None:
        """Every field load() and the engine's resume rely on, of the right
        type and consistent with one another (a damaged or hand-edited
        manifest is one line, not a traceback or a wrong resume)."""
        bad = self._bad
        level = obj.get("level")
        if not _count(level):
            raise bad(f'"level" is {level!r}, not a level number (an integer >= 0)')
        logs = obj.get("logs")
        if not isinstance(logs, list):
            raise bad(f'"logs" is {type(logs).__name__}, not a list of the levels\' files')
        if len(logs) != level + 1:
            raise bad(f'{len(logs)} level logs for level {level} (levels 0 to {level}: {level + 1})')
        for lv, files in enumerate(logs):
            if not isinstance(files, dict) or not files:
                raise bad(f"the log of level {lv} is {files!r}, not the files of a level")
            if log_arrays is not None and set(files) != set(log_arrays):
                raise bad(f"the log of level {lv} names {sorted(map(str, files))}, not "
                          f"{sorted(log_arrays)}")
            for name in files.values():
                if not _plain_name(name):
                    raise bad(f"the log of level {lv} names {name!r}, not a file of the folder")
        frontier = obj.get("frontier")
        if not isinstance(frontier, dict):
            raise bad(f'"frontier" is {frontier!r}, not the newest level\'s frontier file')
        if not _plain_name(frontier.get("file")):
            raise bad(f'the frontier\'s "file" is {frontier.get("file")!r}, not a file of the folder')
        for key in ("records", "states"):
            if not _count(frontier.get(key)):
                raise bad(f'the frontier\'s "{key}" is {frontier.get(key)!r}, not a count')
        if not _plain_name(obj.get("state")):
            raise bad(f'"state" is {obj.get("state")!r}, not a file of the folder')
        digests = obj.get("digests")
        if not isinstance(digests, dict):
            raise bad(f'"digests" is {type(digests).__name__}, not the files\' digests')
        for name in [n for files in logs for n in files.values()] + [frontier["file"], obj["state"]]:
            d = digests.get(name)
            if not (isinstance(d, list) and len(d) == 2 and _count(d[0]) and isinstance(d[1], str)):
                raise bad(f"the digest of {name} is {d!r}, not [size, digest]")
        pld = obj.get("per_level_distinct")
        if pld is not None and not (isinstance(pld, list) and len(pld) == level + 1
                                    and all(_count(n) for n in pld)):
            raise bad(f'"per_level_distinct" does not match level {level}')

    def _check_counters(self, obj: dict, c) -> None:
        """The counters file (digested, so as written) against the manifest."""
        bad = self._bad
        level = obj["level"]
        kinds = {"generated": int, "per_action_generated": dict, "per_action_distinct": dict,
                 "per_level_distinct": list, "first_violation": dict, "sometimes": dict,
                 "actions": list, "elapsed_s": (int, float)}
        if not isinstance(c, dict) or any(not isinstance(c.get(k), t) for k, t in kinds.items()):
            raise SpecError(f"{self.folder / obj['state']} is not the counters of a checkpoint")
        pld = c["per_level_distinct"]
        if len(pld) != level + 1 or not all(_count(n) for n in pld):
            raise bad(f"level {level}, but its counters ({obj['state']}) are of "
                      f"{len(pld)} levels")
        if obj.get("per_level_distinct") is not None and list(obj["per_level_distinct"]) != pld:
            raise bad(f'"per_level_distinct" differs from the counters in {obj["state"]}')

    def _check_frontier(self, obj: dict) -> None:
        """The frontier file holds exactly "records" records of "states"
        states in all (only the records' heads are read)."""
        f = obj["frontier"]
        path = self.folder / f["file"]
        width = (self.identity.get("fingerprint_bits") or 64) // 8
        records = states = 0
        try:
            size = path.stat().st_size
            with open(path, "rb") as fh:
                at = 0
                while at < size and records <= f["records"]:
                    head = fh.read(_HEAD.size)
                    if len(head) < _HEAD.size:
                        break
                    ns, nf = _HEAD.unpack(head)
                    at += _HEAD.size + ns + nf
                    fh.seek(at)
                    records += 1
                    states += nf // width
        except OSError as e:
            raise SpecError(f"cannot read {path}: {e}") from None
        if at != size or records != f["records"] or states != f["states"]:
            raise self._bad(f"its frontier {f['file']} holds {records} records of {states} states, "
                            f"not {f['records']} of {f['states']}")
