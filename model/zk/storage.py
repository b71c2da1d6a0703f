"""A broker's disk: the asynchronous log flush and the HW checkpoint
(0.8 replication design: "Each log is periodically synced to disks"; "From time to time,
each replica checkpoints its HW to its disk"; detailed design V2: "the broker
periodically stores its HW in a checkpoint file"). Both happen at any time:
each is a nondeterministic step. A flush syncs the whole log written so far.
"""
from __future__ import annotations

from model.zk.state import put, with_changes


def flush_log(k, s, b, out):
    """FlushLog(b): the log up to its end is synced to disk - by Kafka, or by
    the OS writing the page cache back, which it does for a stopped broker too
    (after a process crash: the only stop that leaves an unflushed tail)."""
    leo = len(s.log[b])
    if s.flushed[b] == leo:
        return
    out.append((k.acts["FlushLog"][b], with_changes(s, {"flushed": put(s.flushed, b, leo)})))


def checkpoint_hw(k, s, b, out):
    """CheckpointHw(b): the in-memory HW is written to the checkpoint file."""
    if not s.running[b]:
        return
    hw = s.hw[b]
    if s.ckpt_hw[b] == hw:
        return
    out.append((k.acts["CheckpointHw"][b], with_changes(s, {"ckpt_hw": put(s.ckpt_hw, b, hw)})))
