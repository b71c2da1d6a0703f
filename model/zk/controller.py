"""Election = controller: the ZooKeeper-era controller (Kafka 0.8 on; 0.8 replication design
says 0.8 implemented a later proposal than V2) elects leaders and removes
failed brokers from the ISR, as v3.5 description 2.8 describes the
controller's election: when a broker is lost, atomically "remove the replica
as leader; remove the replica from the ISR; if there is at least one replica
in the ISR, select one as the new leader, else set the leader as NoLeader;
increment the leader epoch" - the ISR never shrinks to empty: the last
replica standing stays in it. A live replica outside the ISR is elected only
with UncleanLeaderElection (Kafka's design docs, unclean leader election).

What the controller knows is its own view, not ZooKeeper's:
- ctl_live: the brokers it believes alive. It learns of a session loss or a
  registration when it handles the change of /brokers/ids (OnBrokerFailure,
  OnBrokerStartup): steps of their own, which race with everything else
  unless PromptElection.
- It tells brokers apart by id only (v3.5 description 1.2.2: with the
  ZooKeeper-based controller "a broker can be online, then offline but
  unobserved and then online again without the controller realizing"): a
  broker that registers again before the controller handled its session
  loss is a bounce it never sees (ctl_stale notes it, for the witness).
  BrokerEpochs: kip380, each registration has a new broker epoch and the
  controller handles a bounce it sees as a failure and a startup, but a new
  controller knows only the current epochs; kraft, a broker registers
  through the controller, which first handles the loss of its old
  incarnation (broker.py: no registration while the controller still counts
  the old one), so no bounce goes unseen.
- Its decisions reach the brokers as LeaderAndIsr requests (ctl_request),
  sent to the replicas it believes alive: LeaderAndIsrQueue fifo (Kafka's
  ControllerChannelManager: a queue and a send thread per broker) queues them
  per broker and the broker takes the head first; newest keeps one per
  broker, a newer one replacing it. The queue needs no bound of its own:
  every controller event is bounded by the faults and adds at most one
  request per broker. With RequestsSurviveStop (Kafka) a request to a
  broker that stopped waits until the controller handles the broker's loss,
  and a broker that restarts first receives it; with broker epochs it
  carries the epoch of the registration the controller knows, and a later
  registration rejects it (KIP-380). A broker acts on a request of a newer leader
  epoch than its own (a replica with no state takes any), and a leader takes
  a newer ISR of its own epoch (the znode version it must write under).
  A restarted broker waits for one: it neither elects itself nor follows on
  its own.
- ControllerFailover: a new controller reads ZooKeeper afresh (live brokers,
  the partition's znode), elects for an offline partition and sends
  LeaderAndIsr to every live replica (0.8 onControllerFailover).
- HandleControlledShutdown (ControlledShutdownSteps several): the controller
  answers a broker's ControlledShutdownRequest (KafkaController
  doControlledShutdown): it notes the broker as shutting down (never elected
  again until it handles the broker's loss), moves its leadership to another
  live ISR member (the ISR without the broker), takes it out of the ISR where
  it follows and stops its replica (StopReplica); a leadership with no one to
  take it stays, and the broker may ask again.
The leader entry is persistent: only the controller writes the leader.
"""
from __future__ import annotations

from model.zk import ghost
from model.zk.replica import LEADER, NO_ROLE, NONE, commit, follow, leader_hw
from model.zk.state import NO_LEADER, LeaderAndIsr, LeaderView, ReplicaRole, ZkPartition, put, with_changes


def _settle(k, zk, isr: frozenset, leader: int, live: frozenset,
            shutting: frozenset = frozenset()) -> list:
    """The znode after the controller changed the ISR to `isr` and the leader
    to `leader` (NO_LEADER when it removed it), electing for an offline
    partition (no leader, or one it believes dead): any ISR member it believes
    alive (the ISR keeps its live members), else with UncleanLeaderElection
    any live assigned replica (the ISR becomes it alone), else no leader.
    A broker in `shutting` (controlled shutdown handled) is never elected.
    Returns [(znode', unclean)]: unclean is None when nobody was elected, else
    whether the election was unclean. The epoch moves when the leader does."""
    if leader != NO_LEADER and leader in live:
        options = [(leader, isr, None)]
    else:
        candidates = sorted(isr & live - shutting)
        if candidates:
            options = [(c, isr & live, False) for c in candidates]
        elif k.unclean_leader_election and any(r in live and r not in shutting for r in k.replicas):
            options = [(r, frozenset((r,)), True) for r in k.replicas
                       if r in live and r not in shutting]
        else:
            options = [(NO_LEADER, isr, None)]
    result = []
    for new_leader, new_isr, unclean in options:
        if new_leader == zk.leader and new_isr == zk.isr:
            result.append((zk, unclean))
            continue
        epoch = zk.leader_epoch + (new_leader != zk.leader)
        result.append((ZkPartition(new_leader, epoch, new_isr, zk.version + 1), unclean))
    return result


def _known_epoch(k, s, ch: dict, r) -> int:
    """The broker epoch of r's registration the controller knows: the current
    one, unless r registered again in a bounce it has not handled (0 without
    broker epochs)."""
    if not k.epochs:
        return 0
    return s.broker_epoch[r] - (r in ch.get("ctl_stale", s.ctl_stale))


def _send(k, s, ch: dict, zk, to) -> None:
    """LeaderAndIsr(zk) to the replicas in `to` (those the controller believes
    alive), each carrying the broker epoch the controller knows of it, behind
    the requests already queued to it (LeaderAndIsrQueue fifo) or in their
    place (newest); to a broker that is not running it waits in the
    controller's queue (RequestsSurviveStop) or is lost. Nothing is sent for a
    partition left without a leader."""
    if zk.leader == NO_LEADER:
        return
    running = ch.get("running", s.running)
    requests = ch.get("ctl_request", s.ctl_request)
    for r in k.replicas:
        if r in to and (running[r] or k.requests_survive_stop):
            req = LeaderAndIsr(zk.leader, zk.leader_epoch, zk.isr, zk.version,
                               _known_epoch(k, s, ch, r))
            requests = put(requests, r, requests[r] + (req,) if k.fifo_requests else (req,))
    if requests is not s.ctl_request:
        ch["ctl_request"] = requests


def _remove_broker(k, s, ch: dict, gone) -> None:
    """The controller drops its queued requests to the brokers in `gone`
    (ControllerChannelManager.removeBroker), with RequestsSurviveStop: until
    then they wait for the broker."""
    if not k.requests_survive_stop:
        return
    requests = ch.get("ctl_request", s.ctl_request)
    for r in gone:
        if requests[r]:
            requests = put(requests, r, ())
    if requests is not s.ctl_request:
        ch["ctl_request"] = requests


def _write(k, s, ch: dict, zk, unclean) -> None:
    """The controller writes znode `zk` (elected: unclean is not None)."""
    if zk is not s.zk_partition:
        ch["zk_partition"] = zk
        if zk.isr != s.zk_partition.isr:
            ch["acked"] = ghost.isr_changed(ch.get("acked", s.acked), zk.isr,
                                            ch.get("running", s.running),
                                            ch.get("clean_down", s.clean_down), bool(unclean))
    f = ch.get("faults", s.faults)
    if unclean is not None and f.unclean_leader != unclean:
        f = f._replace(unclean_leader=unclean)
    if f.raced:
        f = f._replace(raced=False)
    if f is not s.faults:
        ch["faults"] = f


def _failure(k, s, b, bounced: bool) -> list:
    """The controller handles the loss of b (in state s): the change dicts,
    one per choice of a new leader. `bounced`: b is registered again under a
    new broker epoch (BrokerEpochs kip380): handled as failed, then started."""
    zk = s.zk_partition
    live = s.ctl_live - {b}
    isr = zk.isr - {b} if b in zk.isr and len(zk.isr) > 1 else zk.isr
    leader = NO_LEADER if zk.leader == b else zk.leader
    shutting = s.ctl_shutting_down - {b}
    options = _settle(k, zk, isr, leader, live, shutting)
    if bounced:  # then started: two writes, as the controller makes them
        live = live | {b}
        options = [(z2, u1 if u2 is None else u2) for z1, u1 in options
                   for z2, u2 in _settle(k, z1, z1.isr, z1.leader, live, shutting)]
    result = []
    for new_zk, unclean in options:
        ch = {"ctl_live": live}
        if b in s.ctl_stale:
            ch["ctl_stale"] = s.ctl_stale - {b}
        if b in s.ctl_shutting_down:
            ch["ctl_shutting_down"] = shutting
        _remove_broker(k, s, ch, (b,))
        _write(k, s, ch, new_zk, unclean)
        if new_zk is not zk:
            _send(k, s, ch, new_zk, live)
        elif bounced:
            _send(k, s, ch, zk, (b,))
        result.append(ch)
    return result


def on_broker_failure(k, s, b, out):
    """OnBrokerFailure(b): the controller handles the change of /brokers/ids
    in which b's registration is gone (b is not registered, or - BrokerEpochs
    kip380 - registered under another broker epoch than it knows): b leaves its view of
    the live brokers and the ISR (not the last member), loses the leadership,
    a new leader is elected; LeaderAndIsr to the live replicas. Nothing to do
    once b is registered again under the same id without broker epochs (the
    bounce the controller never sees)."""
    if b not in s.ctl_live:
        return
    bounced = b in s.zk_live
    if bounced and not (k.broker_epochs == "kip380" and b in s.ctl_stale):
        return
    act = k.acts["OnBrokerFailure"][b]
    for ch in _failure(k, s, b, bounced):
        out.append((act, with_changes(s, ch)))


def handle_stop(k, s, b) -> list:
    """A controlled shutdown of b in one step (ControlledShutdownSteps one; s:
    b already stopped): the controller handles b as lost in the same step.
    Returns the successor states."""
    return [with_changes(s, ch) for ch in _failure(k, s, b, False)]


def on_broker_startup(k, s, b, out):
    """OnBrokerStartup(b): the controller sees b registered: b joins its view
    of the live brokers and gets a LeaderAndIsr for the partition; an offline
    partition gets a leader (b, if it is in the ISR, or with
    UncleanLeaderElection) and every live replica is told."""
    if b in s.ctl_live or b not in s.zk_live:
        return
    zk = s.zk_partition
    live = s.ctl_live | {b}
    act = k.acts["OnBrokerStartup"][b]
    for new_zk, unclean in _settle(k, zk, zk.isr, zk.leader, live, s.ctl_shutting_down):
        ch = {"ctl_live": live}
        _write(k, s, ch, new_zk, unclean)
        if new_zk is not zk:
            _send(k, s, ch, new_zk, live)
        else:
            _send(k, s, ch, zk, (b,))
        out.append((act, with_changes(s, ch)))


def controller_failover(k, s, out):
    """ControllerFailover: a new controller takes over: it reads the live
    brokers and the partition's znode from ZooKeeper, handles the replicas
    that are not registered as failed (out of the ISR, unless that would
    empty it; out of the leadership), elects for an offline partition and
    sends LeaderAndIsr to every live replica. It knows nothing of the old
    controller's view: a bounce the old one had yet to handle is gone, and so
    is a controlled shutdown it handled (a broker still waiting for its
    answer asks the new one). Requests the old controller queued are still
    delivered first. Bounded by ControllerFailoverLimit."""
    f = s.faults
    if f.failovers >= k.controller_failover_limit:
        return
    zk = s.zk_partition
    live = s.zk_live
    isr = zk.isr & live or zk.isr
    leader = zk.leader if zk.leader in live else NO_LEADER
    act = k.acts["ControllerFailover"]
    for new_zk, unclean in _settle(k, zk, isr, leader, live):
        ch = {"faults": f._replace(failovers=f.failovers + 1)}
        if live != s.ctl_live:
            ch["ctl_live"] = live
        if s.ctl_stale:
            ch["ctl_stale"] = frozenset()
        if s.ctl_shutting_down:
            ch["ctl_shutting_down"] = frozenset()
        _remove_broker(k, s, ch, [r for r in k.replicas if r not in live])
        _write(k, s, ch, new_zk, unclean)
        _send(k, s, ch, new_zk, live)
        out.append((act, with_changes(s, ch)))


def receive_leader_and_isr(k, s, b, out):
    """ReceiveLeaderAndIsr(b): b acts on the controller's request. Naming b
    leader in a newer epoch (or b has no state): b becomes leader, its HW as
    ElectionHw says (replica.leader_hw; Kafka's Partition.makeLeader keeps it). Naming b leader in its own epoch: b takes the
    newer ISR and znode version and commits what it can. Naming another
    leader in a newer epoch: b follows it (becomeFollower, each variant's
    truncation). Anything else is stale and dropped; so is (BrokerEpochs
    kip380 / kraft) a request for an earlier registration of b (KIP-380:
    KafkaApis rejects it with STALE_BROKER_EPOCH). b takes the head of its
    queue (LeaderAndIsrQueue fifo)."""
    queue = s.ctl_request[b]
    if not queue or not s.running[b]:
        return
    req = queue[0]
    ch: dict = {"ctl_request": put(s.ctl_request, b, queue[1:])}
    if k.epochs and req.broker_epoch < s.broker_epoch[b]:
        out.append((k.acts["ReceiveLeaderAndIsr"][b], with_changes(s, ch)))
        return
    role = s.role[b]
    newer = role.role == NONE or role.leader_epoch < req.leader_epoch
    if req.leader == b:
        if role.role == LEADER and role.leader_epoch == req.leader_epoch:
            view = s.leader_view[b]
            if req.version > view.zk_version:
                view = view._replace(isr=req.isr, zk_version=req.version)
                ch["leader_view"] = put(s.leader_view, b, view)
                commit(k, s, b, view, s.log[b], ch)
        elif newer:
            ch["role"] = put(s.role, b, ReplicaRole(LEADER, b, req.leader_epoch))
            view = LeaderView(req.isr, req.version, k.no_follower_leos)
            ch["leader_view"] = put(s.leader_view, b, view)
            if s.fetch_response[b] is not None:
                ch["fetch_response"] = put(s.fetch_response, b, None)
            leader_hw(k, s, b, view, ch)
    elif req.leader != NO_LEADER and newer:
        follow(k, s, b, req.leader, req.leader_epoch, ch)
    out.append((k.acts["ReceiveLeaderAndIsr"][b], with_changes(s, ch)))


def handle_controlled_shutdown(k, s, b, out):
    """HandleControlledShutdown(b) (ControlledShutdownSteps several): the
    controller handles b's ControlledShutdownRequest (KafkaController
    doControlledShutdown): b joins shuttingDownBrokerIds; a leadership of b
    moves to a live ISR member not shutting down, the ISR without b
    (ControlledShutdownPartitionLeaderElectionStrategy), LeaderAndIsr to the
    live replicas, b included; if b follows, it leaves the ISR (not the last
    member; OfflineReplica) and its replica stops (StopReplica, taken here at
    once: b stops fetching). With nobody to take b's leadership it stays, and
    the answer names the partition: b may ask again. One successor per choice
    of a new leader."""
    if s.shutting_down[b] != 1:
        return
    zk = s.zk_partition
    shutting = s.ctl_shutting_down | {b}
    answered = put(s.shutting_down, b, 2)
    act = k.acts["HandleControlledShutdown"][b]
    base = {"shutting_down": answered}
    if shutting != s.ctl_shutting_down:
        base["ctl_shutting_down"] = shutting
    isr = zk.isr - {b} if b in zk.isr and len(zk.isr) > 1 else zk.isr
    if b not in s.ctl_live:
        options = [(zk, None)]
    elif zk.leader == b:
        if isr & s.ctl_live - shutting:
            options = _settle(k, zk, isr, NO_LEADER, s.ctl_live, shutting)
        else:
            options = [(zk, None)]  # nobody to move it to: b still leads
    elif isr != zk.isr:  # b follows: only the ISR changes
        options = [(ZkPartition(zk.leader, zk.leader_epoch, isr, zk.version + 1), None)]
    else:
        options = [(zk, None)]
    for new_zk, unclean in options:
        ch = dict(base)
        _write(k, s, ch, new_zk, unclean)
        if new_zk is not zk:
            _send(k, s, ch, new_zk, s.ctl_live)
        if zk.leader != b:
            _stop_replica(s, b, ch)
        out.append((act, with_changes(s, ch)))


def _stop_replica(s, b, ch: dict) -> None:
    """StopReplica(b, deletePartition = false): b's follower stops fetching."""
    if s.role[b].role != NONE:
        ch["role"] = put(s.role, b, NO_ROLE)
    if s.fetch_response[b] is not None:
        ch["fetch_response"] = put(s.fetch_response, b, None)
