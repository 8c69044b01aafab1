// The simulator's report: the browser swarm's report.json shape (@shoal/e2e's swarm/report.ts), computed by
// the swarm's own metric functions from what the simulated origin and viewers counted, plus a
// `simulator` section with what only a simulation knows (network profile, seed, event count,
// the channel byte ledger, the P2P viewers' own offload).
import { cpus } from 'node:os';
import { networkProfile, viewerLink } from '@shoal/e2e/network-profiles';
import { capacityBound, idealOffload, offload, shareOfBound } from '@shoal/e2e/swarm/metrics';
import { buildSwarmReport, summarizeRun, uplinkPresences, type RunRecord } from '@shoal/e2e/swarm/report';
import { uplinkAccount, type UplinkAccount } from '@shoal/e2e/swarm/uplink-account';
import type { RunReport, SwarmReport } from '@shoal/e2e/swarm/report-schema';
import type { EngineName, ViewerSnapshot } from '@shoal/e2e/swarm/viewer-snapshot';
import type { SimulationResult } from './simulation.js';

export interface SimulatorSection {
  network: string;
  seed: number;
  bitrateKbps: number;
  segmentDurationS: number;
  wallMs: number;
  events: number;
  /** Data-payload bytes over all channels: sent = received + cancelled + dropped. */
  ledger: { sent: number; received: number; cancelled: number; dropped: number; messages: number };
  tracker: { announces: number; offersForwarded: number };
  /**
   * What the viewers' uplinks carried besides payload and control, kbit/s per viewer present, by
   * the wire-overhead model (kit/wire-overhead.ts); null when it was off (--no-wire-overhead).
   */
  wireOverhead: { dataChannelKbitPerS: number; tcpAckKbitPerS: number } | null;
  /** The viewers with P2P on, alone: their HTTP bytes against what they were delivered, and their own capacity bound. */
  p2pGroup: { viewers: number; offload: number | null; ideal: number; efficiency: number | null; capacityBound: number; shareOfBound: number | null };
}

export interface SimRunReport extends RunReport {
  simulator: SimulatorSection;
}

export interface SimReport extends SwarmReport {
  simulator: SimulatorSection;
}

const round = (value: number | null, digits = 4) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

export function runRecordOf(result: SimulationResult): RunRecord {
  const { config, origin } = result;
  // The swarm report names each run by what its viewers ran.
  const engine: EngineName = config.httpOnly ? 'http' : 'shoal';
  const endMs = config.durationS * 1000;
  const profile = networkProfile(config.network);
  const distinctSegmentBytes = [...origin.counters.bytesBySequence.keys()].reduce((sum, sequence) => sum + origin.segmentSize(sequence), 0);
  const viewers = result.viewers.map((viewer, index) => {
    const stats = result.viewerStats[index]!;
    const atMs = viewer.leftMs ?? endMs;
    const snapshot: ViewerSnapshot = {
      engine,
      p2p: viewer.p2p,
      atMs,
      navigationStartMs: viewer.joinMs,
      firstFrameMs: viewer.firstFrameMs,
      stalls: viewer.stalls.map((stall) => ({ startMs: stall.startMs, endMs: stall.endMs, atS: 0 })),
      errors: [],
      fatalError: null,
      httpBytes: stats.httpBytes,
      p2pBytes: stats.p2pBytes,
      uploadedBytes: stats.uploadBytes,
      peers: stats.peers,
      deliveredBytes: viewer.deliveredBytes,
      playedBytes: viewer.playedBytes,
      playedSeconds: viewer.playedSeconds,
      currentTime: 0,
      latencySamples: viewer.latencySamples,
      bitrateSamples: [config.bitrateKbps * 1000],
      ended: false,
      workerEnabled: null,
      segments: Object.fromEntries([...viewer.segments].map(([sequence, bytes]) => [String(sequence), bytes])),
    };
    // The profile's link, as the simulation drew it (a test's linkOverride is not seen here).
    const link = viewerLink(profile, viewer.index, config.bitrateKbps * 1000);
    return {
      id: `sim-${viewer.index}`,
      p2p: viewer.p2p,
      nonUploading: !link.uploads,
      uplinkBitsPerS: link.upBitsPerS,
      joinedAtMs: viewer.joinMs,
      leftAtMs: viewer.leftMs,
      endedAtMs: atMs,
      final: snapshot,
    };
  });
  let originCumulative = 0;
  let deliveredCumulative = 0;
  const buckets = Math.ceil(endMs / (config.bucketS * 1000));
  const timeline = Array.from({ length: buckets }, (_, bucket) => {
    originCumulative += origin.bytesByBucket[bucket] ?? 0;
    deliveredCumulative += result.deliveredByBucket[bucket] ?? 0;
    return { tS: Math.min((bucket + 1) * config.bucketS, config.durationS), originSegmentBytes: originCumulative, deliveredBytes: deliveredCumulative };
  });
  return {
    scenario: result.scenario.swarm,
    engine,
    peers: config.peers,
    durationS: config.durationS,
    streamUrl: `sim://origin/${result.scenario.swarm.name}/index.m3u8`,
    trackerUrl: config.httpOnly ? null : 'sim://tracker',
    startedAtMs: 0,
    origin: { segmentBytes: origin.counters.segmentBytes, segmentRequests: origin.counters.segmentRequests, distinctSegmentBytes },
    viewers,
    timeline,
    loadAverage: { before: 0, peak: 0 },
    trackerStats: config.httpOnly ? null : { ...result.tracker },
    uplinkAccount: simUplinkAccount(result, viewers),
  };
}

/** The uplinks after the joins: every viewer present then, its link as drawn, its engine's counters from the joins' end. */
function simUplinkAccount(result: SimulationResult, viewers: RunRecord['viewers']): UplinkAccount {
  const { config, uplink } = result;
  const endMs = config.durationS * 1000;
  const present = viewers.flatMap((viewer, index) =>
    (viewer.leftAtMs ?? endMs) > uplink.fromMs
      ? [{ uploads: viewer.p2p && !viewer.nonUploading, capBytesPerS: result.links[index]!.upBytesPerS, from: uplink.baseline[index], to: result.viewerStats[index]! }]
      : [],
  );
  return uplinkAccount({
    viewers: present,
    fromS: uplink.fromMs / 1000,
    periodS: Math.max(0, endMs - uplink.fromMs) / 1000,
    streamBytesPerS: (config.bitrateKbps * 1000) / 8,
    hopCounts: config.httpOnly ? undefined : uplink.hopCounts,
  });
}

/** What only a simulation knows; `record` is the run's record (runRecordOf), whose viewers' uplinks the P2P group's bound reads. */
/** Bytes per viewer, `pick(index)` for each, as kbit/s per viewer present (time-weighted over joins and leaves). */
export function perViewerKbitPerS(result: SimulationResult, pick: (index: number) => number): number {
  let presentS = 0;
  let bytes = 0;
  result.viewers.forEach((viewer, index) => {
    presentS += ((viewer.leftMs ?? result.config.durationS * 1000) - viewer.joinMs) / 1000;
    bytes += pick(index);
  });
  return (bytes * 8) / Math.max(1, presentS) / 1000;
}

export function simulatorSection(result: SimulationResult, record: RunRecord): SimulatorSection {
  const { config } = result;
  let http = 0;
  let delivered = 0;
  let viewers = 0;
  result.viewers.forEach((viewer, index) => {
    if (!viewer.p2p) return;
    viewers++;
    http += result.viewerStats[index]!.httpBytes;
    delivered += viewer.deliveredBytes;
  });
  // Concurrent P2P viewers (churn replaces, it does not add).
  const concurrent = Math.round((viewers * config.peers) / Math.max(1, result.viewers.length));
  const groupOffload = offload(http, delivered);
  const ideal = idealOffload(concurrent);
  // Viewers without P2P add no uplink, so every viewer's presence gives the P2P group's own bound.
  const bound = capacityBound(ideal, uplinkPresences(record), delivered).bound;
  const { sent, received, cancelled, dropped, messages } = result.ledger;
  const kbitPerS = (pick: (index: number) => number) => Math.round(perViewerKbitPerS(result, pick) * 10) / 10;
  return {
    network: config.network,
    seed: config.seed,
    wireOverhead: config.wireOverhead
      ? { dataChannelKbitPerS: kbitPerS((i) => result.wireOverhead[i]!.dataChannelBytes), tcpAckKbitPerS: kbitPerS((i) => result.wireOverhead[i]!.tcpAckBytes) }
      : null,
    bitrateKbps: config.bitrateKbps,
    segmentDurationS: config.segmentDurationS,
    wallMs: Math.round(result.wallMs),
    events: result.events,
    ledger: { sent, received, cancelled, dropped, messages },
    tracker: result.tracker,
    p2pGroup: {
      viewers: concurrent,
      offload: round(groupOffload),
      ideal: round(ideal)!,
      efficiency: round(groupOffload !== null && ideal > 0 ? groupOffload / ideal : null),
      capacityBound: round(bound)!,
      shareOfBound: round(shareOfBound(groupOffload, bound)),
    },
  };
}

export function simRunReport(result: SimulationResult): SimRunReport {
  const record = runRecordOf(result);
  return { ...summarizeRun(record), simulator: simulatorSection(result, record) };
}

/** report.json for one or more runs of the same scenario (the HTTP-only baseline among them, if it ran). */
export function buildSimReport(runs: SimRunReport[], command: string): SimReport {
  const report = buildSwarmReport(runs, { machine: { cpus: cpus().length, platform: process.platform, node: process.version }, command });
  const primary = runs.find((run) => run.engine !== 'http') ?? runs[0]!;
  return { ...report, simulator: primary.simulator };
}
