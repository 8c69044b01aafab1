// report.json's shape: one engine run's report (RunReport, with each viewer's PeerReport) and the
// comparison's (SwarmReport). report.ts fills it from what the runner collected.
import type { BrowsersReport } from './browser-report.js';
import type { LoadVerdict, OffloadPoint } from './metrics.js';
import type { NetworkReport } from './link-report.js';
import type { MemoryReport } from './memory-report.js';
import type { FaultReport } from './report-faults.js';
import type { UplinkAccount } from './uplink-account.js';
import type { UplinkClassesReport } from './uplink-classes.js';
import type { BrowserName } from './viewer-browsers.js';
import type { ConnectionCounts, EngineName, SegmentVerification } from './viewer-snapshot.js';

export interface PeerReport {
  id: string;
  p2p: boolean;
  /** The browser this viewer played in. */
  browser: BrowserName;
  /** The network profile made this viewer a non-uploader: its engine ran with upload off. */
  nonUploading: boolean;
  joinedAtS: number;
  leftAtS: number | null;
  startupMs: number | null;
  stalls: { count: number; seconds: number };
  /** Stall intervals in seconds since the run started, for the timeline chart. */
  stallTimeline: Array<{ startS: number; endS: number }>;
  httpBytes: number;
  p2pBytes: number;
  uploadedBytes: number;
  deliveredBytes: number;
  playedBytes: number;
  wasteBytes: number;
  playedSeconds: number;
  latencyS: number | null;
  avgBitrateKbps: number | null;
  peersConnected: number;
  fatalError: string | null;
  errors: number;
  /** hls.js error details (the last 20) with when they happened, s since the run started. */
  errorLog: Array<{ atS: number; details: string; fatal: boolean }>;
}

export interface RunReport {
  scenario: string;
  engine: EngineName;
  peers: number;
  durationS: number;
  streamUrl: string;
  trackerUrl: string | null;
  /** false for an external stream: origin figures are then estimates from the viewers' counters. */
  originCounted: boolean;
  offload: number | null;
  /** 1 - 1/N, or (K - 1)/N with K of N viewers sharing: each segment from the origin once. */
  ideal: number;
  /** offload / ideal. */
  efficiency: number | null;
  /**
   * The most offload this viewing allowed: min(ideal, uplinkBound). Equal to the ideal when the
   * uplinks have no limit or carry more than the viewers play (metrics.ts, capacityBound).
   */
  capacityBound: number;
  /**
   * What the sharing viewers' uplinks could carry over their time in the swarm / deliveredBytes
   * (above 1: more than the viewers played); null with no uplink limit or nothing delivered.
   */
  uplinkBound: number | null;
  /** The numerator of uplinkBound, bytes (uplink caps × seconds present; 0 for viewers that do not upload). */
  uplinkCapacityBytes: number | null;
  /** offload / capacityBound: how much of what the uplinks allowed was reached. */
  shareOfBound: number | null;
  originFetchesPerSegment: number | null;
  /** Against the HTTP-only baseline of the same comparison; null without one. */
  originSaving: number | null;
  wasteBytes: number;
  /** waste / bytes played. */
  wasteFraction: number | null;
  originSegmentBytes: number | null;
  originSegmentRequests: number | null;
  /** Bytes of the distinct segments the origin served. */
  distinctSegmentBytes: number | null;
  /**
   * Bytes of the distinct segments handed to at least one player: the denominator of origin
   * fetches per segment (prefetched or seeded segments nobody played do not count).
   */
  distinctDeliveredSegmentBytes: number | null;
  deliveredBytes: number;
  playedBytes: number;
  clientHttpBytes: number;
  clientP2pBytes: number;
  clientUploadedBytes: number;
  countersAgree: boolean | null;
  countersDifference: number | null;
  stalls: { count: number; seconds: number; secondsPerViewerMinute: number };
  startupMs: { p50: number | null; max: number | null; notStarted: number };
  latencyS: { p50: number | null };
  bitrateKbps: { avg: number | null };
  viewerMinutes: number;
  offloadOverTime: OffloadPoint[];
  hlsWorker: boolean | null;
  loadAverage: { before: number; peak: number };
  trackerStats: Record<string, unknown> | null;
  /** Each viewer's link and what it carried (null: all viewers on loopback, unshaped). */
  network: NetworkReport | null;
  /** Segments from peers were verified against the origin's SHA-256 manifest (null: no P2P). */
  integrity: boolean | null;
  /**
   * The viewers' peer connections by how they connected, summed over the viewers (a connection
   * between two viewers is counted at both ends); null when no page reported them.
   */
  connections: ConnectionCounts | null;
  /** Each browser's viewers, stalls and bytes, and the peer connections between browsers (--browsers). */
  browsers: BrowsersReport;
  /** Every segment handed to hls.js, checked by the viewer page against the origin's SHA-256 manifest. */
  verification: SegmentVerification | null;
  faults: FaultReport | null;
  memory: MemoryReport | null;
  /** Where the uploaders' links went after the joins (uplink-account.ts); null where the engines do not count it. */
  uplinkAccount: UplinkAccount | null;
  /**
   * Shaped runs: what each viewer's uplink carried, by class, counted in its own network namespace
   * (iptables counters in its OUTPUT chain, IP packet bytes, before its router's NAT and its tbf),
   * over its run (its join to its last reading) and after the joins (from `fromS`); null unshaped,
   * or where the counters could not be installed (a note says why). Per viewer and summed:
   * - bytes.payload: segment bytes sent to peers (the engine's uploadBytes);
   * - bytes.control: its peer protocol's other messages (Shoal's controlBytes; 0 for hls.js
   *   alone; 0 and counted in overhead for engines that do not say: `controlCounted` false);
   * - bytes.overhead: the rest of its UDP: IP/UDP/DTLS/SCTP headers, SCTP acknowledgements of the
   *   data it received, ICE/STUN/TURN, DTLS handshakes, data messages' 13-byte headers (negative
   *   over a span only if the engine counted bytes still in its channels' buffers at the end);
   * - bytes.origin: TCP to the origin (HTTP requests, acknowledgements of its downloads);
   * - bytes.tracker: TCP to the tracker (WebSocket); bytes.other: the rest (pages server, multicast);
   * - totalBytes: the kernel's total, the classes' sum; packets by the kernel's four classes;
   *   kbitPerS: bytes × 8 / seconds / 1000 (for groups: bytes over viewer-seconds, per viewer).
   * `rates`: the governor's mean pace and advertised rate after the joins (getStats
   * upload.paceBytesPerS and upload.advertisedBytesPerS, sampled at each reading) against the payload, all UDP, and everything its link carried, bytes/s.
   * `sendingPayload` / `sendingNone`: viewers that sent payload after the joins, and the others.
   * `timerLag`: how late a 100 ms timer in each page fired (whole ms; e2e/pages/timer-lag.js),
   * per viewer and pooled, over the run and after the joins.
   */
  uplinkClasses: UplinkClassesReport | null;
  notes: string[];
  perPeer: PeerReport[];
}

/** report.json's shape version: bumped when a field changes meaning or goes away. */
export const REPORT_SCHEMA_VERSION = 2;

export interface SwarmReport extends RunReport {
  schemaVersion: number;
  /** The Shoal commit that ran (git HEAD, "+dirty" with local changes); null outside a checkout. */
  shoalCommit: string | null;
  /**
   * Set when the run was cut short (interrupted, watchdog, no viewer started): the figures cover
   * what ran. code NO_VIEWER_PLAYING: no viewer started playing in the first seconds.
   */
  partial: { reason: string; code?: 'NO_VIEWER_PLAYING' } | null;
  /** The --assert thresholds, checked (empty without any). */
  thresholds: ThresholdResult[];
  /** Every engine run of the comparison, in the order they ran. */
  runs: RunReport[];
  /** The HTTP-only run the others are compared with; null when none ran. */
  baseline: RunReport | null;
  validity: LoadVerdict | null;
  /** Figures that are only meaningful relative to the baseline. */
  versusBaseline: Array<{ engine: EngineName; originSaving: number | null; addedStalls: number | null; startupDeltaMs: number | null }>;
  createdAt: string;
  machine: { cpus: number; platform: string; node: string };
  command: string;
}

/** One --assert threshold, checked against one engine run. */
export interface ThresholdResult {
  threshold: string;
  engine: EngineName;
  actual: number | null;
  bound: number | null;
  pass: boolean;
  /** Why it failed, when the figure or the baseline is missing. */
  reason?: string;
}
