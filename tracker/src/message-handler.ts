// What the tracker does with each message, independent of the socket library: rate limits,
// announce/answer/scrape, offer and answer relay. The server adapter (uWS) only moves text
// frames in and out and reports closes.
//
// Who may speak for a peer: its peer_id belongs to the connection that announced it first
// (swarm-registry.ts); another connection's announce for it is refused unless it shows the
// peer's `key`. An answer is relayed only for an offer this tracker gave the answerer
// (offer-book.ts), back to the peer that made it.

import type { Connection } from './connection.js';
import { readFrame } from './frame-reader.js';
import { OutgoingFrames, failureFrame } from './outgoing-frames.js';
import { binaryIdToHex, parseRequest, type AnnounceRequest, type AnswerRequest, type ScrapeRequest, type TrackerRequest } from './protocol.js';
import { isAbusive, secondsUntilToken, takeTokens } from './rate-limit.js';
import { routingOf } from './request-routing.js';
import { OfferBook } from './offer-book.js';
import { SwarmRegistry, provesKey, type PeerEntry } from './swarm-registry.js';

/** Decides whether a peer may join a swarm: true allows, false or a string (the failure reason) refuses. */
export type AnnounceFilter = (infoHashHex: string, context: { peerIdHex: string; ip: string; origin: string }) => boolean | string;

export interface MessageHandlerOptions {
  announceIntervalSec: number;
  peerTimeoutSec: number;
  maxOffersPerAnnounce: number;
  maxSwarmsPerConnection: number;
  maxScrapeInfoHashes: number;
  fullScrape: boolean;
  messagesPerSecond: number;
  messageBurst: number;
  filter?: AnnounceFilter | undefined;
}

export interface MessageCounters {
  messages: number;
  announces: number;
  answers: number;
  scrapes: number;
  offersRelayed: number;
  answersRelayed: number;
  failures: number;
  /** Announces refused: their peer_id belongs to another connection, and they did not show its key. */
  peerIdInUse: number;
  /** Answers not relayed: no offer with that offer_id from that to_peer_id was given to the answerer. */
  answersWithoutOffer: number;
  rateLimited: number;
  abusersClosed: number;
  peersExpired: number;
}

/** Close code for policy violations (RFC 6455). */
export const CLOSE_POLICY = 1008;
/** An invalid message costs this many rate-limit tokens, so garbage gets a socket closed fast. */
const INVALID_MESSAGE_COST = 5;
const textDecoder = new TextDecoder();
const PEER_ID_IN_USE = 'peer_id in use by another connection';
const ANSWER_WITHOUT_OFFER = 'answer to no offer this tracker gave you (`offer_id` unknown, expired or from another `to_peer_id`)';

export class MessageHandler {
  readonly registry = new SwarmRegistry<Connection>();
  /** The offers given to this node's sockets, which they may answer (other nodes' sockets: those nodes' books). */
  readonly offers = new OfferBook<PeerEntry<Connection>>();
  readonly counters: MessageCounters = {
    messages: 0,
    announces: 0,
    answers: 0,
    scrapes: 0,
    offersRelayed: 0,
    answersRelayed: 0,
    failures: 0,
    peerIdInUse: 0,
    answersWithoutOffer: 0,
    rateLimited: 0,
    abusersClosed: 0,
    peersExpired: 0,
  };
  /** Told when the announce filter throws (the client only learns that it failed). */
  onFilterError: ((error: unknown) => void) | null = null;
  /** info_hashes (binary) allowed to form swarms; null allows every info_hash. */
  allowedInfoHashes: ReadonlySet<string> | null = null;
  private readonly options: MessageHandlerOptions;
  private readonly intervalSec: number;
  private readonly frames = new OutgoingFrames();
  private readonly parseLimits: { maxOffers: number; maxScrapeInfoHashes: number };

  constructor(options: MessageHandlerOptions) {
    this.options = options;
    this.intervalSec = options.announceIntervalSec;
    this.parseLimits = { maxOffers: options.maxOffersPerAnnounce, maxScrapeInfoHashes: options.maxScrapeInfoHashes };
    this.registry.onPeerRemoved = (peer) => {
      peer.owner.dropPeer(peer);
    };
  }

  /** Call once when a connection opens: it starts with a full burst of rate-limit tokens. */
  handleOpen(connection: Connection, nowMs: number): void {
    connection.tokens = this.options.messageBurst;
    connection.refilledMs = nowMs;
  }

  /**
   * One received frame: its text, or its UTF-8 bytes (which must be valid UTF-8, as uWS ensures
   * for text frames; they are not kept after the call).
   */
  handleMessage(connection: Connection, frame: string | Uint8Array, nowMs: number): void {
    if (connection.closed) return;
    this.counters.messages++;
    if (!this.takeToken(connection, nowMs, 1)) {
      if (!connection.closed) this.refuseRateLimited(connection, frame);
      return;
    }

    const limits = this.parseLimits;
    let request: TrackerRequest | null;
    if (typeof frame === 'string') request = parseRequest(frame, limits);
    else request = readFrame(frame, limits) ?? parseRequest(textDecoder.decode(frame), limits);
    switch (request.kind) {
      case 'announce':
        this.counters.announces++;
        return this.announce(connection, request, nowMs);
      case 'answer':
        this.counters.answers++;
        return this.answer(connection, request, nowMs);
      case 'scrape':
        this.counters.scrapes++;
        return this.scrape(connection, request);
      case 'invalid': {
        // Unparsable or without a known action: name what can still be read, so the client
        // can route the failure instead of dropping its socket.
        const routing = request.action ? request : routingOf(frame);
        this.fail(connection, request.reason, routing.action, routing.infoHash);
        this.takeToken(connection, nowMs, INVALID_MESSAGE_COST - 1);
        return;
      }
    }
  }

  /** A closed socket leaves every swarm it was in. */
  handleClose(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    for (const peer of connection.allPeers()) this.registry.remove(peer);
  }

  /** Drops peers that missed their announces; call every few seconds. */
  expire(nowMs: number): number {
    const removed = this.registry.expire(nowMs - this.options.peerTimeoutSec * 1000);
    this.counters.peersExpired += removed;
    return removed;
  }

  /** Applies a new info_hash allow-list and evicts swarms no longer on it; returns peers evicted. */
  setAllowedInfoHashes(allowed: ReadonlySet<string> | null): number {
    this.allowedInfoHashes = allowed;
    if (!allowed) return 0;
    let evicted = 0;
    for (const infoHash of [...this.registry.swarms.keys()]) {
      if (!allowed.has(infoHash)) evicted += this.registry.removeSwarm(infoHash);
    }
    return evicted;
  }

  private takeToken(connection: Connection, nowMs: number, cost: number): boolean {
    if (this.options.messagesPerSecond <= 0) return true;
    if (takeTokens(connection, this.options, nowMs, cost)) return true;
    this.counters.rateLimited++;
    // Keeps sending after being told: the debt grows past a full burst and the socket goes.
    if (isAbusive(connection, this.options)) {
      this.counters.abusersClosed++;
      connection.close(CLOSE_POLICY, 'rate limit exceeded');
      this.handleClose(connection);
    }
    return false;
  }

  /**
   * The answer to a frame dropped by the rate limit: it names the frame's action and info_hash
   * (read without parsing), and asks the client to wait until its bucket holds a token again.
   */
  private refuseRateLimited(connection: Connection, frame: string | Uint8Array): void {
    const { action, infoHash } = routingOf(frame);
    this.fail(connection, 'rate limit exceeded: slow down', action, infoHash, secondsUntilToken(connection, this.options));
  }

  private announce(connection: Connection, request: AnnounceRequest, nowMs: number): void {
    const { infoHash, peerId } = request;
    const existing = connection.peerIn(infoHash);
    if (existing && existing.peerId !== peerId) {
      return this.fail(connection, 'one peer_id per info_hash per connection', 'announce', infoHash);
    }
    if (request.event === 'stopped' && !existing) {
      // Only the connection that holds a peer may stop it: peer ids are public (offers carry them).
      const swarm = this.registry.getSwarm(infoHash);
      connection.send(
        JSON.stringify({ action: 'announce', interval: this.intervalSec, info_hash: infoHash, complete: swarm?.complete ?? 0, incomplete: swarm?.incomplete ?? 0 }),
      );
      return;
    }
    if (!existing) {
      // aquatic_ws ignores such an announce; a failure reason tells an honest client why nothing happens.
      const holder = this.registry.getPeer(infoHash, peerId);
      if (holder && !provesKey(holder, request.key)) {
        this.counters.peerIdInUse++;
        return this.fail(connection, PEER_ID_IN_USE, 'announce', infoHash);
      }
      const refusal = this.refuseJoin(connection, infoHash, peerId);
      if (refusal) return this.fail(connection, refusal, 'announce', infoHash);
    }

    const result = this.registry.announce({
      infoHash,
      peerId,
      owner: connection,
      event: request.event,
      left: request.left,
      key: request.key,
      nowMs,
    });
    const peer = result.peer;
    if (peer) {
      if (result.replacedOwner && result.replacedOwner !== connection) result.replacedOwner.dropPeer(peer);
      connection.addPeer(peer);
    }

    const swarm = result.swarm;
    connection.send(this.frames.announceResponse(this.intervalSec, infoHash, swarm.complete, swarm.incomplete));
    if (!peer || request.numwant === 0) return;
    const targets = this.registry.samplePeers(swarm, request.numwant, peer);
    for (let i = 0; i < targets.length; i++) {
      const offer = request.offers[i]!;
      const target = targets[i]!;
      const frame = this.frames.offer(offer.offer, offer.offerId, peerId, infoHash);
      if (target.owner.sendOffer(frame, infoHash, peer.peerId, offer.offerId)) this.offers.record(offer.offerId, target, peer.peerId, nowMs);
      this.counters.offersRelayed++;
    }
  }

  private refuseJoin(connection: Connection, infoHash: string, peerId: string): string | null {
    if (connection.swarmCount >= this.options.maxSwarmsPerConnection) {
      return `too many swarms on one connection (at most ${this.options.maxSwarmsPerConnection})`;
    }
    if (this.allowedInfoHashes && !this.allowedInfoHashes.has(infoHash)) return 'info_hash not allowed by this tracker';
    const filter = this.options.filter;
    if (filter) {
      let verdict: boolean | string;
      try {
        verdict = filter(binaryIdToHex(infoHash), { peerIdHex: binaryIdToHex(peerId), ip: connection.ip, origin: connection.origin });
      } catch (error) {
        this.onFilterError?.(error);
        verdict = 'announce filter failed';
      }
      if (verdict !== true) return typeof verdict === 'string' ? verdict : 'info_hash not allowed by this tracker';
    }
    return null;
  }

  private answer(connection: Connection, request: AnswerRequest, nowMs: number): void {
    const { infoHash } = request;
    const self = connection.peerIn(infoHash);
    if (!self || self.peerId !== request.peerId) {
      return this.fail(connection, 'answer from a peer that has not announced on this connection', 'announce', infoHash);
    }
    this.registry.touch(self, nowMs);
    if (!this.offers.take(request.offerId, self, request.toPeerId, nowMs)) {
      this.counters.answersWithoutOffer++;
      return this.fail(connection, ANSWER_WITHOUT_OFFER, 'announce', infoHash);
    }
    const target = self.swarm.byId.get(request.toPeerId);
    if (!target) return this.fail(connection, 'no peer with that `to_peer_id`', 'announce', infoHash);
    target.owner.send(this.frames.answer(request.answer, request.offerId, request.peerId, infoHash));
    this.counters.answersRelayed++;
  }

  private scrape(connection: Connection, request: ScrapeRequest): void {
    let infoHashes = request.infoHashes;
    if (!infoHashes) {
      if (!this.options.fullScrape) return this.fail(connection, 'full scrape is disabled on this tracker', 'scrape');
      infoHashes = [...this.registry.swarms.keys()];
    }
    const files: Record<string, { complete: number; incomplete: number; downloaded: number }> = {};
    for (const infoHash of infoHashes) {
      const swarm = this.registry.getSwarm(infoHash);
      files[infoHash] = swarm
        ? { complete: swarm.complete, incomplete: swarm.incomplete, downloaded: swarm.downloaded }
        : { complete: 0, incomplete: 0, downloaded: 0 };
    }
    connection.send(JSON.stringify({ action: 'scrape', files, flags: { min_request_interval: this.intervalSec } }));
  }

  private fail(connection: Connection, reason: string, action?: 'announce' | 'scrape', infoHash?: string, minIntervalSec?: number): void {
    this.counters.failures++;
    connection.send(failureFrame(reason, action, infoHash, minIntervalSec));
  }
}
