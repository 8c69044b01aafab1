// The compact terminal view of a swarm report: one row per engine run.
import { renderBrowserLines } from './browser-report.js';
import { renderNetworkLines } from './link-report.js';
import type { RunReport, SwarmReport } from './report-schema.js';
import { renderFaultLines } from './report-faults.js';
import { describeUplinkClasses } from './uplink-classes-view.js';

const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(0)}%`);
const percent1 = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)}%`);
const fixed = (value: number | null, digits: number) => (value === null ? '–' : value.toFixed(digits));
const megabytes = (bytes: number | null) => (bytes === null ? '–' : (bytes / 1e6).toFixed(1));

const columns: Array<[string, (run: RunReport) => string]> = [
  ['engine', (run) => run.engine],
  ['offload', (run) => percent(run.offload)],
  ['ideal', (run) => percent(run.ideal)],
  ['effic.', (run) => percent(run.efficiency)],
  ['bound', (run) => percent(run.capacityBound)],
  ['of bound', (run) => percent(run.shareOfBound)],
  ['fetch/seg', (run) => fixed(run.originFetchesPerSegment, 2)],
  ['saving', (run) => percent(run.originSaving)],
  ['origin MB', (run) => megabytes(run.originSegmentBytes ?? run.clientHttpBytes)],
  ['p2p MB', (run) => megabytes(run.clientP2pBytes)],
  ['waste', (run) => percent(run.wasteFraction)],
  ['agree', (run) => (run.countersAgree === null ? 'n/a' : `${run.countersAgree ? 'yes' : 'NO'} ${percent(run.countersDifference)}`)],
  ['stalls', (run) => `${run.stalls.count}/${run.stalls.seconds.toFixed(1)}s`],
  ['startup p50/max', (run) => `${fixed(run.startupMs.p50 === null ? null : run.startupMs.p50 / 1000, 1)}/${fixed(run.startupMs.max === null ? null : run.startupMs.max / 1000, 1)}s`],
  ['latency', (run) => (run.latencyS.p50 === null ? '–' : `${run.latencyS.p50.toFixed(1)}s`)],
  ['kbit/s', (run) => (run.bitrateKbps.avg === null ? '–' : String(run.bitrateKbps.avg))],
];

/** The capacity bound with its parts, in a sentence. */
function describeCapacityBound(run: RunReport): string {
  const share = `offload ${percent1(run.offload)} is ${percent1(run.shareOfBound)} of it`;
  if (run.uplinkBound === null) return `capacity bound ${percent1(run.capacityBound)} = the ideal (no uplink limit); ${share}`;
  return (
    `capacity bound ${percent1(run.capacityBound)} = min(ideal ${percent1(run.ideal)}, uplinks ${percent1(run.uplinkBound)}: ` +
    `${megabytes(run.uplinkCapacityBytes)} MB they could carry while present / ${megabytes(run.deliveredBytes)} MB delivered); ${share}`
  );
}

export function renderReportTable(report: SwarmReport): string {
  const rows = [columns.map(([title]) => title), ...report.runs.map((run) => columns.map(([, cell]) => cell(run)))];
  const widths = columns.map((_, index) => Math.max(...rows.map((row) => row[index]!.length)));
  const line = (row: string[]) => row.map((cell, index) => (index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join('  ');
  const lines = [
    `${report.scenario} · ${report.peers} viewers · ${report.durationS} s${report.originCounted ? '' : ' · external stream: origin count unavailable'} · Shoal ${report.shoalCommit?.slice(0, 12) ?? 'commit unknown'}${report.partial ? ' · PARTIAL' : ''}`,
    line(rows[0]!),
    ...rows.slice(1).map(line),
  ];
  for (const run of report.runs) if (run.engine !== 'http') lines.push(`${run.engine}: ${describeCapacityBound(run)}`);
  if (report.validity) lines.push(`${report.validity.valid ? 'valid' : 'NOT VALID'}: ${report.validity.reason}`);
  else lines.push('no HTTP-only baseline in this run: QoE figures have nothing to compare with');
  for (const run of report.runs) for (const note of run.notes) lines.push(`note (${run.engine}): ${note}`);
  for (const run of report.runs) if (run.network) lines.push(`${run.engine}: ${renderNetworkLines(run.network).join('\n')}`);
  for (const run of report.runs) if (run.uplinkClasses) lines.push(...describeUplinkClasses(run.engine, run.uplinkClasses));
  for (const run of report.runs) {
    const nonUploading = run.perPeer.filter((peer) => peer.nonUploading);
    if (nonUploading.length === 0 || run.engine === 'http') continue;
    const uploaded = (peers: typeof nonUploading) => megabytes(peers.reduce((sum, peer) => sum + peer.uploadedBytes, 0));
    const others = run.perPeer.filter((peer) => !peer.nonUploading);
    lines.push(`${run.engine}: non-uploading viewers ${nonUploading.map((peer) => peer.id).join(', ')} uploaded ${uploaded(nonUploading)} MB to peers (engine's count); the other ${others.length} ${uploaded(others)} MB`);
  }
  for (const run of report.runs) {
    const c = run.connections;
    if (c && run.engine !== 'http') {
      lines.push(`${run.engine}: peer connections (counted at both ends): direct ${c.host}, via STUN/NAT ${c.srflx}, via TURN ${c.relay}, failed ${c.failed}, never connected ${c.unconnected}${c.unknown ? `, unknown ${c.unknown}` : ''}`);
    }
  }
  // Only a run that mixes browsers (--browsers) says which did what.
  for (const run of report.runs) if (run.browsers.byBrowser.length > 1) lines.push(...renderBrowserLines(run.engine, run.browsers));
  for (const run of report.runs) {
    const v = run.verification;
    if (v) lines.push(`${run.engine}: segments handed to the player checked against the SHA-256 manifest: ${v.verified} match, ${v.mismatched} differ, ${v.unlisted} not listed`);
    if (run.faults) lines.push(...renderFaultLines(run.engine, run.faults));
    const memory = run.memory?.viewers.filter((viewer) => viewer.heapGrowthBytesPerHour !== null) ?? [];
    if (memory.length) {
      const mb = (bytes: number | null) => (bytes === null ? '–' : (bytes / 1e6).toFixed(1));
      lines.push(`${run.engine}: heap growth per hour once settled (MB/h): ${memory.map((viewer) => `${viewer.id} ${mb(viewer.heapGrowthBytesPerHour)} from ${Math.round(viewer.settledFromS)} s (store ${mb(viewer.storeGrowthBytesPerHour)}, max ${mb(viewer.storeMaxBytes)} MB; heap max ${mb(viewer.heapMaxBytes)} MB)`).join(', ')}`);
    }
  }
  return lines.join('\n');
}
