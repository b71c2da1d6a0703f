"""The reference's invariants (kraft/kip_996, kraft_kip_996_properties.tla),
same names and meaning: LogMatching, ElectionSafety, LeaderCompleteness,
Durability, NoIllegalState, ValidRolesAndStates; and, with the storage
refinement, AckedOnMajorityDisk."""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft_quorum.roles import is_observer, is_voter
from model.kraft_quorum.state import Role

OBSERVER_STATES = (Role.Leader, Role.Follower, Role.Unattached, Role.Resigned)
ELECTION_STATES = (Role.Prospective, Role.Candidate)


def in_log(log: tuple, v) -> bool:
    """ValueInServerLog."""
    return any(e.value == v for e in log)


def is_current_leader(st, s: int) -> bool:
    """IsCurrentLeader(s): a leader no server has seen a higher epoch than."""
    if st.state[s - 1] != Role.Leader:
        return False
    epoch = st.current_epoch[s - 1]
    return not any(e > epoch for e in st.current_epoch)


def log_matching(st) -> bool:
    """LogMatching: two servers' logs agree up to the lower of their HWMs."""
    n = len(st.server_ids)
    for a in range(n):
        for b in range(a + 1, n):
            low = min(st.hwm[a], st.hwm[b])
            if low <= 0:
                continue
            la, lb = st.log[a], st.log[b]
            if low > len(la) or low > len(lb):
                raise EvaluationError(f"LogMatching: a high watermark ({low}) beyond the log of "
                                      f"server {a + 1 if low > len(la) else b + 1}")
            if la[:low] != lb[:low]:
                return False
    return True


def election_safety(st) -> bool:
    """ElectionSafety: no two servers know different leaders of one epoch."""
    seen: dict = {}
    for ldr, epoch in zip(st.leader, st.current_epoch):
        if ldr is None:
            continue
        other = seen.setdefault(epoch, ldr)
        if other != ldr:
            return False
    return True


def leader_completeness(st) -> bool:
    """LeaderCompleteness: the current leader holds every acknowledged value."""
    if not st.inv_pos_acked:
        return True
    for s in range(1, len(st.server_ids) + 1):
        if is_current_leader(st, s):
            log = st.log[s - 1]
            if any(not in_log(log, v) for v in st.inv_pos_acked):
                return False
    return True


def durability(st) -> bool:
    """Durability: every acknowledged value is in some voter's log."""
    for v in st.inv_pos_acked:
        if not any(is_voter(st, s) and in_log(st.log[s - 1], v)
                   for s in range(1, len(st.server_ids) + 1)):
            return False
    return True


def acked_on_majority_disk(st) -> bool:
    """AckedOnMajorityDisk (beyond the reference, with storage): every
    acknowledged value is in the flushed log of a majority of each voter's
    configuration, so that power losses of a minority cannot take it away
    (Durability asks only that some voter's log, flushed or not, hold it)."""
    if not st.inv_pos_acked:
        return True
    n = len(st.server_ids)
    on_disk = [frozenset(e.value for e in st.log[s][:st.flushed[s]]) for s in range(n)]
    for s in range(1, n + 1):
        if not is_voter(st, s):
            continue
        members = st.config[s - 1].members
        for v in st.inv_pos_acked:
            if 2 * sum(1 for x in members if x <= n and v in on_disk[x - 1]) <= len(members):
                return False
    return True


def no_illegal_state(st) -> bool:
    """NoIllegalState: no server took a transition the protocol forbids."""
    return Role.IllegalState not in st.state


def valid_roles_and_states(st) -> bool:
    """ValidRolesAndStates: an observer is never in an election, an unattached
    server knows no leader, only a leader has writes pending, only a server
    in an election holds votes."""
    for s in range(1, len(st.server_ids) + 1):
        state = st.state[s - 1]
        if is_observer(st, s) and state not in OBSERVER_STATES:
            return False
        if state == Role.Unattached and st.leader[s - 1] is not None:
            return False
        if state != Role.Leader and st.pending_ack[s - 1]:
            return False
        if st.votes_recv[s - 1] and state not in ELECTION_STATES:
            return False
    return True
