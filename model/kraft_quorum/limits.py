"""The reference's TestLiveness conditions (kraft_kip_996_liveness.tla): not
protocol, but conditions that keep a cluster able to progress and cut
cycles, so that liveness can be checked. With TestLiveness FALSE each is
TRUE.

Where the reference writes such a condition as a disjunction or an
existential that TLC evaluates as part of an action, TLC makes one successor
per true disjunct or witness; the functions that say "how many" return that
number (0: not enabled), so the model's generated counts are TLC's.
"""
from __future__ import annotations

from model.kraft_quorum.roles import is_voter
from model.kraft_quorum.state import Error, MsgType, Role, at, fmap_get


def _linked(conn: frozenset, a: int, b: int) -> bool:
    return a != b and ((a, b) if a < b else (b, a)) in conn


def has_majority_connection(st, s: int, conn: frozenset) -> bool:
    """HasMajorityConnectionToMembers(s, conn)."""
    members = at(st.config, s).members
    epoch = at(st.current_epoch, s)
    n = sum(1 for m in members
            if m != s and epoch >= at(st.current_epoch, m)
            and at(st.state, m) != Role.DeadNoState and _linked(conn, s, m))
    return n >= len(members) // 2


def majority_links(model, st) -> list:
    """Per live voter s: (the pairs with the members HasMajorityConnectionToMembers
    counts, how many of them it needs), so that elections_can_progress(conn)
    is the number of entries with len(links & conn) >= need."""
    out = []
    for s in range(1, len(st.server_ids) + 1):
        if not is_voter(st, s):
            continue
        members = at(st.config, s).members
        epoch = at(st.current_epoch, s)
        links = frozenset((s, m) if s < m else (m, s) for m in members
                          if m != s and epoch >= at(st.current_epoch, m)
                          and at(st.state, m) != Role.DeadNoState)
        out.append((links, len(members) // 2))
    return out


def elections_can_progress(model, st, conn: frozenset) -> int:
    """LIVENESS_ElectionsCanProgress(conn): how many live voters keep a
    majority of their configuration connected (1 without TestLiveness)."""
    if not model.test_liveness:
        return 1
    return sum(1 for s in range(1, len(st.server_ids) + 1)
               if at(st.state, s) != Role.DeadNoState and is_voter(st, s)
               and has_majority_connection(st, s, conn))


def valid_peer(model, st, s: int, peer: int) -> bool:
    """LIVENESS_ValidPeer: an unattached voter fetches from a voter that knows the leader."""
    if not model.test_liveness:
        return True
    return (is_voter(st, peer) and at(st.leader, peer) is not None
            and _linked(st.net_connectivity, s, peer))


def helps_make_progress(model, st, s: int, peer: int, fetch_offset: int) -> int:
    """LIVENESS_HelpsMakeProgress: how many of its five reasons to fetch hold."""
    if not model.test_liveness:
        return 1
    leads = at(st.state, peer) == Role.Leader
    n = 0
    if at(st.log, s) != at(st.log, peer):
        n += 1
    if at(st.hwm, s) != at(st.hwm, peer):
        n += 1
    if leads:
        known = fmap_get(at(st.flwr_end_offset, peer), s)
        if known is None or known < fetch_offset:
            n += 1
    if at(st.current_epoch, s) != at(st.current_epoch, peer):
        n += 1
    if not leads:
        n += 1
    return n


def in_prevote_cycle(model, st, s: int, ldr) -> bool:
    """LIVENESS_InPrevoteCycle: s lost its leader while its peers still reach it."""
    if not model.test_liveness:
        return False
    conn = st.net_connectivity
    if not is_voter(st, s) or _linked(conn, s, ldr):
        return False
    epoch = at(st.current_epoch, s)
    t = MsgType.RequestVoteResponse
    return any(m.type == t and m.pre_vote and not m.vote_granted and m.leader == ldr
               and m.replica_epoch == epoch and m.dest == s and _linked(conn, m.source, ldr)
               for m in st.net_messages_processed)


def maybe_not_same_peer_again(model, st, s: int, peer: int) -> bool:
    """LIVENESS_MaybeNotSamePeerAgain: an observer does not retry the peer that said NotLeader."""
    if not model.test_liveness:
        return True
    last = at(st.fetch_state, s).last_fetch_res
    if last is not None and last.error == Error.NotLeader:
        return last.peer != peer
    return True


def add_voter_ok(model, st, s: int, add: int) -> bool:
    """LIVENESS_AddVoterLivenessCondition: the leader keeps a connected majority."""
    if not model.test_liveness:
        return True
    members = at(st.config, s).members
    conn = st.net_connectivity
    linked = sum(1 for x in members if _linked(conn, s, x)) + 1
    return linked + (1 if _linked(conn, s, add) else 0) > (len(members) + 1) // 2


def remove_voter_ok(model, st, s: int, remove: int) -> bool:
    """LIVENESS_RemoveVoterLivenessCondition: the leader keeps a connected majority."""
    if not model.test_liveness:
        return True
    members = at(st.config, s).members
    conn = st.net_connectivity
    return sum(1 for p in members
               if p != remove and is_voter(st, p) and _linked(conn, s, p)) > len(members) // 2


def crash_allowed(model, st, s: int) -> int:
    """CrashAllowed(s): how many live voters keep elections progressing without s."""
    if not model.test_liveness:
        return 1
    conn = frozenset(p for p in st.net_connectivity if s not in p)
    return elections_can_progress(model, st, conn)
