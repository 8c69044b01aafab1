// A simulated WebTorrent tracker and the Signaling each simulated peer gives its engine. The swarm
// bookkeeping and the choice of whom an offer goes to are the tracker's own (SwarmRegistry, from
// @shoal/tracker/swarm-registry, sampling with the simulation's seeded random); what is simulated
// here is the delivery, and core's WebRTC signaling as it shapes a swarm: an announce carries up to
// `offersPerAnnounce` offers (offersToMake: no more than the slots left below maxPeers); the
// tracker hands them to that many random members of the swarm; a member answers unless it is full
// or already connected to the offerer (the connection whose initiator has the smaller id wins); an
// unanswered offer holds its slot until it times out; requestPeers() announces early, with a gap
// that doubles while no new peer connects. Every message costs its latency to or from the
// tracker, and connection setup the peers' round trips.
import type { Signaling, SignalingEvents, SwarmSignal } from '@shoal/core';
import { DEFAULT_SIGNALING_OPTIONS, offersToMake } from '@shoal/core/webrtc';
import { SwarmRegistry, type PeerEntry } from '@shoal/tracker/swarm-registry';
import { connectHosts, type ChannelLedger, type FlowNetwork, type Prng, type SimChannelEnd, type SimHost, type VirtualClock } from './kit.js';

export interface SignalingParams {
  maxPeers: number;
  offersPerAnnounce: number;
  announceIntervalMs: number;
  requestPeersIntervalMs: number;
  offerTimeoutMs: number;
  /** One-way latency between the tracker and any host (added to the host's own), ms. */
  trackerLatencyMs: number;
}

/** The browser signaling's defaults. */
export const DEFAULT_SIGNALING_PARAMS: SignalingParams = {
  maxPeers: DEFAULT_SIGNALING_OPTIONS.maxPeers,
  offersPerAnnounce: DEFAULT_SIGNALING_OPTIONS.offersPerAnnounce,
  announceIntervalMs: DEFAULT_SIGNALING_OPTIONS.announceIntervalMs,
  requestPeersIntervalMs: DEFAULT_SIGNALING_OPTIONS.requestPeersIntervalMs,
  offerTimeoutMs: DEFAULT_SIGNALING_OPTIONS.offerTimeoutMs,
  trackerLatencyMs: 20,
};

/** One attempt to connect two members, shared by both sides. */
interface Attempt {
  initiator: SwarmMember;
  answerer: SwarmMember | undefined;
  ends: [SimChannelEnd, SimChannelEnd] | undefined;
  dead: boolean;
  timer: unknown;
}

export class SimTracker {
  private readonly registry: SwarmRegistry<SwarmMember>;
  /** Offers forwarded and announces handled, for the report. */
  announces = 0;
  offersForwarded = 0;

  constructor(
    readonly clock: VirtualClock,
    readonly network: FlowNetwork,
    readonly ledger: ChannelLedger,
    readonly params: SignalingParams,
    prng: Prng,
  ) {
    this.registry = new SwarmRegistry<SwarmMember>({ random: () => prng.next() });
  }

  signaling(host: SimHost, peerId: string): Signaling {
    const members: SwarmMember[] = [];
    return {
      localPeerId: peerId,
      join: (infoHash: string, events: SignalingEvents): SwarmSignal => {
        const member = new SwarmMember(this, host, peerId, infoHash, events);
        members.push(member);
        member.start();
        return member;
      },
      destroy: () => {
        for (const member of members) member.leave();
      },
    };
  }

  swarmSize(infoHash: string): number {
    return this.registry.getSwarm(infoHash)?.size ?? 0;
  }

  /**
   * Handles an announce at the tracker: registers the member (unless it left while the announce
   * was on its way), forwards its offers to random others.
   */
  announce(member: SwarmMember, offers: Attempt[]): void {
    this.announces++;
    const nowMs = this.clock.now();
    let swarm = this.registry.getSwarm(member.infoHash);
    if (!member.left) {
      const event = member.trackerEntry ? 'update' : 'started';
      const result = this.registry.announce({ infoHash: member.infoHash, peerId: member.peerId, owner: member, event, left: 1, nowMs });
      // The same peer id joined again before its old membership was removed: the new one holds it.
      if (result.replacedOwner) result.replacedOwner.trackerEntry = null;
      member.trackerEntry = result.peer;
      swarm = result.swarm;
    }
    const others = (swarm?.size ?? 0) - (member.trackerEntry ? 1 : 0);
    const targets = swarm ? this.registry.samplePeers(swarm, offers.length, member.trackerEntry) : [];
    targets.forEach((target, i) => {
      this.offersForwarded++;
      const attempt = offers[i]!;
      this.clock.setTimeout(() => target.owner.receiveOffer(attempt), this.params.trackerLatencyMs + target.owner.host.capacity.latencyMs);
    });
    const reply = this.params.trackerLatencyMs + member.host.capacity.latencyMs;
    this.clock.setTimeout(() => member.trackerReply(others), reply);
  }

  /** A stopped announce: the member leaves its swarm (freed when it was the last). */
  remove(member: SwarmMember): void {
    if (!member.trackerEntry) return;
    this.registry.remove(member.trackerEntry);
    member.trackerEntry = null;
  }
}

class SwarmMember implements SwarmSignal {
  /** Its membership at the tracker; null until its first announce arrives, and once removed. */
  trackerEntry: PeerEntry<SwarmMember> | null = null;
  left = false;
  /** Connection attempts by remote peer id (answered or open). */
  private readonly connections = new Map<string, Attempt>();
  /** Our offers not answered yet. */
  private readonly offers = new Set<Attempt>();
  private timer: unknown;
  private lastAnnounceAt = -Infinity;
  private requestGapMs: number;
  private otherPeers: number | undefined;

  constructor(
    private readonly tracker: SimTracker,
    readonly host: SimHost,
    readonly peerId: string,
    readonly infoHash: string,
    private readonly events: SignalingEvents,
  ) {
    this.requestGapMs = tracker.params.requestPeersIntervalMs;
  }

  private get clock(): VirtualClock {
    return this.tracker.clock;
  }

  private get trackerOneWayMs(): number {
    return this.tracker.params.trackerLatencyMs + this.host.capacity.latencyMs;
  }

  start(): void {
    this.schedule(0);
  }

  requestPeers(): void {
    if (this.left) return;
    const now = this.clock.now();
    const waitMs = Math.max(0, this.lastAnnounceAt + this.requestGapMs - now);
    if (now + waitMs < this.lastAnnounceAt + this.tracker.params.announceIntervalMs) this.schedule(waitMs);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    this.clock.clearTimeout(this.timer);
    this.clock.setTimeout(() => this.tracker.remove(this), this.trackerOneWayMs);
    for (const attempt of [...this.offers]) this.kill(attempt);
    for (const attempt of [...this.connections.values()]) this.kill(attempt);
  }

  trackerReply(otherPeers: number): void {
    this.otherPeers = otherPeers;
    if (!this.left) this.events.swarmSize?.(otherPeers + 1);
  }

  private schedule(delayMs: number): void {
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => this.announce(), delayMs);
  }

  private announce(): void {
    if (this.left) return;
    const { params } = this.tracker;
    const count = offersToMake({
      firstAnnounce: this.lastAnnounceAt === -Infinity, openSlots: params.maxPeers - this.connections.size - this.offers.size,
      otherPeers: this.otherPeers, offersPerAnnounce: params.offersPerAnnounce,
    });
    const offers: Attempt[] = [];
    for (let i = 0; i < count; i++) {
      const attempt: Attempt = { initiator: this, answerer: undefined, ends: undefined, dead: false, timer: undefined };
      attempt.timer = this.clock.setTimeout(() => this.kill(attempt), params.offerTimeoutMs);
      this.offers.add(attempt);
      offers.push(attempt);
    }
    this.clock.setTimeout(() => this.tracker.announce(this, offers), this.trackerOneWayMs);
    this.lastAnnounceAt = this.clock.now();
    this.requestGapMs = Math.min(this.requestGapMs * 2, params.announceIntervalMs);
    this.schedule(params.announceIntervalMs);
  }

  /** Whether a connection to `remote` should go ahead (core's webrtc-signaling admit()). */
  private admit(remote: SwarmMember, weInitiate: boolean): boolean {
    const existing = this.connections.get(remote.peerId);
    if (!existing) return this.connections.size < this.tracker.params.maxPeers;
    const initiatorOf = (local: boolean) => (local ? this.peerId : remote.peerId);
    if (initiatorOf(weInitiate) >= initiatorOf(existing.initiator === this)) return false;
    this.kill(existing);
    return true;
  }

  receiveOffer(attempt: Attempt): void {
    if (this.left || attempt.dead) return;
    const offerer = attempt.initiator;
    if (!this.admit(offerer, false)) return; // unanswered: the offer times out at the offerer
    attempt.answerer = this;
    this.connections.set(offerer.peerId, attempt);
    const viaTrackerMs = this.trackerOneWayMs + offerer.trackerOneWayMs;
    this.clock.setTimeout(() => offerer.receiveAnswer(attempt), viaTrackerMs);
  }

  private receiveAnswer(attempt: Attempt): void {
    if (this.left || attempt.dead || !this.offers.has(attempt)) return;
    this.offers.delete(attempt);
    const answerer = attempt.answerer!;
    if (!this.admit(answerer, true)) return this.kill(attempt);
    this.connections.set(answerer.peerId, attempt);
    // ICE checks and the DTLS/SCTP handshake: about two round trips between the peers.
    const rttMs = 2 * (this.host.capacity.latencyMs + answerer.host.capacity.latencyMs);
    this.clock.setTimeout(() => this.open(attempt), 2 * rttMs + 10);
  }

  private open(attempt: Attempt): void {
    const answerer = attempt.answerer!;
    if (attempt.dead || this.left || answerer.left) return this.kill(attempt);
    this.clock.clearTimeout(attempt.timer);
    const { network, ledger } = this.tracker;
    const ends = connectHosts(network, ledger, { host: this.host, peerId: this.peerId }, { host: answerer.host, peerId: answerer.peerId });
    attempt.ends = ends;
    ends[0].onShutDown = () => this.kill(attempt);
    ends[1].onShutDown = () => this.kill(attempt);
    this.requestGapMs = this.tracker.params.requestPeersIntervalMs;
    answerer.requestGapMs = this.tracker.params.requestPeersIntervalMs;
    this.events.peer(ends[0]);
    answerer.events.peer(ends[1]);
  }

  /** Ends an attempt on both sides; an open connection is closed (both engines hear of it). Called by a side of it. */
  private kill(attempt: Attempt): void {
    if (attempt.dead) return;
    attempt.dead = true;
    this.clock.clearTimeout(attempt.timer);
    attempt.initiator.offers.delete(attempt);
    for (const side of [attempt.initiator, attempt.answerer]) {
      if (!side) continue;
      const remote = side === attempt.initiator ? attempt.answerer : attempt.initiator;
      if (remote && side.connections.get(remote.peerId) === attempt) side.connections.delete(remote.peerId);
    }
    // Close our end; the remote hears of it one link latency later, like a real channel.
    if (attempt.ends) attempt.ends[attempt.initiator === this ? 0 : 1].close();
  }
}
