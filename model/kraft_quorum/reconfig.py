"""Reconfiguration (KIP-853): the leader appends AddVoter and RemoveVoter
commands and switches to the new configuration at once (the reference's
AcceptAddVoterRequest and AcceptRemoveVoterRequest).

A leader accepts one only if it is a voter leader with no uncommitted
configuration command and with an entry of its own epoch committed. The
reference (and so this model) does not wait for a new voter to catch up
before appending AddVoter, as KIP-853 describes: that is a liveness
optimisation, not a safety rule.
"""
from __future__ import annotations

from model.kraft_quorum import network
from model.kraft_quorum.limits import add_voter_ok, remove_voter_ok
from model.kraft_quorum.replication import config_for
from model.kraft_quorum.roles import update_follower_offsets
from model.kraft_quorum.state import (
    BeginQuorumEpoch, Command, ConfigValue, Entry, Error, MsgType, Role, at, put)


def committed_in_current_epoch(st, s: int) -> bool:
    """LeaderHasCommittedOffsetsInCurrentEpoch(s)."""
    epoch, hwm = at(st.current_epoch, s), at(st.hwm, s)
    return any(e.epoch == epoch and o <= hwm for o, e in enumerate(at(st.log, s), 1))


def reconfig_check(model, st, s: int, server: int, adding: bool):
    """AddVoterCheck / RemoveVoterCheck: None when the request is valid,
    else the error the leader answers."""
    if at(st.state, s) != Role.Leader:
        return Error.NotLeader
    members = at(st.config, s).members
    if adding and server in members:
        return Error.AlreadyMember
    if not adding and server not in members:
        return Error.UnknownMember
    if not at(st.config, s).committed and not model.mutant.second_reconfig:
        return Error.ReconfigInProgress
    if not committed_in_current_epoch(st, s) and not model.mutant.reconfig_before_epoch_commit:
        return Error.LeaderNotReady
    return None


def _append_config(model, st, s: int, command: Command, members: frozenset, server: int, ch: dict):
    config = at(st.config, s)
    entry = Entry(command, at(st.current_epoch, s), ConfigValue(config.id + 1, members, server))
    new_log = at(st.log, s) + (entry,)
    new_config = config_for(len(new_log), entry, at(st.hwm, s))
    if model.single_voter_leads and new_config.members == {s}:
        # its own end offset is a majority of the new configuration: committed at once
        ch["hwm"] = put(st.hwm, s, len(new_log))
        new_config = new_config._replace(committed=True)
    ch["log"] = put(st.log, s, new_log)
    ch["config"] = put(st.config, s, new_config)
    update_follower_offsets(st, s, new_config.members, ch)


def accept_add_voter_request(model, st, s: int, out: list) -> None:
    """AcceptAddVoterRequest(s): the leader adds any started server as a
    voter and sends it BeginQuorumEpoch."""
    a = st.aux_ctrs
    if a.add_reconfig_ctr >= model.constants["MaxAddReconfigs"] or at(st.state, s) != Role.Leader:
        return
    members = at(st.config, s).members
    for add in range(1, len(st.server_ids) + 1):
        if reconfig_check(model, st, s, add, True) is not None:
            continue
        if not add_voter_ok(model, st, s, add) or len(members) >= model.constants["MaxClusterSize"]:
            continue
        ch: dict = {}
        _append_config(model, st, s, Command.AddVoterCommand, members | {add}, add, ch)
        ch["net_messages"] = network.send(st, st.net_messages, BeginQuorumEpoch(
            MsgType.BeginQuorumEpochRequest, at(st.current_epoch, s), None, s, add))
        ch["aux_ctrs"] = a._replace(add_reconfig_ctr=a.add_reconfig_ctr + 1)
        out.append((model.act("AcceptAddVoterRequest", s), st._replace(**ch)))


def accept_remove_voter_request(model, st, s: int, out: list) -> None:
    """AcceptRemoveVoterRequest(s): the leader removes a voter, possibly
    itself (it then leads as an observer until it commits the command)."""
    a = st.aux_ctrs
    if (a.remove_reconfig_ctr >= model.constants["MaxRemoveReconfigs"]
            or at(st.state, s) != Role.Leader):
        return
    members = at(st.config, s).members
    for rm in range(1, len(st.server_ids) + 1):
        if reconfig_check(model, st, s, rm, False) is not None:
            continue
        if not remove_voter_ok(model, st, s, rm) or len(members) <= model.constants["MinClusterSize"]:
            continue
        ch: dict = {}
        _append_config(model, st, s, Command.RemoveVoterCommand, members - {rm}, rm, ch)
        ch["aux_ctrs"] = a._replace(remove_reconfig_ctr=a.remove_reconfig_ctr + 1)
        out.append((model.act("AcceptRemoveVoterRequest", s), st._replace(**ch)))
