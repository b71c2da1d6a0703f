"""Make this folder's helper modules (tla_values, tlc_reference) importable by
the tests here and in tests/kraft_invariants, whatever pytest's import mode."""
import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
