"""Server identity (KIP-853): a server is (host, disk id). A new server
starts on any host with a new disk and an empty log, as an observer; it
becomes a voter only when a leader adds it (the reference's StartNewServer).
A server that lost its disk (CrashLoseState) is gone for good: its host
comes back as a new server.

Beyond the reference, VoterIdentity = "node_id" asks what KIP-853's disk ids
prevent: a voter is then its node id (a static quorum before KIP-853), and a
server that lost its disk rejoins as the same voter with an empty log
(RestartAfterDiskLoss).
"""
from __future__ import annotations

from model.kraft_quorum import network
from model.kraft_quorum.roles import EMPTY
from model.kraft_quorum.state import (
    BLANK_FETCH_STATE, FetchRequest, MsgType, Role, ServerId, at, put)


def start_new_server(model, st, out: list) -> None:
    """StartNewServer: a server with a blank disk starts on a host, takes the
    configuration of a leader and sends that leader its first fetch (the
    reference's shortcut: it magically picks a leader)."""
    n = len(st.server_ids)
    if n >= model.constants["MaxSpawnedServers"]:
        return
    new = n + 1
    disk_id = st.aux_disk_id_gen + 1
    action = model.act0("StartNewServer")
    for host in model.hosts:
        identity = ServerId(host, disk_id)
        for ldr in range(1, n + 1):
            if at(st.state, ldr) != Role.Leader:
                continue
            req = FetchRequest(MsgType.FetchRequest, 0, 0, 0, True, new, ldr)
            ch = dict(
                server_ids=st.server_ids + (identity,),
                config=st.config + (at(st.config, ldr),),
                state=st.state + (Role.Unattached,),
                current_epoch=st.current_epoch + (0,),
                leader=st.leader + (None,),
                voted_for=st.voted_for + (None,),
                fetch_state=st.fetch_state + (BLANK_FETCH_STATE,),
                pending_ack=st.pending_ack + (EMPTY,),
                votes_recv=st.votes_recv + (EMPTY,),
                flwr_end_offset=st.flwr_end_offset + ((),),
                log=st.log + ((),),
                hwm=st.hwm + (0,),
                net_messages=network.send(st, st.net_messages, req),
                aux_disk_id_gen=disk_id)
            if model.storage:
                ch["flushed"] = st.flushed + (0,)
                ch["power_losses"] = st.power_losses + (0,)
            if model.fetch_check_quorum:
                ch["fetched_voters"] = st.fetched_voters + (EMPTY,)
            out.append((action, st._replace(**ch)))


def restart_after_disk_loss(model, st, s: int, out: list) -> None:
    """RestartAfterDiskLoss(s) (VoterIdentity = "node_id"): a server that lost
    its disk restarts under the same node id, a voter of the static
    configuration with an empty log, an empty vote and epoch 0; its network
    comes back."""
    if at(st.state, s) != Role.DeadNoState:
        return
    live = [x for x in range(1, len(st.server_ids) + 1)
            if x != s and at(st.state, x) != Role.DeadNoState]
    ch = dict(
        state=put(st.state, s, Role.Unattached),
        config=put(st.config, s, model.static_config),
        net_connectivity=st.net_connectivity | {network.pair(s, x) for x in live})
    if model.storage:
        ch["flushed"] = put(st.flushed, s, 0)
    out.append((model.act("RestartAfterDiskLoss", s), st._replace(**ch)))



