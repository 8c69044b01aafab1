// The uplink's classes (uplink-classes.ts) for the terminal table and report.html: per group and
// per viewer, kbit/s by class after the joins (over the run where the joins never ended), the
// governor's pace against what went out, and how late the pages' timers fired.
import { UPLINK_CLASSES, type UplinkClass, type UplinkClassesReport, type UplinkSpan, type ViewerUplinkClasses } from './uplink-classes.js';
import type { TimerLagSummary } from './timer-lag.js';

const WORDS: Record<UplinkClass, string> = { payload: 'payload', control: 'control', overhead: 'overhead', origin: 'origin TCP', tracker: 'tracker', other: 'other' };
const kbit = (value: number) => value.toFixed(1);
const kBps = (bytesPerS: number | null) => (bytesPerS === null ? '–' : (bytesPerS / 1000).toFixed(1));
const capKbit = (bitsPerS: number | null) => (bitsPerS === null ? '∞' : String(Math.round(bitsPerS / 1000)));
const lagWords = (lag: TimerLagSummary | null) => (lag && lag.fires > 0 ? `p50 ${lag.p50Ms} ms, p95 ${lag.p95Ms} ms, max ${lag.maxMs} ms (${lag.fires} fires)` : 'no fires');

/** The span the view shows: after the joins, else the run. */
const shown = (holder: { afterJoins: UplinkSpan | null; run: UplinkSpan | null }) => holder.afterJoins ?? holder.run;

function spanLine(span: UplinkSpan): string {
  return `${UPLINK_CLASSES.map((kind) => `${WORDS[kind]} ${kbit(span.kbitPerS[kind])}`).join(' · ')} = ${kbit(span.kbitPerS.total)}`;
}

function viewerLine(viewer: ViewerUplinkClasses): string {
  const span = shown(viewer);
  if (!span) return `  ${viewer.id.padEnd(4)} no reading`;
  const rates = viewer.rates;
  const pace = rates ? ` · pace ${kBps(rates.paceBytesPerS)}, advertised ${kBps(rates.advertisedBytesPerS ?? null)} kB/s against payload ${kBps(rates.payloadBytesPerS)}, UDP ${kBps(rates.udpBytesPerS)}, link ${kBps(rates.linkBytesPerS)} kB/s` : '';
  return `  ${viewer.id.padEnd(4)} cap ${capKbit(viewer.capBitsPerS)}: ${spanLine(span)}${pace}`;
}

/** A few lines for the terminal table. */
export function describeUplinkClasses(engine: string, report: UplinkClassesReport): string[] {
  const after = report.fromS !== null && report.all.afterJoins !== null;
  const lines = [
    `${engine}: uplinks by class ${after ? `after the joins (${Math.round(report.fromS!)} s on)` : 'over the run'}, kbit/s per viewer (IP bytes out of each viewer's namespace, by the kernel)${report.controlCounted ? '' : '; control not counted by this engine: inside overhead'}:`,
  ];
  for (const [words, group] of [['sending payload', report.sendingPayload], ['sending none', report.sendingNone]] as const) {
    const span = shown(group);
    if (group.viewers > 0 && span) lines.push(`  ${group.viewers} ${words}: ${spanLine(span)}`);
  }
  lines.push(...report.viewers.map(viewerLine));
  const lag = report.timerLag;
  const perViewer = report.viewers.map((viewer) => {
    const own = viewer.timerLag.afterJoins ?? viewer.timerLag.run;
    return `${viewer.id} ${own?.p95Ms ?? '–'}/${own?.maxMs ?? '–'}`;
  });
  lines.push(`  timer lag (a ${lag.intervalMs ?? '–'} ms timer in each page), ${after ? 'after the joins' : 'over the run'}: ${lagWords(lag.afterJoins ?? lag.run)}; p95/max ms per viewer: ${perViewer.join(', ')}`);
  return lines;
}

const lagCell = (lag: TimerLagSummary | null) => (lag && lag.fires > 0 ? `${lag.p50Ms} / ${lag.p95Ms} / ${lag.maxMs}` : '–');

function htmlRow(label: string, span: UplinkSpan | null, extra: string[]): string {
  const cells = span ? [...UPLINK_CLASSES.map((kind) => kbit(span.kbitPerS[kind])), kbit(span.kbitPerS.total)] : UPLINK_CLASSES.map(() => '–').concat('–');
  return `<tr><th>${label}</th>${[...cells, ...extra].map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
}

/** A table for report.html: a row per viewer and per group. */
export function uplinkClassesHtml(report: UplinkClassesReport): string {
  const after = report.fromS !== null && report.all.afterJoins !== null;
  const rows = report.viewers.map((viewer) => {
    const rates = viewer.rates;
    return htmlRow(viewer.id.replace(/[^\w-]/g, ''), shown(viewer), [
      capKbit(viewer.capBitsPerS),
      rates ? `${kBps(rates.paceBytesPerS)} / ${kBps(rates.advertisedBytesPerS ?? null)} / ${kBps(rates.payloadBytesPerS)} / ${kBps(rates.linkBytesPerS)}` : '–',
      lagCell(viewer.timerLag.afterJoins ?? viewer.timerLag.run),
    ]);
  });
  const groups = ([['sending payload', report.sendingPayload], ['sending none', report.sendingNone], ['all', report.all]] as const)
    .filter(([, group]) => group.viewers > 0)
    .map(([words, group]) => htmlRow(`${group.viewers} ${words} (per viewer)`, shown(group), ['', '', words === 'all' ? lagCell(report.timerLag.afterJoins ?? report.timerLag.run) : '']));
  const head = [...UPLINK_CLASSES.map((kind) => WORDS[kind]), 'total', 'cap', 'pace / advertised / payload / link kB/s', 'timer lag p50 / p95 / max ms'].map((title) => `<th>${title}</th>`).join('');
  return `<h4>Uplinks by class ${after ? `after the joins (${Math.round(report.fromS!)} s on)` : 'over the run'}, kbit/s</h4>
<p style="font-size:13px">IP bytes out of each viewer's own namespace (iptables, before its NAT and its shaping). Payload and control are the engine's counts${report.controlCounted ? '' : ' (this engine does not count control: it is inside overhead)'}; overhead is the rest of its UDP (IP/UDP/DTLS/SCTP headers, SCTP acknowledgements of received data, ICE/STUN/TURN); origin TCP is its HTTP requests and acknowledgements of its downloads; tracker the WebSocket. Pace: the upload governor's mean pace against the payload and everything the link carried. Timer lag: how late a ${report.timerLag.intervalMs ?? '–'} ms timer in the page fired.</p>
<table class="summary"><thead><tr><th>viewer</th>${head}</tr></thead><tbody>${rows.join('')}${groups.join('')}</tbody></table>`;
}
