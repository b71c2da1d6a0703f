"""The seen set: every fingerprint found so far.

`new_seen_set(bits)` gives the compiled FingerprintSet for 64-bit
fingerprints (an open-addressing table of uint64: 11-21 bytes a state)
where checker.search._native is built, else a Python set (~70-90 bytes a state).
Both answer `fp in seen`, `seen.add(fp)`, `len(seen)`, iteration.
"""
from __future__ import annotations

from checker.search import native


def new_seen_set(bits: int = 64):
    if bits == 64 and native.ENABLED:
        return native._native.FingerprintSet()
    return set()
