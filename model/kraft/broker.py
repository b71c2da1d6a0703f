"""Broker lifecycle: start-up and registration (reference: BrokerStart,
SendBrokerRegistration, ReceiveBrokerRegResponse, __CatchUpBarOne)."""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft import network
from model.kraft.messages import CONTROLLER, RegisterBrokerRequest
from model.kraft.replica import log_prefix
from model.kraft.state import BrokerState, BrokerStatus, MsgType, except_at, with_changes

OFFLINE_DIRTY = BrokerStatus.OFFLINE_DIRTY  # OFFLINE_CLEAN < OFFLINE_DIRTY < STARTING
STARTING = BrokerStatus.STARTING
RUNNING = BrokerStatus.RUNNING


def broker_start(k, s, b, mt, out):
    """BrokerStart(b): an offline broker starts with a fresh incarnation id and
    asks the controller to register it. kip966 keeps the broker epoch on file
    (0 after a lossy shutdown) and sends it; v3.5 starts from epoch 0."""
    bs = s.broker_state[b - 1]
    if bs.status > OFFLINE_DIRTY:
        return
    ctrs = s.aux_ctrs
    incarnation = ctrs.incarn_ctr
    epoch_on_file = k.variant_flags.epoch_on_file
    new_bs = BrokerState(STARTING, bs.broker_epoch if epoch_on_file else 0, incarnation, False)
    request = RegisterBrokerRequest(MsgType.RegisterBrokerRequest, b,
                                    bs.broker_epoch if epoch_on_file else None,
                                    incarnation, CONTROLLER, b)
    out.append((k.acts["BrokerStart"][b], with_changes(s, dict(
        broker_state=except_at(s.broker_state, b, new_bs),
        partition_status=except_at(s.partition_status, b, None),
        messages=network.send(s.messages, request),
        aux_ctrs=ctrs._replace(incarn_ctr=incarnation + 1)))))


def receive_broker_reg_response(k, s, b, mt, out):
    """ReceiveBrokerRegResponse(b): the broker runs with its new epoch, having
    caught up with the metadata log bar the last record at registration time;
    ReceiveMetadataUpdate then initialises the replica from that record."""
    resps = mt[MsgType.RegisterBrokerResponse]
    if not resps:
        return
    bs = s.broker_state[b - 1]
    if bs.status != STARTING or bs.registered:
        return
    act = k.acts["ReceiveBrokerRegResponse"][b]
    for m in resps:
        if m.dest != b or (bs.incarnation_id != m.incarnation_id  # CHECK (a mutant may skip it)
                           and not k.mutant.skip_reg_response_incarnation_check):
            continue
        new_bs = BrokerState(RUNNING, m.broker_epoch, bs.incarnation_id, True)
        offset = m.metadata_offset
        if offset <= 1:
            log = ()
        else:  # SubSeq(con_metadata_log, 1, offset - 1)
            if offset - 1 > len(s.con_metadata_log):
                raise EvaluationError(
                    f"SubSeq(con_metadata_log, 1, {offset - 1}) outside a log of length "
                    f"{len(s.con_metadata_log)}")
            log = log_prefix(s.con_metadata_log, offset - 1)
        msgs, disc = network.discard(s.messages, s.messages_discard, m)
        out.append((act, with_changes(s, dict(
            broker_state=except_at(s.broker_state, b, new_bs),
            broker_metadata_log=except_at(s.broker_metadata_log, b, log),
            partition_metadata=except_at(s.partition_metadata, b, k.blank_metadata),
            messages=msgs, messages_discard=disc))))
