// What a swarm viewer page reports (e2e/pages/swarm-viewer.js, `window.swarmViewer.snapshot()`).
// A leaf module (but for a shape of timer-lag.ts, itself a leaf): the runner, metrics and report all read these shapes.
import type { TimerLagSnapshot } from './timer-lag.js';

/** p2p-media-loader-peertube: p2p-media-loader with PeerTube's live settings (highDemandTimeWindow 4). */
export type EngineName = 'http' | 'shoal' | 'p2p-media-loader' | 'p2p-media-loader-peertube';
export const engineNames: readonly EngineName[] = ['http', 'shoal', 'p2p-media-loader', 'p2p-media-loader-peertube'];

export interface StallRecord {
  /** Epoch ms. */
  startMs: number;
  /** Epoch ms; null while the stall lasts. */
  endMs: number | null;
  /** Media time where the stall began, s. */
  atS: number;
}

export interface ViewerSnapshot {
  engine: EngineName;
  /** false: this viewer plays with hls.js alone (the P2P-off part of a scenario). */
  p2p: boolean;
  atMs: number;
  navigationStartMs: number;
  firstFrameMs: number | null;
  stalls: StallRecord[];
  errors: Array<{ atMs: number; type: string; details: string; fatal: boolean }>;
  fatalError: string | null;
  /** Media segment bytes this viewer fetched over HTTP, by its engine's own count. */
  httpBytes: number;
  /** Media segment bytes received from peers. */
  p2pBytes: number;
  /** Media segment bytes sent to peers. */
  uploadedBytes: number;
  /** Shoal only: bytes of its peer messages other than data sent (getStats controlBytes). */
  controlBytes?: number;
  /** Shoal only: its upload governor's pace now, bytes/s (getStats upload.paceBytesPerS). */
  uploadPaceBytesPerS?: number | null;
  /** Shoal only: the upload rate its pings tell peers, bytes/s (getStats upload.advertisedBytesPerS; null: not measured yet). */
  uploadAdvertisedBytesPerS?: number | null;
  /** How late the page's timers fired (e2e/pages/timer-lag.js). */
  timerLag?: TimerLagSnapshot;
  peers: number;
  /** Segment bytes handed to hls.js (FRAG_LOADED), whatever their source. */
  deliveredBytes: number;
  /** Bytes of the delivered segments that were (at least half) played. */
  playedBytes: number;
  playedSeconds: number;
  currentTime: number;
  latencySamples: number[];
  bitrateSamples: number[];
  ended: boolean;
  workerEnabled: boolean | null;
  /** Every media segment handed to hls.js, `${level}:${sn}` -> bytes (for distinct segments played). */
  segments?: Record<string, number>;
  /** This page's peer connections by how they connected (e2e/pages/peer-connections.js). */
  connections?: ConnectionCounts;
  /** This page's answered peer connections by the browser at the other end ('chromium', 'firefox'). */
  connectionsByRemote?: Record<string, { connected: number; failed: number }>;
  /** Every segment handed to hls.js checked against the origin's SHA-256 manifest by the page. */
  verification?: SegmentVerification;
  /** Chromium's performance.memory.usedJSHeapSize (null elsewhere). */
  heapBytes?: number | null;
  /** Shoal only: bytes in the engine's segment store. */
  storeBytes?: number | null;
  /** Shoal only: the peers this viewer banned, with why and when (epoch ms). */
  bans?: Array<{ peerId: string; reason: string; atMs: number }>;
  /** --trace: the page's log lines since the previous snapshot (the session writes them out). */
  traceLines?: string[];
}

export interface SegmentVerification {
  verified: number;
  /** Bytes that differ from the manifest's digest: a corrupt segment reached the player. */
  mismatched: number;
  /** Not in the manifest even after a refresh (live: the window moved on): not checked. */
  unlisted: number;
  mismatchedSegments: string[];
}

/** Peer connections: direct (host), through NAT (srflx/prflx), through TURN (relay), failed, never connected. */
export interface ConnectionCounts {
  host: number;
  srflx: number;
  relay: number;
  unknown: number;
  failed: number;
  unconnected: number;
}
