"""Network connectivity changes (the reference's ChangeNetworkConnectivity):
partitions between any servers, bounded by MaxConnectivityChanges."""
from __future__ import annotations

from model.kraft_quorum.limits import majority_links
from model.kraft_quorum.network import pair
from model.kraft_quorum.state import Role


def change_network_connectivity(model, st, out: list) -> None:
    """ChangeNetworkConnectivity: any set of server pairs becomes the
    connected ones (no pair with a dead server), as long as
    LIVENESS_ElectionsCanProgress allows it; in-flight messages between
    servers now disconnected are dropped. One successor per subset (and,
    under TestLiveness, per server that lets elections progress: TLC
    enumerates that existential's witnesses)."""
    if st.net_connectivity_ctr >= model.constants["MaxConnectivityChanges"]:
        return
    n = len(st.server_ids)
    dead = {s for s in range(1, n + 1) if st.state[s - 1] == Role.DeadNoState}
    action = model.act0("ChangeNetworkConnectivity")
    msgs = st.net_messages
    msg_pairs = {pair(m.source, m.dest) for m in msgs}
    ctr = st.net_connectivity_ctr + 1
    # LIVENESS_ElectionsCanProgress(conn): per live voter, the links that count
    # toward its majority and how many it needs
    needs = majority_links(model, st) if model.test_liveness else None
    for conn in model.pair_subsets:
        if dead and any(a in dead or b in dead for a, b in conn):
            continue
        if needs is None:
            times = 1
        else:
            times = sum(1 for links, need in needs if len(links & conn) >= need)
            if not times:
                continue
        if msg_pairs <= conn:
            kept = msgs
        else:
            kept = frozenset(m for m in msgs if pair(m.source, m.dest) in conn)
        t = st._replace(net_connectivity=conn, net_messages=kept, net_connectivity_ctr=ctr)
        out.extend([(action, t)] * times)
