import sys
from pathlib import Path

# the spark tests' helpers (assert_same, the kraft constants) are shared
_SPARK = str(Path(__file__).resolve().parents[1] / "spark")
if _SPARK not in sys.path:
    sys.path.insert(0, _SPARK)
