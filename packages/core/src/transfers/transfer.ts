// One segment's transfer, the record the Transfers room (transfers.ts) and its HTTP half
// (http-transfer.ts) share: where its bytes come from and what arrived so far. It imports
// only types, so both import it without a loop.
import type { EngineEmit, OriginKind, StreamStats } from '../engine-events.js';
import type { SegmentVerifier } from '../store/integrity.js';
import type { OriginThroughput } from './origin-throughput.js';
import type { PendingLoads } from './pending-loads.js';
import type { PeerPool } from '../peers/peer-pool.js';
import type { PeerSession } from '../peers/peer.js';
import type { ResumedPrefix } from '../peers/peer-download.js';
import type { FailedMixedCopy, Sender } from './sender-blame.js';
import type { Clock, HttpClient, HttpTransfer, SegmentRef, SegmentStore } from '../types.js';

/** `verifying`: bytes complete, integrity check running; `parked`: complete P2P bytes waiting for the next manifest. */
export type TransferState = 'http' | 'p2p' | 'verifying' | 'parked';

export class Transfer {
  /**
   * The peers that sent the P2P bytes, in byte order (one, unless the transfer resumed at another
   * peer), kept after an HTTP resume: who is blamed if the whole fails verification (sender-blame.ts).
   */
  senders: Sender[];
  /** Its peer left after sending a prefix: the prefix, until the plan says where the rest comes from. */
  orphan: ResumedPrefix | undefined;
  /** An origin fetch after a copy from several peers failed: that copy, compared with this one to find whose bytes were bad. */
  failedMixedCopy: FailedMixedCopy | undefined;
  http: HttpTransfer | undefined;
  /** Bytes received over P2P before an HTTP Range resume. */
  prefix: Uint8Array | undefined;
  p2pBytes = 0;
  httpBytes = 0;
  firstByteMs: number | undefined;
  /** The origin request for the whole segment, if one runs or ran (not a Range resume). */
  origin: { requestMs: number; firstByteMs: number | undefined } | undefined;
  /** What its origin bytes are for, counted by kind in the stream's stats. */
  originKind: OriginKind = 'urgent';
  /** Integrity verdicts asked for these bytes so far. */
  checks = 0;
  /** While parked: the complete P2P bytes, checked again at `recheckAtMs` rather than downloaded again. */
  parked: { bytes: Uint8Array; recheckAtMs: number } | undefined;
  /** While verifying: the complete bytes (relayed to peers but for their last byte). */
  verifying: Uint8Array | undefined;
  /** While over HTTP: bytes the request is expected to bring (a Range's length, else the segment's estimated size) and has brought. */
  httpExpected = { bytes: 0, received: 0 };

  constructor(
    readonly sequence: number,
    public state: TransferState,
    /** The peer serving the transfer now. */
    public peer: PeerSession | undefined,
    /** A live-edge seeding fetch: it goes on when the load that asked for it is aborted. */
    readonly seed: boolean,
  ) {
    this.senders = peer ? [{ peer, fromByte: 0 }] : [];
  }
}

/** The stream a Transfers room works for. */
export interface TransferStream {
  readonly key: string;
  readonly refs: Map<number, SegmentRef>;
  readonly waiters: PendingLoads;
  readonly pool: PeerPool;
  readonly stats: Omit<StreamStats, 'peers'>;
  readonly seeding: { failed(sequence: number, nowMs: number): void };
  /** The stream's bitrate, bytes per second of media, learnt from completed segments. */
  readonly bytesPerS: number;
  learnBitrate(bytesPerS: number): void;
}

export interface TransferDeps {
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

