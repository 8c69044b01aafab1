// report.html: one self-contained page (inline CSS and SVG, no scripts or external files) that
// shows a swarm comparison at a glance.
import type { DirectionReport, NetworkReport } from './link-report.js';
import type { PeerReport, RunReport, SwarmReport } from './report-schema.js';
import { uplinkAccountHtml } from './uplink-account-html.js';
import { uplinkClassesHtml } from './uplink-classes-view.js';

const engineColors: Record<string, string> = { shoal: '#1f77b4', 'p2p-media-loader': '#9467bd', 'p2p-media-loader-peertube': '#e377c2', http: '#7f7f7f' };
const colorOf = (engine: string) => engineColors[engine] ?? '#2ca02c';
const httpColor = '#f28e2b';
const p2pColor = '#4e79a7';
const uploadColor = '#59a14f';
const stallColor = '#e15759';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)}%`);
const fixed = (value: number | null, digits: number, unit = '') => (value === null ? '–' : `${value.toFixed(digits)}${unit}`);
const megabytes = (bytes: number | null) => (bytes === null ? '–' : `${(bytes / 1e6).toFixed(1)} MB`);
/** A run with viewers in more than one browser (--browsers): rows and labels say which. */
const mixesBrowsers = (run: RunReport) => run.browsers.byBrowser.length > 1;
const viewerLabel = (run: RunReport, peer: PeerReport) => (mixesBrowsers(run) ? `${peer.id} ${peer.browser}` : peer.id);

/** Round steps for a time axis, seconds: a reader adds 15 to 30 at a glance, not 7 to 13. */
const timeSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

/** Ticks for a time axis from 0 to maxS: multiples of the smallest round step that needs at most maxTicks + 1 of them. */
export function timeTicks(maxS: number, maxTicks: number): number[] {
  const step = timeSteps.find((candidate) => maxS / candidate <= maxTicks) ?? Math.ceil(maxS / maxTicks / 3600) * 3600;
  return Array.from({ length: Math.floor(maxS / step + 1e-9) + 1 }, (_, index) => index * step);
}
const timeLabel = (tS: number) => (tS >= 120 && tS % 60 === 0 ? `${tS / 60} min` : `${tS} s`);

function summaryTable(report: SwarmReport): string {
  const rows: Array<[string, (run: RunReport) => string, string]> = [
    ['offload', (run) => percent(run.offload), '1 − origin bytes / bytes delivered to players'],
    ['ideal (1 − 1/N)', (run) => percent(run.ideal), 'each segment from the origin once'],
    ['efficiency', (run) => percent(run.efficiency), 'offload / ideal'],
    [
      'capacity bound',
      (run) => (run.uplinkBound === null ? `${percent(run.capacityBound)} (no uplink limit)` : `${percent(run.capacityBound)} (uplinks ${percent(run.uplinkBound)})`),
      'min(ideal, what the uplinks could carry while their viewers were present / bytes delivered)',
    ],
    ['share of the bound', (run) => percent(run.shareOfBound), 'offload / capacity bound'],
    ['origin fetches per segment', (run) => fixed(run.originFetchesPerSegment, 2), 'origin bytes / bytes of the distinct segments handed to at least one player; ideal 1.00'],
    ['origin saving vs HTTP-only', (run) => percent(run.originSaving), 'origin bytes per viewer-minute played, against the baseline'],
    ['origin segment bytes', (run) => megabytes(run.originSegmentBytes), 'counted by the origin'],
    ['viewers\' HTTP / P2P bytes', (run) => `${megabytes(run.clientHttpBytes)} / ${megabytes(run.clientP2pBytes)}`, 'the viewers\' own counters'],
    ['counters agree with origin (±2%)', (run) => (run.countersAgree === null ? 'n/a' : `${run.countersAgree ? 'yes' : 'NO'} (${percent(run.countersDifference)})`), ''],
    ['waste (downloaded, never played)', (run) => `${megabytes(run.wasteBytes)} (${percent(run.wasteFraction)} of played)`, 'includes the buffer ahead at the end'],
    ['stalls', (run) => `${run.stalls.count} · ${run.stalls.seconds.toFixed(1)} s · ${run.stalls.secondsPerViewerMinute.toFixed(2)} s/viewer-min`, 'after the first frame'],
    ['startup p50 / max', (run) => `${fixed(run.startupMs.p50, 0, ' ms')} / ${fixed(run.startupMs.max, 0, ' ms')}`, 'navigation to first frame'],
    ['live latency p50', (run) => fixed(run.latencyS.p50, 1, ' s'), 'hls.latency'],
    ['average bitrate', (run) => fixed(run.bitrateKbps.avg, 0, ' kbit/s'), ''],
    ['hls.js worker', (run) => (run.hlsWorker === null ? '–' : run.hlsWorker ? 'on' : 'off'), ''],
    ['SHA-256 integrity manifest', (run) => (run.integrity === null ? '–' : run.integrity ? 'on' : 'OFF'), 'segments from peers verified before playback'],
    ['peer connections: direct / STUN / TURN / failed / never', (run) => (run.connections ? `${run.connections.host} / ${run.connections.srflx} / ${run.connections.relay} / ${run.connections.failed} / ${run.connections.unconnected}` : '–'), 'selected candidate pair; counted at both ends'],
  ];
  if (report.runs.some(mixesBrowsers)) {
    rows.push(
      ['stalls by browser', (run) => run.browsers.byBrowser.map((entry) => `${entry.browser} ×${entry.viewers}: ${entry.stalls.count} · ${entry.stalls.seconds.toFixed(1)} s`).join('; '), 'after the first frame'],
      ['P2P bytes by browser: from / to peers', (run) => run.browsers.byBrowser.map((entry) => `${entry.browser}: ${megabytes(entry.p2pBytes)} / ${megabytes(entry.uploadedBytes)}`).join('; '), 'the viewers\' own counters'],
      ['connections between browsers', (run) => run.browsers.pairs.map((entry) => `${entry.pair} ${entry.connected}${entry.failed ? ` (${entry.failed} failed)` : ''}`).join('; ') || '–', 'connected at some point; counted at both ends'],
    );
  }
  const head = report.runs.map((run) => `<th style="color:${colorOf(run.engine)}">${escapeHtml(run.engine)}</th>`).join('');
  const body = rows
    .map(([label, cell, hint]) => `<tr><th>${label}${hint ? `<small>${hint}</small>` : ''}</th>${report.runs.map((run) => `<td>${escapeHtml(cell(run))}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table class="summary"><thead><tr><th></th>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** Cumulative offload over time per engine, with the ideal as a dashed line (and the capacity bound, dotted, when lower). */
function offloadChart(report: SwarmReport): string {
  const width = 720;
  const height = 260;
  const pad = { left: 48, right: 190, top: 16, bottom: 36 };
  const maxT = Math.max(1, ...report.runs.flatMap((run) => run.offloadOverTime.map((point) => point.tS)));
  const x = (tS: number) => pad.left + (tS / maxT) * (width - pad.left - pad.right);
  const y = (value: number) => pad.top + (1 - Math.max(0, Math.min(1, value))) * (height - pad.top - pad.bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map((value) => `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(value)}" y2="${y(value)}" class="grid"/><text x="${pad.left - 6}" y="${y(value) + 4}" text-anchor="end">${value * 100}%</text>`)
    .join('');
  const xTicks = timeTicks(maxT, 6)
    .map((tS) => `<text x="${x(tS)}" y="${height - pad.bottom + 16}" text-anchor="middle">${timeLabel(tS)}</text>`)
    .join('');
  const primary = report.runs.find((run) => run.engine !== 'http') ?? report.runs[0];
  const ideal = primary?.ideal ?? 0;
  const bound = primary?.capacityBound ?? ideal;
  const lines = report.runs
    .map((run, index) => {
      const points = run.offloadOverTime.filter((point) => point.cumulative !== null).map((point) => `${x(point.tS).toFixed(1)},${y(point.cumulative!).toFixed(1)}`);
      const legendY = pad.top + 14 + index * 18;
      return (
        `<polyline fill="none" stroke="${colorOf(run.engine)}" stroke-width="2.5" points="${points.join(' ')}"/>` +
        `<rect x="${width - pad.right + 12}" y="${legendY - 9}" width="12" height="4" fill="${colorOf(run.engine)}"/><text x="${width - pad.right + 30}" y="${legendY - 3}">${escapeHtml(run.engine)} ${percent(run.offload)}</text>`
      );
    })
    .join('');
  const idealY = pad.top + 14 + report.runs.length * 18;
  const boundY = idealY + 18;
  const boundLine =
    bound < ideal
      ? `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(bound)}" y2="${y(bound)}" stroke="#333" stroke-dasharray="1 3"/>` +
        `<line x1="${width - pad.right + 12}" x2="${width - pad.right + 24}" y1="${boundY - 7}" y2="${boundY - 7}" stroke="#333" stroke-dasharray="1 2"/><text x="${width - pad.right + 30}" y="${boundY - 3}">capacity bound ${percent(bound)}</text>`
      : '';
  return `<svg width="${width}" viewBox="0 0 ${width} ${height}" role="img" aria-label="offload over time">
${grid}${xTicks}
<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(ideal)}" y2="${y(ideal)}" stroke="#333" stroke-dasharray="5 4"/>
<line x1="${width - pad.right + 12}" x2="${width - pad.right + 24}" y1="${idealY - 7}" y2="${idealY - 7}" stroke="#333" stroke-dasharray="3 2"/><text x="${width - pad.right + 30}" y="${idealY - 3}">ideal ${percent(ideal)}</text>
${boundLine}
${lines}
<text x="${pad.left}" y="${height - 4}" class="axis">cumulative offload since the first viewer joined</text>
</svg>`;
}

/** Per viewer: HTTP and P2P bytes received (stacked), uploaded bytes below. */
function bytesChart(run: RunReport, scaleBytes: number): string {
  const rowHeight = 22;
  // Room for "v12 (P2P off) (no upload)" at the labels' 12 px.
  const labelWidth = 160;
  const barWidth = 520;
  const height = run.perPeer.length * rowHeight + 28;
  const w = (bytes: number) => (bytes / Math.max(1, scaleBytes)) * barWidth;
  const rows = run.perPeer
    .map((peer: PeerReport, index) => {
      const top = index * rowHeight + 4;
      const label = `${viewerLabel(run, peer)}${peer.p2p || run.engine === 'http' ? '' : ' (P2P off)'}${peer.nonUploading ? ' (no upload)' : ''}`;
      return (
        `<text x="${labelWidth - 6}" y="${top + 11}" text-anchor="end">${escapeHtml(label)}</text>` +
        `<rect x="${labelWidth}" y="${top}" width="${w(peer.httpBytes).toFixed(1)}" height="12" fill="${httpColor}"><title>HTTP ${megabytes(peer.httpBytes)}</title></rect>` +
        `<rect x="${(labelWidth + w(peer.httpBytes)).toFixed(1)}" y="${top}" width="${w(peer.p2pBytes).toFixed(1)}" height="12" fill="${p2pColor}"><title>P2P ${megabytes(peer.p2pBytes)}</title></rect>` +
        `<rect x="${labelWidth}" y="${top + 13}" width="${w(peer.uploadedBytes).toFixed(1)}" height="4" fill="${uploadColor}"><title>uploaded ${megabytes(peer.uploadedBytes)}</title></rect>` +
        `<text x="${(labelWidth + w(peer.httpBytes + peer.p2pBytes) + 6).toFixed(1)}" y="${top + 11}" class="small">${megabytes(peer.httpBytes)} + ${megabytes(peer.p2pBytes)}</text>`
      );
    })
    .join('');
  const legendY = height - 8;
  return `<svg width="${labelWidth + barWidth + 140}" viewBox="0 0 ${labelWidth + barWidth + 140} ${height}" role="img" aria-label="bytes per viewer by source">${rows}
<rect x="${labelWidth}" y="${legendY - 9}" width="10" height="10" fill="${httpColor}"/><text x="${labelWidth + 14}" y="${legendY}">HTTP (origin)</text>
<rect x="${labelWidth + 120}" y="${legendY - 9}" width="10" height="10" fill="${p2pColor}"/><text x="${labelWidth + 134}" y="${legendY}">P2P (from peers)</text>
<rect x="${labelWidth + 260}" y="${legendY - 6}" width="10" height="4" fill="${uploadColor}"/><text x="${labelWidth + 274}" y="${legendY}">uploaded to peers</text>
</svg>`;
}

/** Per viewer: time watching (grey), first frame (black tick), stalls (red). */
function stallTimeline(run: RunReport, maxT: number): string {
  const rowHeight = 16;
  const labelWidth = mixesBrowsers(run) ? 110 : 70;
  const axisWidth = 600;
  const height = run.perPeer.length * rowHeight + 24;
  const x = (tS: number) => labelWidth + (Math.max(0, tS) / maxT) * axisWidth;
  const rows = run.perPeer
    .map((peer, index) => {
      const mid = index * rowHeight + 10;
      const end = peer.leftAtS ?? maxT;
      const firstFrame = peer.startupMs === null ? null : peer.joinedAtS + peer.startupMs / 1000;
      const stalls = peer.stallTimeline
        .map((stall) => `<rect x="${x(stall.startS).toFixed(1)}" y="${mid - 5}" width="${Math.max(2, x(stall.endS) - x(stall.startS)).toFixed(1)}" height="10" fill="${stallColor}"><title>stall ${(stall.endS - stall.startS).toFixed(1)} s at ${stall.startS.toFixed(1)} s</title></rect>`)
        .join('');
      return (
        `<text x="${labelWidth - 6}" y="${mid + 4}" text-anchor="end">${escapeHtml(viewerLabel(run, peer))}</text>` +
        `<line x1="${x(peer.joinedAtS).toFixed(1)}" x2="${x(end).toFixed(1)}" y1="${mid}" y2="${mid}" stroke="#ccc" stroke-width="6"/>` +
        (firstFrame === null ? '' : `<line x1="${x(firstFrame).toFixed(1)}" x2="${x(firstFrame).toFixed(1)}" y1="${mid - 6}" y2="${mid + 6}" stroke="#000" stroke-width="2"><title>first frame after ${peer.startupMs} ms</title></line>`) +
        stalls
      );
    })
    .join('');
  const ticks = timeTicks(maxT, 7)
    .map((tS) => `<text x="${x(tS)}" y="${height - 4}" text-anchor="middle" class="small">${timeLabel(tS)}</text>`)
    .join('');
  return `<svg width="${labelWidth + axisWidth + 30}" viewBox="0 0 ${labelWidth + axisWidth + 30} ${height}" role="img" aria-label="stalls on a timeline">${rows}${ticks}</svg>`;
}

/** Each viewer's shaped link: cap, mean and busiest window each way (the evidence the shaping held). */
function networkTable(network: NetworkReport): string {
  const kbit = (bitsPerS: number | null) => (bitsPerS === null ? '∞' : String(Math.round(bitsPerS / 1000)));
  const cells = (side: DirectionReport) =>
    `<td>${kbit(side.capBitsPerS)}</td><td>${kbit(side.meanBitsPerS)}</td><td>${kbit(side.peakBitsPerS)}</td><td>${side.peakOfCap === null ? '–' : percent(side.peakOfCap)}</td><td>${side.fullS} s</td>`;
  const rows = network.viewers.map((viewer) => `<tr><th>${escapeHtml(viewer.id)}${viewer.uploads ? '' : ' (no upload)'} <small>${escapeHtml(viewer.address)}</small></th>${cells(viewer.up)}${cells(viewer.down)}</tr>`).join('');
  const head = '<th>cap</th><th>mean</th><th>peak</th><th>peak/cap</th><th>full</th>';
  return `<p>Network <b>${escapeHtml(network.profile)}</b>: ${escapeHtml(network.description)}. Uplinks are multiples of ${Math.round(network.bitrateBitsPerS / 1000)} kbit/s; uplink queue ${network.uplinkQueueMs} ms, downlink queue ${network.downlinkQueueMs} ms (tc tbf); latency: ${escapeHtml(network.latencyModel)}. <span class="${network.shapingHeld ? 'ok' : 'bad'}">Shaping ${network.shapingHeld ? 'held' : 'DID NOT HOLD'}</span>${network.nat ? ` NAT: ${escapeHtml(network.nat)}.` : ''} (no 5-s window above 110% of a cap). kbit/s of Ethernet frames, as the kernel counted them.</p>
<table class="summary"><thead><tr><th></th><th colspan="5">uplink</th><th colspan="5">downlink</th></tr><tr><th>viewer</th>${head}${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderReportHtml(report: SwarmReport): string {
  const maxBytes = Math.max(1, ...report.runs.flatMap((run) => run.perPeer.map((peer) => peer.httpBytes + peer.p2pBytes)));
  const maxT = Math.max(1, ...report.runs.map((run) => run.durationS));
  const validity = report.validity
    ? `<p class="${report.validity.valid ? 'ok' : 'bad'}">${report.validity.valid ? 'Valid' : 'NOT VALID'}: ${escapeHtml(report.validity.reason)}.</p>`
    : '<p class="warn">No HTTP-only baseline ran: the QoE figures have nothing to compare with.</p>';
  const partial = report.partial ? `<p class="bad">PARTIAL: ${escapeHtml(report.partial.reason)}. The figures cover what ran.</p>` : '';
  const thresholds = report.thresholds.length
    ? `<h2>Thresholds</h2><ul>${report.thresholds
        .map((result) => `<li class="${result.pass ? 'ok' : 'bad'}">${result.pass ? 'PASS' : 'FAIL'} ${escapeHtml(result.engine)}: <code>${escapeHtml(result.threshold)}</code> (actual ${result.actual ?? '–'}${result.bound !== null ? `, bound ${result.bound}` : ''})${result.reason ? `: ${escapeHtml(result.reason)}` : ''}</li>`)
        .join('')}</ul>`
    : '';
  const notes = report.runs.flatMap((run) => run.notes.map((note) => `<li><b>${escapeHtml(run.engine)}</b>: ${escapeHtml(note)}</li>`)).join('');
  const perEngine = report.runs
    .map(
      (run) => `<section><h3 style="color:${colorOf(run.engine)}">${escapeHtml(run.engine)}</h3>
<figure><figcaption>bytes per viewer by source</figcaption>${bytesChart(run, maxBytes)}</figure>
<figure><figcaption>stalls on a timeline (grey: watching, black tick: first frame, red: stall) — ${run.stalls.count} stalls, ${run.stalls.seconds.toFixed(1)} s</figcaption>${stallTimeline(run, maxT)}</figure>${run.network ? networkTable(run.network) : ''}${run.uplinkAccount && run.engine !== 'http' ? uplinkAccountHtml(run.uplinkAccount) : ''}${run.uplinkClasses ? uplinkClassesHtml(run.uplinkClasses) : ''}</section>`,
    )
    .join('\n');
  // Each chart is drawn at its own width (its viewBox's), shrinking only in a narrower window: the
  // labels stay at their 11-12 px (squeezed into half-width columns they were 7-8 px). An SVG
  // without a width of its own (the uplink account's bar) spans the page.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shoal swarm · ${escapeHtml(report.scenario)} · ${report.peers} viewers</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; padding: 0 16px; color: #222; }
h1 { font-size: 20px; margin-bottom: 4px; } h2 { font-size: 16px; margin-top: 28px; } h3 { margin: 18px 0 6px; }
.meta { color: #666; margin-top: 0; }
table.summary { border-collapse: collapse; } table.summary th, table.summary td { padding: 4px 12px; border-bottom: 1px solid #eee; text-align: right; }
table.summary tbody th { text-align: left; font-weight: 500; } table.summary small { display: block; color: #888; font-weight: 400; font-size: 11px; }
svg { display: block; max-width: 100%; height: auto; font-size: 12px; } svg:not([width]) { width: 100%; } svg .grid { stroke: #eee; } svg .small { font-size: 11px; fill: #555; } svg .axis { fill: #777; }
figure { margin: 0 0 12px; } figcaption { color: #555; font-size: 12px; }
.ok { color: #2a7; } .bad { color: #c22; font-weight: 600; } .warn { color: #b70; }
code { background: #f4f4f4; padding: 1px 4px; }
</style></head><body>
<h1>Swarm: ${escapeHtml(report.scenario)} · ${report.peers} viewers · ${report.durationS} s</h1>
<p class="meta">${escapeHtml(report.createdAt)} · ${report.machine.cpus} CPUs · ${escapeHtml(report.machine.platform)} · Node ${escapeHtml(report.machine.node)} · stream ${escapeHtml(report.streamUrl)}${report.originCounted ? '' : ' (external: origin count unavailable, origin figures estimated from the viewers\' counters)'}${report.command ? ` · <code>${escapeHtml(report.command)}</code>` : ''} · Shoal ${escapeHtml(report.shoalCommit ?? 'commit unknown')} · report schema ${report.schemaVersion}</p>
${partial}
${validity}
${thresholds}
${summaryTable(report)}
<h2>Offload over time</h2>
${offloadChart(report)}
<h2>Per engine</h2>
${perEngine}
${notes ? `<h2>Notes</h2><ul>${notes}</ul>` : ''}
</body></html>
`;
}
