"""Log Matching: replicas agree on what they both consider committed."""
from __future__ import annotations

from model.zk.state import Role, leading_leader

FOLLOWER, LEADER = Role.FOLLOWER, Role.LEADER


def log_matching(model):
    """LogMatching: the registered leader and every running follower that has
    reconciled its log with it in its current epoch (hw_truncation: on
    becoming follower, leader_epoch: after OffsetsForLeaderEpoch) hold the
    same records at every offset below the smaller of their HWs (once the
    registered leader leads: with Election = controller it may not yet). A follower
    still following an older epoch is not compared: it has yet to reconcile,
    and the property is about logs that never do."""
    replicas = tuple(model.replicas)

    def LogMatching(s) -> bool:
        leader = leading_leader(s)
        if leader is None:
            return True  # (Election = controller) not leading yet
        logs, hws = s.log, s.hw
        part = [leader]
        for b in replicas:
            r = s.role[b]
            if (r.role == FOLLOWER and r.leader == leader and r.leader_epoch == s.zk_partition.leader_epoch
                    and hws[b] and s.running[b]):
                part.append(b)
        if len(part) < 2 or not hws[leader]:
            return True
        for i in range(len(part)):
            a = part[i]
            la, ha = logs[a], hws[a]
            for b in part[i + 1:]:
                lb = logs[b]
                if la is lb:
                    continue
                for o in range(min(ha, hws[b])):
                    if la[o] != lb[o]:
                        return False
        return True

    return LogMatching
