"""A BFS level's parent pointers: (fingerprint, parent fingerprint, action
id) per new state, the local and auto engines' way to a shortest
counterexample (and what a checkpoint keeps of a level)."""
from __future__ import annotations

import os
from array import array
from pathlib import Path
from typing import Sequence

NO_ACTION = 0xFFFFFFFF         # action id of an initial state (no parent)


class LevelLog:
    """One BFS level's (fingerprint, parent fingerprint, action id), as compact
    arrays of unsigned 64-bit ints (two each for 128-bit fingerprints).

    With a spill folder, every BLOCK entries go to one file per array and
    leave memory: the log is only read for a counterexample (find, parent,
    action), which reads the files back a block at a time."""

    __slots__ = ("bits", "fps", "parents", "actions", "fps_hi", "parents_hi", "spill", "files",
                 "spilled", "block")
    _MASK = (1 << 64) - 1
    BLOCK = 1 << 16

    def __init__(self, bits: int = 64, spill=None, block: int | None = None):
        self.bits = bits
        self.fps = array("Q")
        self.parents = array("Q")
        self.actions = array("I")
        if bits == 128:
            self.fps_hi = array("Q")
            self.parents_hi = array("Q")
        self.spill = spill          # a checker.search.frontier.SpillDir, or None: all in memory
        self.files: dict | None = None
        self.spilled = 0            # entries in the files (they come first)
        self.block = block or self.BLOCK

    def _names(self) -> tuple:
        return ("fps", "parents", "actions") + (("fps_hi", "parents_hi") if self.bits == 128 else ())

    def __len__(self) -> int:
        return self.spilled + len(self.fps)

    def add(self, fps: Sequence[int], parents: Sequence[int], actions: Sequence[int]) -> None:
        if self.bits == 64:
            self.fps.extend(fps)
            self.parents.extend(parents)
        else:
            m = self._MASK
            self.fps.extend(f & m for f in fps)
            self.fps_hi.extend(f >> 64 for f in fps)
            self.parents.extend(f & m for f in parents)
            self.parents_hi.extend(f >> 64 for f in parents)
        self.actions.extend(actions)
        if self.spill is not None and len(self.fps) >= self.block:
            self._flush()

    def _flush(self) -> None:
        if self.files is None:
            self.files = {name: self.spill.file(f"log-{name}") for name in self._names()}
        self.spilled += len(self.fps)
        for name in self._names():
            arr = getattr(self, name)
            with open(self.files[name], "ab") as f:
                arr.tofile(f)
            setattr(self, name, array(arr.typecode))

    def seal_into(self, folder, level: int) -> dict:
        """Every entry of the (finished) level into files folder/level-L.<array>,
        fsynced (spilled blocks are moved there, on the same filesystem);
        the log reads them from there on. Returns {array: path}."""
        dest = {name: Path(folder) / f"level-{level:05d}.{name}" for name in self._names()}
        n = len(self.fps)
        for name in self._names():
            arr = getattr(self, name)
            src = self.files[name] if self.files is not None else dest[name].with_name(
                f".{dest[name].name}.tmp")
            with open(src, "ab" if self.files is not None else "wb") as f:
                arr.tofile(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(src, dest[name])
            setattr(self, name, array(arr.typecode))
        self.spilled += n
        self.files = dest
        return dest

    @classmethod
    def from_files(cls, bits: int, files: dict, n: int) -> "LevelLog":
        """A finished level's log read from the files seal_into wrote."""
        log = cls(bits)
        log.files = dict(files)
        log.spilled = n
        return log

    def _blocks(self, name: str):
        """(offset, array) of `name`, the spilled blocks first, then memory's."""
        if self.files is not None:
            with open(self.files[name], "rb") as f:
                done = 0
                while done < self.spilled:
                    arr = array(getattr(self, name).typecode)
                    arr.fromfile(f, min(self.block, self.spilled - done))
                    yield done, arr
                    done += len(arr)
        yield self.spilled, getattr(self, name)

    def fingerprints(self):
        """Every fingerprint of the level, in order (the spilled ones read back:
        while the search runs, which removes its spill folder at the end)."""
        if self.bits == 64:
            for _, block in self._blocks("fps"):
                yield from block
            return
        for (_, lo), (_, hi) in zip(self._blocks("fps"), self._blocks("fps_hi")):
            yield from (a | (b << 64) for a, b in zip(lo, hi))

    def _at(self, name: str, i: int) -> int:
        if i >= self.spilled:
            return getattr(self, name)[i - self.spilled]
        arr = array(getattr(self, name).typecode)
        with open(self.files[name], "rb") as f:
            f.seek(i * arr.itemsize)
            arr.fromfile(f, 1)
        return arr[0]

    def find(self, fp: int) -> int:
        """Index of fingerprint fp in this level (ValueError if absent)."""
        lo = fp & self._MASK if self.bits == 128 else fp
        for offset, block in self._blocks("fps"):
            start = 0
            while True:
                try:
                    i = block.index(lo, start)
                except ValueError:
                    break
                if self.bits == 64 or self._at("fps_hi", offset + i) == fp >> 64:
                    return offset + i
                start = i + 1
        raise ValueError(f"fingerprint {fp:x} is not in this level")

    def parent(self, i: int) -> int:
        if self.bits == 64:
            return self._at("parents", i)
        return self._at("parents", i) | (self._at("parents_hi", i) << 64)

    def action(self, i: int) -> int:
        return self._at("actions", i)
