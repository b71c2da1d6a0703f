"""The Spark engine's codec lives in checker/codec.py (the local engine
spills its frontiers in the same format); this module re-exports it for the
spark modules that import it from here."""
from checker.codec import *  # noqa: F401,F403
from checker.codec import __all__  # noqa: F401
