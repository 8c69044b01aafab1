// One joined swarm of the browser's signaling (webrtc-signaling.ts): its announces at each
// tracker (with WebRTC offers), the answers it relays back, and the connections it keeps, one per
// remote peer.
import type { ShoalError } from '../errors.js';
import { createLogger } from '../logger.js';
import type { SignalingEvents, TimerId } from '../types.js';
import { binaryToHex, isBinaryId, randomBinaryId } from './binary-id.js';
import { isSessionDescription, RtcPeer, type SessionDescription } from './rtc-peer.js';
import type { ResolvedSignalingOptions } from './signaling-options.js';
import type { TrackerSocket } from './tracker-socket.js';

const log = createLogger('shoal:core:signaling');

/** Offers in a swarm's first announce (the later ones make offersPerAnnounce). */
const JOIN_OFFERS = 2;

/**
 * The offers one announce carries: no more than the slots left below maxPeers (`openSlots`), the other
 * peers the tracker counts (it gives each offer to one of them), and offersPerAnnounce; a swarm's
 * first announce JOIN_OFFERS at most. Exported so that a simulated tracker (@shoal/sim) makes the same.
 */
export function offersToMake(announce: { firstAnnounce: boolean; openSlots: number; otherPeers: number | undefined; offersPerAnnounce: number }): number {
  const most = announce.firstAnnounce ? Math.min(JOIN_OFFERS, announce.offersPerAnnounce) : announce.offersPerAnnounce;
  return Math.max(0, Math.min(most, announce.openSlots, announce.otherPeers ?? Infinity));
}

/** Announce state of one swarm at one tracker. */
interface Announcer {
  timer: TimerId | undefined;
  lastAnnounceAt: number;
  /** Announce period; the tracker's `interval` once it said one. */
  intervalMs: number;
  /** Earliest spacing of an early announce (requestPeers); doubles per announce, reset by a new peer. */
  requestGapMs: number;
  /** The tracker knows us in this swarm (reset on reconnect: the tracker dropped us). */
  started: boolean;
  /** Offers are being prepared. */
  busy: boolean;
  /** Other peers in the swarm by the tracker's last count; undefined until it gave one. */
  otherPeers: number | undefined;
  /** No announce before this time: the tracker refused one and asked for a pause (`min interval`). */
  notBeforeMs: number;
}

interface PendingOffer {
  peer: RtcPeer;
  tracker: TrackerSocket;
}

/** One joined swarm: its announces at each tracker, our pending offers, and its peer connections by remote id. */
export class Swarm {
  private readonly announcers = new Map<TrackerSocket, Announcer>();
  /** Our unanswered offers by offer_id (binary). */
  private readonly offers = new Map<string, PendingOffer>();
  /** Connections with a known remote (answered or being answered, and open) by remote peer id (hex). */
  private readonly connections = new Map<string, RtcPeer>();
  private left = false;
  /** BitTorrent's announce `key`, a secret of ours: with it a tracker gives our peer_id back to our new socket after a reconnect. */
  private readonly key = binaryToHex(randomBinaryId());

  constructor(
    private readonly infoHash: string,
    private readonly peerIdBinary: string,
    private readonly localPeerId: string,
    private readonly options: ResolvedSignalingOptions,
    readonly events: SignalingEvents,
    private readonly peerConnectionFailed: (message: string) => void,
  ) {}

  trackerOpened(tracker: TrackerSocket): void {
    const announcer = this.announcer(tracker);
    announcer.started = false;
    if (tracker.connected) void this.announce(tracker, announcer);
  }

  trackerLost(tracker: TrackerSocket, error: ShoalError): void {
    const announcer = this.announcer(tracker);
    this.options.clock.clearTimeout(announcer.timer);
    announcer.started = false;
    // Answers to offers sent there can no longer arrive.
    for (const { peer, tracker: via } of [...this.offers.values()]) if (via === tracker) peer.close();
    this.events.error(error);
  }

  requestPeers(): void {
    if (this.left) return;
    const { clock } = this.options;
    for (const [tracker, announcer] of this.announcers) {
      if (!tracker.connected || announcer.busy) continue;
      const waitMs = Math.max(0, announcer.lastAnnounceAt + announcer.requestGapMs - clock.now(), announcer.notBeforeMs - clock.now());
      const scheduledAt = announcer.lastAnnounceAt + announcer.intervalMs;
      if (clock.now() + waitMs < scheduledAt) this.schedule(tracker, announcer, waitMs);
    }
  }

  leave(): void {
    this.left = true;
    for (const [tracker, announcer] of this.announcers) {
      this.options.clock.clearTimeout(announcer.timer);
      if (announcer.started) {
        tracker.send({ action: 'announce', event: 'stopped', info_hash: this.infoHash, peer_id: this.peerIdBinary, numwant: 0 });
      }
    }
    this.announcers.clear();
    for (const { peer } of [...this.offers.values()]) peer.close();
    for (const peer of [...this.connections.values()]) peer.close();
  }

  trackerMessage(tracker: TrackerSocket, message: Record<string, unknown>): void {
    if (message.action !== 'announce') return;
    const announcer = this.announcer(tracker);
    const failure = message['failure reason'];
    if (failure !== undefined) {
      // A refusal concerns this swarm, not the socket that other swarms share: keep both. When the
      // tracker asks for a pause, the next announce (which retries a refused one) waits that long.
      this.events.warning(`${tracker.url}: refused swarm ${binaryToHex(this.infoHash)}: ${String(failure)}`);
      const pauseS = Number(message['min interval']);
      if (pauseS > 0) {
        announcer.notBeforeMs = this.options.clock.now() + pauseS * 1000;
        this.schedule(tracker, announcer, pauseS * 1000);
      }
      return;
    }
    if (message['warning message'] !== undefined) this.events.warning(`${tracker.url}: ${String(message['warning message'])}`);
    const intervalS = Number(message.interval ?? message['min interval']);
    if (intervalS > 0) announcer.intervalMs = Math.max(intervalS * 1000, this.options.requestPeersIntervalMs);
    const complete = Number(message.complete);
    const incomplete = Number(message.incomplete);
    if (Number.isInteger(complete) && Number.isInteger(incomplete)) {
      announcer.otherPeers = Math.max(0, complete + incomplete - 1);
      this.events.swarmSize?.(Math.max(1, complete + incomplete));
    }
    if (message.offer !== undefined) void this.answerOffer(tracker, message);
    else if (message.answer !== undefined) this.acceptAnswer(message);
  }

  private announcer(tracker: TrackerSocket): Announcer {
    let announcer = this.announcers.get(tracker);
    if (!announcer) {
      const { announceIntervalMs, requestPeersIntervalMs } = this.options;
      announcer = {
        timer: undefined, lastAnnounceAt: -Infinity, intervalMs: announceIntervalMs, requestGapMs: requestPeersIntervalMs,
        started: false, busy: false, otherPeers: undefined, notBeforeMs: -Infinity,
      };
      this.announcers.set(tracker, announcer);
    }
    return announcer;
  }

  private schedule(tracker: TrackerSocket, announcer: Announcer, delayMs: number): void {
    const { clock } = this.options;
    clock.clearTimeout(announcer.timer);
    // Past 2^31 - 1 ms, setTimeout fires at once (a tracker's huge `interval` would loop our announces).
    announcer.timer = clock.setTimeout(() => void this.announce(tracker, announcer), Math.min(delayMs, 2e9));
  }

  /**
   * How many offers are worth making: room for more peers, and other peers the tracker could give
   * them to; the first announce of a swarm makes JOIN_OFFERS at most (a newcomer joins before its
   * first loads, and each offer and handshake takes a small uplink its own requests need).
   */
  private offerCount(announcer: Announcer): number {
    return offersToMake({
      firstAnnounce: !announcer.started, openSlots: this.options.maxPeers - this.connections.size - this.offers.size,
      otherPeers: announcer.otherPeers, offersPerAnnounce: this.options.offersPerAnnounce,
    });
  }

  private async announce(tracker: TrackerSocket, announcer: Announcer): Promise<void> {
    const { clock } = this.options;
    clock.clearTimeout(announcer.timer);
    announcer.timer = undefined;
    if (this.left || announcer.busy || !tracker.connected) return;
    const pauseMs = announcer.notBeforeMs - clock.now();
    if (pauseMs > 0) return this.schedule(tracker, announcer, pauseMs);
    announcer.busy = true;
    const count = this.offerCount(announcer);
    const made = await Promise.all(Array.from({ length: count }, () => this.makeOffer(tracker)));
    announcer.busy = false;
    const offers = made.filter((offer) => offer !== undefined);
    const message = {
      action: 'announce',
      info_hash: this.infoHash,
      peer_id: this.peerIdBinary,
      key: this.key,
      numwant: offers.length,
      offers: offers.map(({ offerId, offer }) => ({ offer_id: offerId, offer })),
      ...(announcer.started ? {} : { event: 'started' }),
    };
    // A pause asked for while the offers were made: the timer it set announces later.
    if (this.left || clock.now() < announcer.notBeforeMs || !tracker.send(message)) {
      for (const { offerId } of offers) this.offers.get(offerId)?.peer.close();
      return;
    }
    log('announced %s to %s with %d offers', binaryToHex(this.infoHash), tracker.url, offers.length);
    announcer.started = true;
    announcer.lastAnnounceAt = clock.now();
    announcer.requestGapMs = Math.min(announcer.requestGapMs * 2, announcer.intervalMs);
    this.schedule(tracker, announcer, announcer.intervalMs);
  }

  private async makeOffer(tracker: TrackerSocket): Promise<{ offerId: string; offer: SessionDescription } | undefined> {
    const offerId = randomBinaryId();
    const peer = this.createPeer(true);
    if (!peer) return undefined;
    this.offers.set(offerId, { peer, tracker });
    peer.setDeadline(this.options.offerTimeoutMs, 'no answer to the offer');
    try {
      return { offerId, offer: await peer.createOffer() };
    } catch (error) {
      if (!peer.closed) this.events.warning(`could not create a WebRTC offer: ${(error as Error).message}`);
      peer.close();
      return undefined;
    }
  }

  private async answerOffer(tracker: TrackerSocket, message: Record<string, unknown>): Promise<void> {
    const { offer, offer_id: offerId, peer_id: remoteBinary } = message;
    if (!isSessionDescription(offer, 'offer') || !isBinaryId(offerId) || !isBinaryId(remoteBinary)) {
      this.events.warning(`${tracker.url}: ignored a malformed offer`);
      return;
    }
    const remotePeerId = binaryToHex(remoteBinary);
    if (!this.admit(remotePeerId, false)) return;
    const peer = this.createPeer(false);
    if (!peer) return;
    this.connecting(peer, remotePeerId);
    let answer: SessionDescription;
    try {
      answer = await peer.acceptOffer(offer);
    } catch (error) {
      if (!peer.closed) peer.fail(`could not answer its offer: ${(error as Error).message}`);
      return;
    }
    const sent = tracker.send({
      action: 'announce', info_hash: this.infoHash, peer_id: this.peerIdBinary, to_peer_id: remoteBinary, offer_id: offerId, answer,
    });
    if (!sent) peer.close();
  }

  /** The peer is `remotePeerId`'s connection now, and has connectTimeoutMs to open. */
  private connecting(peer: RtcPeer, remotePeerId: string): void {
    peer.remotePeerId = remotePeerId;
    this.connections.set(remotePeerId, peer);
    peer.setDeadline(this.options.connectTimeoutMs, `no connection within ${this.options.connectTimeoutMs} ms of the answer`);
  }

  private acceptAnswer(message: Record<string, unknown>): void {
    const { answer, offer_id: offerId, peer_id: remoteBinary } = message;
    const pending = typeof offerId === 'string' ? this.offers.get(offerId) : undefined;
    // An answer to an offer we closed (timed out, or the swarm is full) is late, not wrong.
    if (!pending) return;
    const { peer } = pending;
    this.offers.delete(offerId as string);
    if (!isSessionDescription(answer, 'answer') || !isBinaryId(remoteBinary)) {
      peer.close();
      this.events.warning(`${pending.tracker.url}: ignored a malformed answer`);
      return;
    }
    const remotePeerId = binaryToHex(remoteBinary);
    if (!this.admit(remotePeerId, true)) return peer.close();
    this.connecting(peer, remotePeerId);
    peer.acceptAnswer(answer).catch((error: Error) => peer.fail(`could not accept its answer: ${error.message}`));
  }

  /**
   * Whether a new connection to this remote should go ahead. An open connection to it stays: the
   * tracker relays offers to random peers of the swarm, connected ones too, and replacing an open
   * connection cost its transfers and a new handshake on the viewer's uplink (browser swarm, 8
   * viewers, 125 kbit/s uplinks: open connections closed and made again about 2 s later, in a
   * newcomer's first seconds).
   * Of two connections being made, both sides keep the one whose initiator has the smaller peer
   * id; an existing loser is closed. (Should one side see the existing one open while the other
   * still makes it and takes the new one, both close and the peers meet again later.)
   */
  private admit(remotePeerId: string, weInitiate: boolean): boolean {
    const existing = this.connections.get(remotePeerId);
    if (!existing) return this.connections.size < this.options.maxPeers;
    if (existing.opened) return false;
    const initiatorOf = (initiatedLocally: boolean) => (initiatedLocally ? this.localPeerId : remotePeerId);
    if (initiatorOf(weInitiate) >= initiatorOf(existing.initiator)) return false;
    existing.close();
    return true;
  }

  /** A new connection, or undefined (and the signaling's status says why) where RTCPeerConnection throws. */
  private createPeer(initiator: boolean): RtcPeer | undefined {
    try {
      return this.newPeer(initiator);
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      this.events.warning(`could not create an RTCPeerConnection: ${message}`);
      this.peerConnectionFailed(message);
      return undefined;
    }
  }

  private newPeer(initiator: boolean): RtcPeer {
    const { options } = this;
    return new RtcPeer(initiator, {
      RTCPeerConnection: options.RTCPeerConnection,
      iceServers: options.iceServers,
      iceGatheringTimeoutMs: options.iceGatheringTimeoutMs,
      bufferedAmountLowThreshold: options.bufferedAmountLowThreshold,
      clock: options.clock,
      onOpen: (peer) => {
        if (this.left) return peer.close();
        log('peer %s connected in %s', peer.remotePeerId, binaryToHex(this.infoHash));
        for (const announcer of this.announcers.values()) announcer.requestGapMs = options.requestPeersIntervalMs;
        this.events.peer(peer);
      },
      onClose: (peer, reason, failed) => {
        for (const [offerId, pending] of this.offers) if (pending.peer === peer) this.offers.delete(offerId);
        if (this.connections.get(peer.remotePeerId) === peer) this.connections.delete(peer.remotePeerId);
        log('peer %s closed: %s', peer.remotePeerId || '(unanswered offer)', reason);
        // A failure before the channel opened, with a known remote, is a connectivity problem worth showing.
        if (failed && !peer.opened && peer.remotePeerId && !this.left) {
          this.events.warning(`peer ${peer.remotePeerId.slice(0, 8)}: ${reason}`);
        }
      },
    });
  }
}
