"""PerformPartitionReassignment ranges over every pair of broker subsets, so a
reassigning configuration has at most 8 brokers (docs/models.md); its state
space against TLC's: tests/conformance/test_tlc_reassignment.py."""
from __future__ import annotations

import pytest

from model.base import ModelConfigError
from model.registry import MODELS

KRAFT = MODELS["kraft"]


def test_nine_brokers_reassigning_are_refused():
    c = dict(BrokerCount=9, InitReplicationFactor=3, ReassignmentLimit=1)
    with pytest.raises(ModelConfigError, match=r"BrokerCount = 9 with ReassignmentLimit > 0 .* at most 8"):
        KRAFT.build("kip966", c)
    KRAFT.build("kip966", {**c, "ReassignmentLimit": 0})
    KRAFT.build("kip966", {**c, "BrokerCount": 8})
