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
The seen set is not written: it is the union of the logs' fingerprints,
rebuilt on resume (BFS by levels keeps every first discovery in its log).
"""
from __future__ import annotations

import json
import os
import pickle
import time
from pathlib import Path
from typing import Any

from checker.search.errors import KmcError, SpecError
from checker.search.files import digest_problem, file_digest

MANIFEST = "checkpoint.json"
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


class Checkpoint:
    """The levels folder of one run: save() after each finished level,
    load() to go on from the newest one."""

    def __init__(self, folder: str | Path, identity: dict):
        self.folder = Path(folder)
        self.identity = identity
        self.sealed = 0   # levels whose logs are in the folder (0: nothing saved yet)

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    def read_manifest(self) -> dict:
        try:
            obj = json.loads(self.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"{self.folder.parent} has no finished level to resume from "
                            f"({self.manifest} is missing: not a run made with --checkpoint, "
                            f"or it stopped before level 0 was written)") from None
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
        if differ:
            raise SpecError(f"{self.folder.parent} was checked with other settings; it differs in: "
                            f"{', '.join(differ)} (resume with the same spec, --set, --depth, "
                            f"--invariant and --continue/--deadlock options)")
        return obj

    def save(self, search, level: int, frontier) -> int:
        """Level `level` is finished: its log, the frontier that follows it
        and the counters go to disk, then the manifest names them. Returns
        the bytes the level's own files take."""
        self.folder.mkdir(parents=True, exist_ok=True)
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
            "elapsed_s": time.perf_counter() - search.start,
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
        obj = {"format": FORMAT, "identity": self.identity, "level": level,
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

    def load(self) -> tuple[dict, dict]:
        """(the manifest, the counters) of the newest finished level, every
        file it names checked against its size and digest first."""
        obj = self.read_manifest()
        try:
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
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SpecError(f"{self.manifest} is not a complete checkpoint manifest "
                            f"({type(e).__name__}: {e})") from None
        try:
            with open(self.folder / obj["state"], "rb") as f:
                counters: dict[str, Any] = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError) as e:
            raise SpecError(f"cannot read the checkpoint's counters "
                            f"{self.folder / obj['state']}: {e}") from None
        self.sealed = obj["level"] + 1
        return obj, counters
