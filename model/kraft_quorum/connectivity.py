"""Network connectivity changes (the reference's ChangeNetworkConnectivity):
partitions between any servers, bounded by MaxConnectivityChanges."""
from __future__ import annotations

from model.kraft_quorum.limits import elections_can_progress
from model.kraft_quorum.network import pair
from model.kraft_quorum.state import Role, at


def change_network_connectivity(model, st, out: list) -> None:
    """ChangeNetworkConnectivity: any set of server pairs becomes the
    connected ones (no pair with a dead server), as long as
    LIVENESS_ElectionsCanProgress allows it; in-flight messages between
    servers now disconnected are dropped. One successor per subset (and,
    under TestLiveness, per server that lets elections progress: TLC
    enumerates that existential's witnesses)."""
    if st.net_connectivity_ctr >= model.constants["MaxConnectivityChanges"]:
        return
    started = range(1, len(st.server_ids) + 1)
    dead = {s for s in started if at(st.state, s) == Role.DeadNoState}
    action = model.act0("ChangeNetworkConnectivity")
    msgs = st.net_messages
    ctr = st.net_connectivity_ctr + 1
    for conn in model.pair_subsets:
        if dead and any(a in dead or b in dead for a, b in conn):
            continue
        times = elections_can_progress(model, st, conn)
        if not times:
            continue
        kept = frozenset(m for m in msgs if pair(m.source, m.dest) in conn)
        t = st._replace(net_connectivity=conn, net_messages=msgs if len(kept) == len(msgs) else kept,
                        net_connectivity_ctr=ctr)
        out.extend([(action, t)] * times)

