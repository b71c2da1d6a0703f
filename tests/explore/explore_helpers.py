"""Shared helpers of tests/explore (importable: conftest.py puts this folder on sys.path)."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

from checker.front.explore import serve

ROOT = Path(__file__).resolve().parents[2]
LRS = ROOT / "specs" / "kraft-v3_5-last-replica-standing.toml"


@contextmanager
def served(explorer):
    """The explorer's server on a free port of 127.0.0.1, in a thread; its base URL."""
    server = serve(explorer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
