"""The simulation tests' helpers (sim_helpers.py) on the import path, as
tests/spark does with spark_helpers.py."""
import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
