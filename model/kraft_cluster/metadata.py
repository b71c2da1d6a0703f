"""The metadata log: a controller decision as a batch of records, and the
controller state a log replays to (what a new active controller rebuilds,
QuorumController's replay of its log)."""
from __future__ import annotations

from model.kraft.state import (
    BrokerReg, ControllerPartitionMetadata, PartitionChangeRecord, RegStatus)
from model.kraft_cluster.state import BrokerRegistrationChangeRecord, BrokerRegistrationRecord
from model.kraft_quorum.state import Command

EMPTY = frozenset()
APPEND = Command.AppendCommand


def batch_of(s, t) -> tuple:
    """The records of a controller decision taking kraft's controller state
    from s to t: registrations and fence / unfence changes (broker order),
    then the partition changes kraft appended."""
    records = []
    old, new = s.con_broker_reg, t.con_broker_reg
    if new is not old:
        for b, (r0, r1) in enumerate(zip(old, new), 1):
            if r0 == r1:
                continue
            if (r0.broker_epoch, r0.incarnation_id) != (r1.broker_epoch, r1.incarnation_id):
                records.append(BrokerRegistrationRecord(b, r1.broker_epoch, r1.incarnation_id))
                if r1.status == RegStatus.FENCED:
                    records.append(BrokerRegistrationChangeRecord(b, r1.broker_epoch, True))
            else:
                records.append(BrokerRegistrationChangeRecord(
                    b, r1.broker_epoch, r1.status == RegStatus.FENCED))
    if t.con_metadata_log is not s.con_metadata_log:
        records.extend(t.con_metadata_log[len(s.con_metadata_log):])
    return tuple(records)


def initial_batch(k0) -> tuple:
    """The records that replay to kraft's initial controller state."""
    records = []
    for b, r in enumerate(k0.con_broker_reg, 1):
        records.append(BrokerRegistrationRecord(b, r.broker_epoch, r.incarnation_id))
        if r.status == RegStatus.FENCED:
            records.append(BrokerRegistrationChangeRecord(b, r.broker_epoch, True))
    return tuple(records) + k0.con_metadata_log


def records_of(entries) -> list:
    """The metadata records of quorum log entries, in log order."""
    return [r for e in entries if e.command == APPEND for r in e.value]


def replay(n: int, entries) -> dict:
    """kraft's controller variables after applying every record of `entries`
    (the broker-epoch counter: the highest epoch registered)."""
    reg = [BrokerReg(RegStatus.FENCED, 0, 0)] * n
    cpm, log, epoch = None, [], 0
    for r in records_of(entries):
        if type(r) is BrokerRegistrationRecord:
            reg[r.broker - 1] = BrokerReg(RegStatus.UNFENCED, r.broker_epoch, r.incarnation_id)
            epoch = max(epoch, r.broker_epoch)
        elif type(r) is BrokerRegistrationChangeRecord:
            reg[r.broker - 1] = reg[r.broker - 1]._replace(
                status=RegStatus.FENCED if r.fenced else RegStatus.UNFENCED)
        else:
            cpm = ControllerPartitionMetadata(
                r.replicas, r.isr, r.elr, r.last_known_elr, r.leader, r.leader_epoch,
                r.partition_epoch, r.adding or EMPTY, r.removing or EMPTY)
            log.append(r)
    return dict(con_unfenced=frozenset(b for b, r in enumerate(reg, 1) if r.status == RegStatus.UNFENCED),
                con_broker_reg=tuple(reg), con_partition_metadata=cpm,
                con_metadata_log=tuple(log), aux_broker_epoch=epoch)


_pcr_memo: dict[int, tuple] = {}


def partition_log(committed: tuple) -> tuple:
    """The partition change records of a committed log (what brokers fetch
    and apply), one object per log object."""
    hit = _pcr_memo.get(id(committed))
    if hit is not None and hit[0] is committed:
        return hit[1]
    pcrs = tuple(r for r in records_of(committed) if type(r) is PartitionChangeRecord)
    if len(_pcr_memo) >= 1 << 14:
        _pcr_memo.clear()
    _pcr_memo[id(committed)] = (committed, pcrs)
    return pcrs


def is_prefix(short: tuple, long: tuple) -> bool:
    return len(short) <= len(long) and (short is long or long[:len(short)] == short)
