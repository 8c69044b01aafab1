// Turns what one engine run counted into its report, and several runs into report.json's shape.
import {
  baselineVerdict,
  capacityBound,
  countersAgreement,
  efficiency,
  idealOffload,
  mean,
  offload,
  offloadOverTime,
  originFetchesPerSegment,
  originSaving,
  percentile,
  shareOfBound,
  startupMs,
  summarizeStalls,
  viewerWasteBytes,
  type UplinkPresence,
  type TimelinePoint,
} from './metrics.js';
import { summarizeBrowsers } from './browser-report.js';
import { summarizeNetwork, type NetworkRecord } from './link-report.js';
import type { Scenario } from './scenarios.js';
import type { FaultRecord } from './faults.js';
import { summarizeMemory, type MemoryPoint } from './memory-report.js';
import { summarizeFaults, sumVerification } from './report-faults.js';
import type { BrowserName } from './viewer-browsers.js';
import type { ConnectionCounts, EngineName, ViewerSnapshot } from './viewer-snapshot.js';
import { REPORT_SCHEMA_VERSION, type PeerReport, type RunReport, type SwarmReport, type ThresholdResult } from './report-schema.js';
import type { UplinkAccount } from './uplink-account.js';
import { summarizeUplinkClasses, type UplinkClassesRecord, type UplinkClassesReport } from './uplink-classes.js';

export interface OriginCount {
  segmentBytes: number;
  segmentRequests: number;
  distinctSegmentBytes: number;
}

/** What the runner collected in one engine run. */
export interface RunRecord {
  scenario: Scenario;
  engine: EngineName;
  peers: number;
  durationS: number;
  streamUrl: string;
  trackerUrl: string | null;
  startedAtMs: number;
  /** null for an external stream: no origin count exists. */
  origin: OriginCount | null;
  viewers: Array<{
    id: string;
    p2p: boolean;
    /** The browser it played in; absent: chromium. */
    browser?: BrowserName;
    /** The network profile made this viewer a non-uploader (engine upload off, uplink capped); absent: false. */
    nonUploading?: boolean;
    /** The cap on the viewer's uplink, bits/s; absent or Infinity: no limit (an unshaped run). */
    uplinkBitsPerS?: number;
    joinedAtMs: number;
    leftAtMs: number | null;
    endedAtMs: number;
    final: ViewerSnapshot | null;
  }>;
  timeline: TimelinePoint[];
  loadAverage: { before: number; peak: number };
  /** Our tracker's /stats.json at the end of the run (null for an external tracker). */
  trackerStats: Record<string, unknown> | null;
  /** The viewers' shaped links (null: all on loopback, unshaped). */
  network?: NetworkRecord | null;
  /** Segments from peers verified against the origin's SHA-256 manifest (null: no P2P in this run). */
  integrity?: boolean | null;
  /** Where the uploaders' links went after the joins, where the engines count it. */
  uplinkAccount?: UplinkAccount | null;
  /** Shaped runs: each viewer's uplink by class, the kernel's counts with its engine's (null: unshaped). */
  uplinkClasses?: UplinkClassesRecord | null;
  /** Why the uplink's classes were not counted (null: they were, or the run was unshaped). */
  uplinkClassesFailure?: string | null;
  /** What the --fault phases did (null: none ran). */
  faults?: FaultRecord | null;
  /** Every viewer's heap and store size at every sample. */
  memory?: MemoryPoint[];
}

const round = (value: number | null, digits = 4) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

/** Each viewer's uplink for sharing (0 unless it shares: P2P on, in a Shoal run, uploading) and its time in the run. */
export function uplinkPresences(record: RunRecord): UplinkPresence[] {
  return record.viewers.map((viewer) => ({
    uplinkBitsPerS: viewer.p2p && record.engine !== 'http' && !viewer.nonUploading ? viewer.uplinkBitsPerS ?? Infinity : 0,
    presentS: (viewer.endedAtMs - viewer.joinedAtMs) / 1000,
  }));
}

/** The uplink's classes of a shaped run, with each viewer's join and uplink cap. */
function uplinkClassesOf(record: RunRecord): UplinkClassesReport | null {
  if (!record.uplinkClasses) return null;
  const viewers = new Map(
    record.viewers.map((viewer) => [
      viewer.id,
      { joinedS: (viewer.joinedAtMs - record.startedAtMs) / 1000, capBitsPerS: Number.isFinite(viewer.uplinkBitsPerS ?? Infinity) ? viewer.uplinkBitsPerS! : null },
    ]),
  );
  return summarizeUplinkClasses(record.uplinkClasses, viewers);
}

/** One viewer's line of the report, times in seconds from the run's start. */
function peerReport(viewer: RunRecord['viewers'][number], runStart: number): PeerReport {
  const snapshot = viewer.final;
  const untilMs = snapshot?.atMs ?? viewer.endedAtMs;
  const stalls = summarizeStalls(snapshot?.stalls ?? [], untilMs);
  const latency = percentile(snapshot?.latencySamples ?? [], 50);
  const bitrate = mean(snapshot?.bitrateSamples ?? []);
  return {
    id: viewer.id,
    p2p: viewer.p2p,
    browser: viewer.browser ?? 'chromium',
    nonUploading: viewer.nonUploading ?? false,
    joinedAtS: round((viewer.joinedAtMs - runStart) / 1000, 1)!,
    leftAtS: viewer.leftAtMs === null ? null : round((viewer.leftAtMs - runStart) / 1000, 1),
    startupMs: snapshot ? startupMs(snapshot) : null,
    stalls: { count: stalls.count, seconds: round(stalls.seconds, 2)! },
    stallTimeline: (snapshot?.stalls ?? []).map((stall) => ({
      startS: round((stall.startMs - runStart) / 1000, 2)!,
      endS: round(((stall.endMs ?? untilMs) - runStart) / 1000, 2)!,
    })),
    httpBytes: snapshot?.httpBytes ?? 0,
    p2pBytes: snapshot?.p2pBytes ?? 0,
    uploadedBytes: snapshot?.uploadedBytes ?? 0,
    deliveredBytes: snapshot?.deliveredBytes ?? 0,
    playedBytes: snapshot?.playedBytes ?? 0,
    wasteBytes: snapshot ? viewerWasteBytes(snapshot) : 0,
    playedSeconds: round(snapshot?.playedSeconds ?? 0, 1)!,
    latencyS: latency,
    avgBitrateKbps: bitrate === null ? null : Math.round(bitrate / 1000),
    peersConnected: snapshot?.peers ?? 0,
    fatalError: snapshot ? snapshot.fatalError : 'no snapshot: the page never answered',
    errors: snapshot?.errors.length ?? 0,
    errorLog: (snapshot?.errors ?? []).map((error) => ({ atS: round((error.atMs - runStart) / 1000, 1)!, details: error.details, fatal: error.fatal })),
  };
}

/** The viewers' quality of experience, together: stalls, start-up, latency, bitrate, minutes watched. */
function experienceOf(perPeer: PeerReport[]): Pick<RunReport, 'stalls' | 'startupMs' | 'latencyS' | 'bitrateKbps' | 'viewerMinutes'> {
  const sum = (pick: (peer: PeerReport) => number) => perPeer.reduce((total, peer) => total + pick(peer), 0);
  const viewerMinutes = sum((peer) => peer.playedSeconds) / 60;
  const stallSeconds = sum((peer) => peer.stalls.seconds);
  const startups = perPeer.map((peer) => peer.startupMs).filter((value): value is number => value !== null);
  const latencies = perPeer.map((peer) => peer.latencyS).filter((value): value is number => value !== null);
  const bitrates = perPeer.map((peer) => peer.avgBitrateKbps).filter((value): value is number => value !== null);
  return {
    stalls: {
      count: sum((peer) => peer.stalls.count),
      seconds: round(stallSeconds, 2)!,
      secondsPerViewerMinute: round(viewerMinutes > 0 ? stallSeconds / viewerMinutes : 0, 3)!,
    },
    startupMs: { p50: percentile(startups, 50), max: startups.length ? Math.max(...startups) : null, notStarted: perPeer.length - startups.length },
    latencyS: { p50: percentile(latencies, 50) },
    bitrateKbps: { avg: bitrates.length ? Math.round(mean(bitrates)!) : null },
    viewerMinutes: round(viewerMinutes, 2)!,
  };
}

/** What the report says about how the run was set up: integrity checks, the rival engine's settings. */
function setupNotes(record: RunRecord): string[] {
  const notes: string[] = [];
  if (record.integrity === true) {
    notes.push("Segments from peers were verified against the origin's SHA-256 manifest before playback (PeerTube's format; p2p-media-loader through validateP2PSegment, as PeerTube does).");
  } else if (record.integrity === false) {
    notes.push('Segments from peers were NOT verified (--no-integrity, or an external stream without a manifest).');
  }
  if (record.engine === 'p2p-media-loader') notes.push('p2p-media-loader 2.3.1 with its default settings.');
  if (record.engine === 'p2p-media-loader-peertube') {
    notes.push("p2p-media-loader 2.3.1 with PeerTube's live settings: highDemandTimeWindow 4 s (liveSyncDurationCount is the scenario's, as for every engine).");
  }
  if (record.engine.startsWith('p2p-media-loader')) {
    notes.push("p2p-media-loader 2.3.1 runs with hls.js's transmuxing worker off (enableWorker: false), as its users' bundles do: with the worker on it hands peers detached, empty segment buffers.");
  }
  return notes;
}

export function summarizeRun(record: RunRecord): RunReport {
  const notes: string[] = [];
  const perPeer = record.viewers.map((viewer) => peerReport(viewer, record.startedAtMs));

  const sum = (pick: (peer: PeerReport) => number) => perPeer.reduce((total, peer) => total + pick(peer), 0);
  const clientHttpBytes = sum((peer) => peer.httpBytes);
  const clientP2pBytes = sum((peer) => peer.p2pBytes);
  const deliveredBytes = sum((peer) => peer.deliveredBytes);
  const playedBytes = sum((peer) => peer.playedBytes);
  const wasteBytes = sum((peer) => peer.wasteBytes);
  const p2pViewers = record.viewers.filter((viewer) => viewer.p2p && record.engine !== 'http').length;
  // Concurrent viewers: churn replaces viewers, it does not add to N.
  const ideal = idealOffload(record.peers, Math.round((p2pViewers * record.peers) / Math.max(1, record.viewers.length)));
  const capacity = capacityBound(ideal, uplinkPresences(record), deliveredBytes);

  const originBytes = record.origin?.segmentBytes ?? null;
  const distinctDelivered = distinctDeliveredBytes(record.viewers.map((viewer) => viewer.final?.segments));
  if (record.origin && distinctDelivered === null) {
    notes.push('The viewers did not list the segments they were handed: origin fetches per segment divides by the distinct segments the origin served instead.');
  }
  const measuredOffload = offload(originBytes ?? clientHttpBytes, deliveredBytes);
  const agreement = originBytes === null ? null : countersAgreement(originBytes, clientHttpBytes);
  if (!record.origin) {
    notes.push('External stream: the origin count is unavailable; offload is estimated from the viewers\' own HTTP counters, and origin fetches per segment cannot be computed.');
  } else if (agreement && !agreement.agree) {
    notes.push(`The viewers' HTTP counters (${clientHttpBytes} B) disagree with the origin's count (${originBytes} B) by ${(agreement.relativeDifference * 100).toFixed(1)}% (> 2%).`);
  }
  const experience = experienceOf(perPeer);
  const { notStarted } = experience.startupMs;
  if (notStarted > 0) notes.push(`${notStarted} viewer(s) never started playing.`);
  const fatal = perPeer.filter((peer) => peer.fatalError);
  if (fatal.length > 0) notes.push(`Fatal player errors: ${fatal.map((peer) => `${peer.id}: ${peer.fatalError}`).join('; ')}.`);
  const workerFlags = record.viewers.map((viewer) => viewer.final?.workerEnabled).filter((flag) => typeof flag === 'boolean');
  const hlsWorker = workerFlags.length > 0 ? workerFlags.every(Boolean) : null;
  notes.push(...setupNotes(record));
  if (record.uplinkClassesFailure) notes.push(`${record.uplinkClassesFailure}.`);
  const verification = sumVerification(record.viewers.map((viewer) => viewer.final));
  if (verification && verification.mismatched > 0) {
    notes.push(`${verification.mismatched} segment(s) handed to the player did NOT match the origin's SHA-256 manifest: ${verification.mismatchedSegments.join(', ')}.`);
  }

  return {
    scenario: record.scenario.name,
    engine: record.engine,
    peers: record.peers,
    durationS: record.durationS,
    streamUrl: record.streamUrl,
    trackerUrl: record.trackerUrl,
    originCounted: record.origin !== null,
    offload: round(measuredOffload),
    ideal: round(ideal)!,
    efficiency: round(efficiency(measuredOffload, ideal)),
    capacityBound: round(capacity.bound)!,
    uplinkBound: round(capacity.uplink),
    uplinkCapacityBytes: capacity.uplinkBytes === null ? null : Math.round(capacity.uplinkBytes),
    shareOfBound: round(shareOfBound(measuredOffload, capacity.bound)),
    originFetchesPerSegment: record.origin ? round(originFetchesPerSegment(record.origin.segmentBytes, distinctDelivered ?? record.origin.distinctSegmentBytes), 3) : null,
    originSaving: null,
    wasteBytes,
    wasteFraction: playedBytes > 0 ? round(wasteBytes / playedBytes) : null,
    originSegmentBytes: originBytes,
    originSegmentRequests: record.origin?.segmentRequests ?? null,
    distinctSegmentBytes: record.origin?.distinctSegmentBytes ?? null,
    distinctDeliveredSegmentBytes: distinctDelivered,
    deliveredBytes,
    playedBytes,
    clientHttpBytes,
    clientP2pBytes,
    clientUploadedBytes: sum((peer) => peer.uploadedBytes),
    countersAgree: agreement?.agree ?? null,
    countersDifference: agreement ? round(agreement.relativeDifference) : null,
    ...experience,
    offloadOverTime: offloadOverTime(record.timeline).map((point) => ({ tS: point.tS, offload: round(point.offload), cumulative: round(point.cumulative) })),
    hlsWorker,
    loadAverage: record.loadAverage,
    trackerStats: record.trackerStats,
    network: record.network ? summarizeNetwork(record.network) : null,
    integrity: record.integrity ?? null,
    connections: sumConnections(record.viewers.map((viewer) => viewer.final?.connections)),
    browsers: summarizeBrowsers(perPeer, record.viewers.map((viewer) => viewer.final)),
    verification,
    faults: record.faults ? summarizeFaults(record.faults, record.viewers.map((viewer, index) => ({ id: viewer.id, final: viewer.final, stallTimeline: perPeer[index]!.stallTimeline }))) : null,
    memory: summarizeMemory(record.memory ?? []),
    uplinkAccount: record.uplinkAccount ?? null,
    uplinkClasses: uplinkClassesOf(record),
    notes,
    perPeer,
  };
}

/** Bytes of the union of the viewers' segment lists; null when none listed them. */
function distinctDeliveredBytes(lists: Array<Record<string, number> | undefined>): number | null {
  const union = new Map<string, number>();
  let listed = false;
  for (const list of lists) {
    if (!list) continue;
    listed = true;
    for (const [key, bytes] of Object.entries(list)) union.set(key, bytes);
  }
  return listed ? [...union.values()].reduce((sum, bytes) => sum + bytes, 0) : null;
}

function sumConnections(counts: Array<ConnectionCounts | undefined>): ConnectionCounts | null {
  const reported = counts.filter((count): count is ConnectionCounts => count !== undefined);
  if (reported.length === 0) return null;
  const total: ConnectionCounts = { host: 0, srflx: 0, relay: 0, unknown: 0, failed: 0, unconnected: 0 };
  for (const count of reported) for (const key of Object.keys(total) as Array<keyof ConnectionCounts>) total[key] += count[key] ?? 0;
  return total;
}

/**
 * report.json: the top-level fields are those of the first P2P engine run (or the only run),
 * with origin saving against the baseline; every run is under `runs`.
 */
export interface ReportContext {
  machine: SwarmReport['machine'];
  command: string;
  shoalCommit?: string | null;
  partial?: SwarmReport['partial'];
  thresholds?: ThresholdResult[];
}

export function buildSwarmReport(runs: RunReport[], context: ReportContext): SwarmReport {
  const baseline = runs.find((run) => run.engine === 'http') ?? null;
  for (const run of runs) {
    if (baseline && run !== baseline && run.originSegmentBytes !== null && baseline.originSegmentBytes !== null) {
      // Per viewer-minute played, so a run whose viewers stalled (and so fetched less) gets no credit for it.
      run.originSaving = round(
        originSaving(run.originSegmentBytes / Math.max(run.viewerMinutes, 1e-9), baseline.originSegmentBytes / Math.max(baseline.viewerMinutes, 1e-9)),
      );
      const [bitrate, baselineBitrate] = [run.bitrateKbps.avg, baseline.bitrateKbps.avg];
      if (bitrate !== null && baselineBitrate !== null && Math.abs(bitrate - baselineBitrate) > 0.1 * baselineBitrate) {
        run.notes.push(
          `Its viewers played ${bitrate} kbit/s on average against the baseline's ${baselineBitrate} kbit/s (ABR chose differently): ` +
            'part of the origin saving comes from the bitrate, not from P2P. Pin a rendition with --level for a like-for-like comparison.',
        );
      }
    } else if (run === baseline) {
      run.originSaving = 0;
    }
  }
  const validity = baseline
    ? baselineVerdict({
        viewers: baseline.perPeer.length,
        started: baseline.perPeer.length - baseline.startupMs.notStarted,
        stallCount: baseline.stalls.count,
        stallSeconds: baseline.stalls.seconds,
        viewerMinutes: baseline.viewerMinutes,
      })
    : null;
  const primary = runs.find((run) => run.engine !== 'http') ?? runs[0]!;
  const versusBaseline = runs
    .filter((run) => run !== baseline)
    .map((run) => ({
      engine: run.engine,
      originSaving: run.originSaving,
      addedStalls: baseline ? run.stalls.count - baseline.stalls.count : null,
      startupDeltaMs: baseline && run.startupMs.p50 !== null && baseline.startupMs.p50 !== null ? run.startupMs.p50 - baseline.startupMs.p50 : null,
    }));
  return {
    ...primary,
    schemaVersion: REPORT_SCHEMA_VERSION,
    shoalCommit: context.shoalCommit ?? null,
    partial: context.partial ?? null,
    thresholds: context.thresholds ?? [],
    runs,
    baseline,
    validity,
    versusBaseline,
    createdAt: new Date().toISOString(),
    machine: context.machine,
    command: context.command,
  };
}
