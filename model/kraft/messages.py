"""Messages of the `kraft` model: one NamedTuple per message record of the reference.

Vanlightly/kafka-tlaplus, kraft/{kip-966,v3.5}: the records built by the
actions (the *_types.tla declarations differ from them in places; the actions
win, since they make the states). Layout rules, relied on by the TLC state
graph parser of tests/conformance:
- `type: MsgType` is the first field of every message, so two messages of
  different kinds never compare equal as tuples;
- the other fields keep the reference names; a nested record is a NamedTuple
  of its own; a set is a frozenset; a sequence is a tuple; Nil is None;
- the model value `Controller` (a message's dest/source) is CONTROLLER = 0,
  never a broker id since brokers are 1..BrokerCount.
Deviations in shape, each harmless for state identity:
- RegisterBrokerRequest.broker_epoch exists only in kip966 (the epoch read
  from file); in v3_5 the record has no such field and it is None here;
- a rejected AlterPartitionResponse has only error/request/dest/source; its
  replicas/isr/leader/leader_epoch/partition_epoch are None here (error is
  never None for a rejection, so the two shapes never collide);
- the partition record of a successful FetchResponse (ReceiveFetchRequest's
  OK case) carries an extra `type |-> FetchResponse` field in the reference;
  it is dropped here: it is present exactly when error and diverging_epoch
  are both Nil, so it adds no information.
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft.state import ErrorCode, MsgType, PartitionRecord, RecoveryMsgType  # noqa: F401  (records sit in FetchResponse)

CONTROLLER = 0  # the model value Controller


class RegisterBrokerRequest(NamedTuple):  # BrokerStart / SendBrokerRegistration
    type: MsgType
    broker_id: int
    broker_epoch: int | None  # kip966: the broker epoch on file (0 if none); v3_5: absent (None)
    incarnation_id: int
    dest: int    # CONTROLLER
    source: int  # the broker


class RegisterBrokerResponse(NamedTuple):  # ReceiveBrokerRegRequest
    type: MsgType
    broker_epoch: int
    incarnation_id: int
    metadata_offset: int  # spec-only: Len(con_metadata_log) at registration
    dest: int    # the broker
    source: int  # CONTROLLER


class AlterPartitionRequest(NamedTuple):  # SendAlterPartitionRequest
    type: MsgType
    isr: frozenset
    # the function [b1 \in isr |-> broker epoch] as ((b1, epoch), ...) sorted by b1
    isr_and_epochs: tuple
    leader: int
    leader_epoch: int
    partition_epoch: int
    broker_epoch: int
    source: int  # the leader
    dest: int    # CONTROLLER


class AlterPartitionResponse(NamedTuple):  # ReceiveAlterPartitionRequest
    type: MsgType
    error: ErrorCode | None  # None = accepted
    replicas: frozenset | None  # None on a rejection (field absent)
    isr: frozenset | None
    leader: int | None
    leader_epoch: int | None
    partition_epoch: int | None
    request: AlterPartitionRequest  # the request answered (a spec-only correlation trick)
    dest: int    # the leader
    source: int  # CONTROLLER


class FetchRequestPartition(NamedTuple):
    leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int


class FetchRequest(NamedTuple):  # SendFetchRequest
    type: MsgType
    broker_epoch: int
    partition: FetchRequestPartition
    dest: int    # the (believed) leader
    source: int  # the follower


class EpochOffset(NamedTuple):  # LastOffsetForEpoch's [epoch, offset]: a diverging epoch
    epoch: int
    offset: int


class FetchResponsePartition(NamedTuple):
    error: ErrorCode | None
    leader_epoch: int
    fetch_offset: int
    hwm: int
    diverging_epoch: EpochOffset | None
    records: tuple  # () or (PartitionRecord,)


class FetchResponse(NamedTuple):  # ReceiveFetchRequest
    type: MsgType
    partition: FetchResponsePartition
    dest: int    # the follower
    source: int  # the leader


class GetReplicaLogInfoRequest(NamedTuple):  # StartUncleanRecovery (storage variants)
    type: RecoveryMsgType
    partition_epoch: int  # identifies the recovery (the partition epoch it started at)
    dest: int    # an asked replica's broker
    source: int  # CONTROLLER


class GetReplicaLogInfoResponse(NamedTuple):  # ReceiveGetReplicaLogInfoRequest
    type: RecoveryMsgType
    partition_epoch: int  # echoed
    broker_epoch: int     # the answering incarnation
    last_epoch: int       # leader epoch of the replica's last record (0: empty log)
    leo: int
    dest: int    # CONTROLLER
    source: int  # the replica's broker


Message = (RegisterBrokerRequest | RegisterBrokerResponse | AlterPartitionRequest
           | AlterPartitionResponse | FetchRequest | FetchResponse)

MESSAGE_CLASSES: dict[MsgType, type] = {
    MsgType.RegisterBrokerRequest: RegisterBrokerRequest,
    MsgType.RegisterBrokerResponse: RegisterBrokerResponse,
    MsgType.AlterPartitionRequest: AlterPartitionRequest,
    MsgType.AlterPartitionResponse: AlterPartitionResponse,
    MsgType.FetchRequest: FetchRequest,
    MsgType.FetchResponse: FetchResponse,
}
# the storage variants' messages (model_from_plain: RECOVERY_MESSAGE_CLASSES)
RECOVERY_MESSAGE_CLASSES: dict[RecoveryMsgType, type] = {
    RecoveryMsgType.GetReplicaLogInfoRequest: GetReplicaLogInfoRequest,
    RecoveryMsgType.GetReplicaLogInfoResponse: GetReplicaLogInfoResponse,
}
