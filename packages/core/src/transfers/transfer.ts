// One segment being fetched, and its legs: each leg brings one byte range of it, from one peer or
// from the origin, and the legs partition the segment, so the copy is whole once every byte of
// every leg has arrived. The bytes are assembled here as they arrive, whichever leg brings them,
// and what has arrived from the start on is served to peers asking for it (a relay). It imports
// only types, so every folder may import it.
import type { EngineEmit, OriginKind, StreamStats } from '../engine-events.js';
import type { PeerSession } from '../peers/peer.js';
import type { SegmentVerifier } from '../store/integrity.js';
import type { Clock, HttpClient, HttpTransfer, SegmentRef, SegmentStore } from '../types.js';
import type { SegmentStateValue } from '../wire/peer-protocol.js';
import type { OriginThroughput } from './origin-throughput.js';

/** The engine's services the transfers work with. */
export interface TransfersContext {
  clock: Clock;
  http: HttpClient;
  store: SegmentStore;
  verifier: SegmentVerifier;
  throughput: OriginThroughput;
  emit: EngineEmit;
  isDestroyed(): boolean;
  /** Something changed that a plan reads: plan again soon. */
  replan(): void;
}

export type { LegFailure, LegSink } from '../peers/peer-download.js';

/** The stream the transfers work for: what they count, tell the peers, and learn. */
export interface TransferStream {
  readonly key: string;
  readonly stats: Omit<StreamStats, 'peers'>;
  readonly pool: {
    announce(sequence: number, state: SegmentStateValue): void;
    /** We hold bytes [0, heldBytes) of a segment still arriving: peers may ask for them. */
    progress(sequence: number, heldBytes: number, totalBytes: number): void;
    /** Relayed bytes arrived: uploads waiting for them may go on. */
    relayedBytesArrived(): void;
    /** What we relayed of a segment is void: uploads of it that started end. */
    abandonRelayedUploads(sequence: number): void;
    ban(peer: PeerSession, reason: string): void;
  };
  readonly seeding: { failed(sequence: number, nowMs: number): void };
  learnBitrate(bytesPerS: number): void;
  /** The stream's bitrate, bytes per second of media (learnt, else guessed). */
  readonly bytesPerS: number;
}

/** Where a leg's bytes come from: a peer, or the origin (a request for the whole segment, or a Range request for the leg). */
export type LegSource = { kind: 'peer'; peer: PeerSession } | { kind: 'origin'; http: HttpTransfer | undefined; originKind: OriginKind };

export class Leg {
  /** Bytes received from `start` on. */
  received = 0;
  firstByteMs: number | undefined;
  /** Gone from the transfer: finished, moved elsewhere, or its transfer ended. */
  ended = false;
  /** Its source stopped before its bytes were all in (the peer left, or refused): the plan moves the rest elsewhere. */
  orphaned = false;
  /** From a peer: within how long of its start the peer took it to bring its bytes, ms (it accepted the request on that). */
  withinMs = Infinity;
  /** Bytes that arrived before the segment's size was known (an origin response without a length). */
  unplaced: Uint8Array[] = [];

  constructor(
    readonly id: number,
    readonly transfer: Transfer,
    readonly start: number,
    /** Exclusive; Infinity while the segment's size is not known (the last leg runs to its end). */
    public end: number,
    readonly source: LegSource,
    readonly startedMs: number,
  ) {}

  /** The next byte this leg expects. */
  get next(): number {
    return this.start + this.received;
  }

  get peer(): PeerSession | undefined {
    return this.source.kind === 'peer' ? this.source.peer : undefined;
  }

  /** Its peer's id (undefined: the origin); with it a leg is the plan's LegPlan as it is. */
  get peerId(): string | undefined {
    return this.peer?.id;
  }
}

/** `verifying`: bytes complete, integrity check running; `parked`: complete P2P bytes waiting for the next manifest. */
export type TransferState = 'running' | 'verifying' | 'parked';

/** A byte range one peer sent: whom to blame if the copy fails (sender-blame.ts). */
export interface SenderRange {
  peer: PeerSession;
  start: number;
  end: number;
}

export class Transfer {
  state: TransferState = 'running';
  /** The copy, allocated once the segment's size is known. */
  buffer: Uint8Array | undefined;
  /** Bytes received over every leg. */
  receivedBytes = 0;
  /** Bytes from 0 on that have all arrived: what is served to peers asking for the segment. */
  prefix = 0;
  readonly legs = new Set<Leg>();
  /** Every leg, ended or not, for the contiguous prefix. */
  private readonly pieces: Leg[] = [];
  /** What each peer sent, in the order their legs started. */
  readonly senders: SenderRange[] = [];
  p2pBytes = 0;
  httpBytes = 0;
  firstByteMs: number | undefined;
  /** The origin request for the whole segment, if one runs or ran: the player's ABR times the origin from it. */
  origin: { requestMs: number; firstByteMs: number | undefined } | undefined;
  /** Integrity verdicts asked for these bytes so far. */
  checks = 0;
  /** While parked: when the manifest may list the bytes. */
  recheckAtMs = 0;
  /** An origin fetch after a copy from several peers failed: that copy's bytes and senders, compared with the origin's to find whose bytes were bad. */
  failedMixedCopy: { bytes: Uint8Array; senders: SenderRange[] } | undefined;
  /** The `progress` last announced: 0 none, 1 at the first bytes, 2 at half. */
  announcedStep = 0;
  private nextLegId = 1;
  /**
   * The most a peer may say the segment holds (its first chunk sizes the copy: a liar had us
   * allocate up to 64 MiB): the playlist's byte range, else 4 times the bitrate over the duration and 1 MiB.
   * Transfers.sized refuses a peer's leg beyond it, as one whose size another sender contradicts.
   */
  readonly maxBytes: number;

  constructor(
    readonly ref: SegmentRef,
    /** A live-edge seeding fetch: it goes on when the load that asked for it is aborted. */
    readonly seed: boolean,
    /** The stream's bitrate, bytes per second of media. */
    bytesPerS = Infinity,
  ) {
    this.maxBytes = ref.byteRange ? ref.byteRange.end - ref.byteRange.start : 4 * bytesPerS * ref.durationS + 2 ** 20;
  }

  get sequence(): number {
    return this.ref.sequence;
  }

  get totalBytes(): number | undefined {
    return this.buffer?.length;
  }

  /** Whole: every byte of the segment has arrived. */
  get complete(): boolean {
    return this.buffer !== undefined && this.receivedBytes >= this.buffer.length;
  }

  addLeg(start: number, end: number, source: LegSource, nowMs: number): Leg {
    const leg = new Leg(this.nextLegId++, this, start, Math.min(end, this.totalBytes ?? Infinity), source, nowMs);
    this.legs.add(leg);
    this.pieces.push(leg);
    if (source.kind === 'peer') this.senders.push({ peer: source.peer, start, end: start });
    return leg;
  }

  someLeg(test: (leg: Leg) => boolean): boolean {
    for (const leg of this.legs) if (test(leg)) return true;
    return false;
  }

  /**
   * Its bytes so far and how many may go out to peers it is relayed to. The last byte waits until
   * the whole is verified and stored, so a peer that gets bad bytes through us gets no `done` from
   * us: we answer `absent` when our copy fails, and the peer that sent them is the one banned (by us).
   */
  relayable(): { bytes: Uint8Array; readableBytes: number } | undefined {
    const bytes = this.buffer;
    return bytes && { bytes, readableBytes: Math.min(this.prefix, bytes.length - 1) };
  }

  /**
   * The segment's size, as a leg learnt it: allocates the copy, and the open leg now ends there.
   * Returns false when a different size was known (one of the senders is wrong).
   */
  setSize(totalBytes: number): boolean {
    if (this.buffer) return this.buffer.length === totalBytes;
    this.buffer = new Uint8Array(totalBytes);
    for (const leg of this.pieces) {
      if (leg.end > totalBytes) leg.end = Math.max(totalBytes, leg.next);
      for (const chunk of leg.unplaced.splice(0)) this.place(leg, chunk);
    }
    return true;
  }

  /** Bytes of `leg` arrived (in order: they start at leg.next). */
  write(leg: Leg, chunk: Uint8Array): void {
    if (!this.buffer) leg.unplaced.push(chunk);
    else this.place(leg, chunk);
  }

  private place(leg: Leg, chunk: Uint8Array): void {
    const at = leg.next;
    const length = Math.min(chunk.length, this.buffer!.length - at);
    if (length <= 0) return;
    this.buffer!.set(length === chunk.length ? chunk : chunk.subarray(0, length), at);
    leg.received += length;
    this.receivedBytes += length;
    const peer = leg.peer;
    if (peer) {
      this.p2pBytes += length;
      for (let i = this.senders.length - 1; i >= 0; i--) {
        const sender = this.senders[i]!;
        if (sender.peer === peer && sender.start === leg.start) {
          sender.end = leg.next;
          break;
        }
      }
    } else this.httpBytes += length;
    if (leg.start <= this.prefix && leg.next > this.prefix) this.extendPrefix();
  }

  /**
   * The bytes `leg` brought are void (its relay's copy failed): they are to come again. Returns
   * whether the contiguous prefix shrank (what we relayed of it may be bad too).
   */
  unwrite(leg: Leg): boolean {
    this.receivedBytes -= leg.received;
    if (leg.peer) this.p2pBytes -= leg.received;
    else this.httpBytes -= leg.received;
    for (const sender of this.senders) if (sender.peer === leg.peer && sender.start === leg.start) sender.end = sender.start;
    const shrank = this.prefix > leg.start && leg.received > 0;
    leg.received = 0;
    leg.firstByteMs = undefined;
    if (shrank) {
      this.prefix = leg.start;
      this.extendPrefix();
    }
    return shrank;
  }

  /** The contiguous bytes from 0 grow over every piece that starts within them. */
  private extendPrefix(): void {
    for (let grown = true; grown; ) {
      grown = false;
      for (const piece of this.pieces) {
        if (piece.start <= this.prefix && piece.next > this.prefix) {
          this.prefix = piece.next;
          grown = true;
        }
      }
    }
  }
}
