"""A BFS level's frontier for the local engine (checker.search.core.Search): its
entries (state, parts, fingerprint) in discovery order, handed out chunk by
chunk.

A small frontier is a list of the entries themselves, as the engine made
them. Past `threshold` entries it is packed: every CHUNK entries become one
record (the states' parts by column, checker.search.codec.pack_states, and the
fingerprints packed), appended to a file in the search's spill folder, so
the frontier costs at most one chunk of live entries in memory, and the
disk (page cache) holds the rest. Its chunks are read back in order and
rebuilt by a StateDecoder: the states share their equal sub-values (so the
encoder's identity caches hit on them as on generated states), and each entry
carries its stored parts and fingerprint, so nothing is re-encoded or
re-hashed. Chunk boundaries are the list's (every CHUNK entries), so the
search visits the same entries in the same chunks either way.
"""
from __future__ import annotations

import os
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from checker.search.codec import StateDecoder, pack_fps, pack_states, unpack_fps

_HEAD = struct.Struct("<II")  # bytes of the packed states, bytes of the packed fingerprints


def write_record(write, states: bytes, fps: bytes) -> None:
    """One record of a frontier file: a chunk's packed states and fingerprints
    (the auto engine's packed levels are written in this form too)."""
    write(_HEAD.pack(len(states), len(fps)))
    write(states)
    write(fps)


class SpillDir:
    """The search's temporary folder (made on first use, removed by close())."""

    def __init__(self, parent: str | None = None):
        self.parent = parent
        self.path: Path | None = None
        self._n = 0

    def file(self, stem: str) -> Path:
        if self.path is None:
            self.path = Path(tempfile.mkdtemp(prefix="kmc-search-", dir=self.parent))
        self._n += 1
        return self.path / f"{stem}-{self._n}"

    def close(self) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None


class Frontier:
    """Entries appended with extend(), read back once with chunks().

    keep=False: only counted (the level at the depth bound, which is never
    expanded)."""

    def __init__(self, chunk: int, threshold: int | None, spill: SpillDir | None,
                 decoder: StateDecoder | None, bits: int = 64, keep: bool = True):
        self.chunk = chunk
        self.threshold = threshold if spill is not None and decoder is not None else None
        self.spill = spill
        self.decoder = decoder
        self.bits = bits
        self.keep = keep
        self.entries: list = []        # all entries, or (packed) the ones after the last record
        self.count = 0
        self.path: Path | None = None
        self._out = None
        self.records = 0
        self.saved: Path | None = None   # an in-memory frontier's copy for a resume

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    @property
    def packed(self) -> bool:
        return self.path is not None

    def extend(self, entries: Iterable[tuple]) -> None:
        if not self.keep:
            self.count += sum(1 for _ in entries)
            return
        n = len(self.entries)
        self.entries.extend(entries)
        self.count += len(self.entries) - n
        if self.path is None:
            if self.threshold is None or self.count <= self.threshold:
                return
            self.path = self.spill.file("frontier")
            self._out = open(self.path, "wb", buffering=1 << 20)
        if len(self.entries) >= self.chunk:
            self._write()

    def _write(self) -> None:
        """Every full chunk of the buffered entries to the file."""
        entries, chunk, write = self.entries, self.chunk, self._out.write
        full = len(entries) - len(entries) % chunk
        for start in range(0, full, chunk):
            self._record(write, entries[start:start + chunk])
            self.records += 1
        del entries[:full]

    def _record(self, write, part: list) -> None:
        write_record(write, pack_states([e[1] for e in part]), pack_fps([e[2] for e in part], self.bits))

    def seal_into(self, dest: Path) -> int:
        """Every entry into records of file `dest` (the trailing ones as a last,
        shorter record: the chunks stay the same), fsynced, for a resume;
        a packed frontier then reads its chunks from there. Returns the
        number of records."""
        if self.path is None:  # in memory: written for a resume, read from memory
            tmp = Path(dest).with_name(f".{Path(dest).name}.tmp")
            with open(tmp, "wb") as out:
                for start in range(0, len(self.entries), self.chunk):
                    self._record(out.write, self.entries[start:start + self.chunk])
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, dest)
            self.saved = Path(dest)
            return -(-len(self.entries) // self.chunk)
        if self.entries:
            self._record(self._out.write, self.entries)
            self.records += 1
            self.entries = []
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()
        self._out = None
        os.replace(self.path, dest)
        self.path = Path(dest)
        return self.records

    @classmethod
    def from_file(cls, path: Path, records: int, count: int, chunk: int, decoder: StateDecoder,
                  bits: int = 64) -> "Frontier":
        """A frontier that seal_into wrote, read back by chunks()."""
        frontier = cls(chunk, None, None, decoder, bits)
        frontier.path = Path(path)
        frontier.records = records
        frontier.count = count
        return frontier

    def chunks(self) -> Iterator[list]:
        """The entries in order, CHUNK at a time (the last chunk shorter),
        whatever the sizes of the file's records."""
        if self.path is None:
            entries, chunk = self.entries, self.chunk
            for start in range(0, len(entries), chunk):
                yield entries[start:start + chunk]
            return
        decode, bits, chunk = self.decoder.decode_batch, self.bits, self.chunk
        # (the auto engine writes a level's records as its workers made them:
        # they are cut here into the chunks of a list, the same either way)
        held: list = []
        for states, packed_fps in self.packed_records():
            entries = [(s, p, fp) for (s, p), fp in zip(decode(states), unpack_fps(packed_fps, bits))]
            if not held and len(entries) == chunk:
                yield entries
                continue
            held += entries
            while len(held) >= chunk:
                yield held[:chunk]
                del held[:chunk]
        held += self.entries
        for start in range(0, len(held), chunk):
            yield held[start:start + chunk]

    def packed_records(self) -> Iterator[tuple[bytes, bytes]]:
        """A packed frontier's records as written, (packed states, packed
        fingerprints), nothing rebuilt (the auto engine hands them to its
        workers as they are); the entries after the last record are
        `entries`."""
        if self.path is None:
            return
        if self._out is not None:
            self._out.close()
            self._out = None
        with open(self.path, "rb", buffering=1 << 20) as f:
            read = f.read
            for _ in range(self.records):
                ns, nf = _HEAD.unpack(read(_HEAD.size))
                yield read(ns), read(nf)

    def close(self) -> None:
        """Drop the entries and the file."""
        self.entries = []
        if self._out is not None:
            self._out.close()
            self._out = None
        for path in (self.path, self.saved):
            if path is not None:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
