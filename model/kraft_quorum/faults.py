"""Crashes and restarts: a restart that keeps the disk (the reference's
RestartWithState), a crash that loses it for good (CrashLoseState), and,
beyond the reference, a power loss that keeps only the flushed log
(PowerLoss, with the storage refinement of storage.py).

KRaft keeps its epoch, vote and log on disk (the quorum-state file is
fsynced before every transition that changes them); the high watermark and
the leader's view of its followers live in memory. A leader restarts as
Resigned in its epoch (KafkaRaftClient: QuorumState.initialize), so it never
votes or leads again in that epoch.
"""
from __future__ import annotations

from model.kraft_quorum import network
from model.kraft_quorum.limits import crash_allowed
from model.kraft_quorum.replication import (
    CONFIG_COMMANDS, config_for, most_recent_reconfig_entry)
from model.kraft_quorum.roles import (
    EMPTY, apply_state, boot_time_unattached, fail_pending_writes, is_observer, is_voter,
    no_transition, reset_fetch_state, reset_follower_offsets, to_resigned)
from model.kraft_quorum.state import NO_CONFIG, Role, at, fmap_domain, put


def _restart(model, st, s: int, ch: dict) -> None:
    """What every restart does: the role at boot, the in-memory state gone."""
    state = at(st.state, s)
    if state == Role.Leader and is_voter(st, s) and model.mutant.restart_as_leader:
        t = no_transition(st, s)
        if model.fetch_check_quorum:
            ch["fetched_voters"] = put(st.fetched_voters, s, frozenset())
    elif state == Role.Leader and is_voter(st, s):
        t = to_resigned(st, s)
    elif (state == Role.Leader and is_observer(st, s)) or state == Role.Prospective:
        t = boot_time_unattached(st, s)
    else:
        t = no_transition(st, s)
    if model.mutant.restart_forgets_vote:
        t = t._replace(voted_for=None)
    apply_state(st, s, t, ch)
    ch["hwm"] = put(st.hwm, s, 0)
    reset_fetch_state(st, s, ch)
    reset_follower_offsets(st, s, fmap_domain(at(st.flwr_end_offset, s)), ch)
    fail_pending_writes(st, s, ch)


def restart_with_state(model, st, s: int, out: list) -> None:
    """RestartWithState(s): the process restarts; its disk (and page cache) survive."""
    a = st.aux_ctrs
    if a.restart_ctr >= model.constants["MaxRestarts"] or at(st.state, s) == Role.DeadNoState:
        return
    ch: dict = {}
    _restart(model, st, s, ch)
    ch["aux_ctrs"] = a._replace(restart_ctr=a.restart_ctr + 1)
    out.append((model.act("RestartWithState", s), st._replace(**ch)))


def crash_lose_state(model, st, s: int, out: list) -> None:
    """CrashLoseState(s): a voter crashes and loses its disk; it never comes
    back under this identity (KIP-853: a new disk is a new server)."""
    a = st.aux_ctrs
    if a.crash_ctr >= model.constants["MaxPermCrashes"] or not is_voter(st, s):
        return
    times = crash_allowed(model, st, s)
    if not times:
        return
    ch = network.disconnect_server(st, s)
    ch["state"] = put(st.state, s, Role.DeadNoState)
    ch["config"] = put(st.config, s, NO_CONFIG)
    ch["current_epoch"] = put(st.current_epoch, s, 0)
    ch["leader"] = put(st.leader, s, None)
    ch["voted_for"] = put(st.voted_for, s, None)
    ch["votes_recv"] = put(st.votes_recv, s, EMPTY)
    if model.fetch_check_quorum:
        ch["fetched_voters"] = put(st.fetched_voters, s, EMPTY)
    reset_fetch_state(st, s, ch)
    reset_follower_offsets(st, s, (), ch)
    fail_pending_writes(st, s, ch)
    ch["log"] = put(st.log, s, ())
    ch["hwm"] = put(st.hwm, s, 0)
    if model.storage:
        ch["flushed"] = put(st.flushed, s, 0)
    ch["aux_ctrs"] = a._replace(crash_ctr=a.crash_ctr + 1)
    out.extend([(model.act("CrashLoseState", s), st._replace(**ch))] * times)


def power_loss(model, st, s: int, out: list) -> None:
    """PowerLoss(s): the machine loses power and restarts: the page cache is
    gone, the log falls back to what was flushed; the quorum-state file
    (epoch, vote) was fsynced and survives. A configuration command lost
    with the suffix no longer applies: the server takes the last one left."""
    if (sum(st.power_losses) >= model.constants["MaxPowerLosses"]
            or at(st.state, s) == Role.DeadNoState):
        return
    ch: dict = {}
    _restart(model, st, s, ch)
    log, flushed = at(st.log, s), at(st.flushed, s)
    if flushed < len(log):
        kept = log[:flushed]
        ch["log"] = put(st.log, s, kept)
        ch["lost_unflushed"] = True
        if most_recent_reconfig_entry(log, "PowerLoss")[0] > flushed:
            # the configuration command it had switched to is gone with the suffix
            if any(e.command in CONFIG_COMMANDS for e in kept):
                offset, entry = most_recent_reconfig_entry(kept, "PowerLoss")
                ch["config"] = put(st.config, s, config_for(offset, entry, 0))
            else:
                ch["config"] = put(st.config, s, NO_CONFIG)
    ch["power_losses"] = put(st.power_losses, s, at(st.power_losses, s) + 1)
    if st.inv_pos_acked and s not in st.lost_power_acked:
        ch["lost_power_acked"] = st.lost_power_acked | {s}
    out.append((model.act("PowerLoss", s), st._replace(**ch)))
