// What each viewer's uplink carried, by class, over its run and over the period after the joins:
// the kernel's counts out of its namespace (uplink-counters.ts) split with its engine's own counts.
//   payload   segment bytes sent to peers (the engine's uploadBytes)
//   control   the peer protocol's other messages (the engine's controlBytes; 0 for hls.js alone,
//             unknown for other engines: then it is part of overhead)
//   overhead  the rest of the UDP bytes: IP/UDP/DTLS/SCTP headers, SCTP's acknowledgements of
//             received data, ICE/STUN/TURN, DTLS handshakes, data messages' own 13-byte headers
//   origin    TCP to the origin: the viewer's HTTP requests and its acknowledgements of downloads
//   tracker   TCP to the tracker (WebSocket)
//   other     everything else (the pages server, multicast)
// The classes sum to the kernel's total by construction. And each viewer's upload pace (what its
// governor lets out) against what its link carried, and how late its page's timers fired.
import { KERNEL_CLASSES, type KernelClass, type KernelUplink } from './uplink-counters.js';
import { lagHistogramBetween, poolHistograms, summarizeLag, type TimerLagSnapshot, type TimerLagSummary } from './timer-lag.js';

export type UplinkClass = 'payload' | 'control' | 'overhead' | 'origin' | 'tracker' | 'other';
export const UPLINK_CLASSES: readonly UplinkClass[] = ['payload', 'control', 'overhead', 'origin', 'tracker', 'other'];

/** One reading of a viewer: its kernel counters and its engine's, together (tS: seconds since the run started). */
export interface UplinkPoint {
  tS: number;
  kernel: KernelUplink;
  uploadBytes: number;
  /** null: the engine does not count its control bytes. */
  controlBytes: number | null;
  timerLag: TimerLagSnapshot | null;
}

/** What a run recorded of one viewer's uplink. */
export interface ViewerUplinkRecord {
  id: string;
  /** Its first reading after the joins (null: it joined later, or none was read then). */
  atJoins: UplinkPoint | null;
  /** Its latest reading (the run's end, or its last before it left). */
  last: UplinkPoint | null;
  /** Its engine's upload pace at each reading after the joins, bytes/s. */
  paceSamples: number[];
  /** The rate its pings told peers at each reading after the joins, bytes/s (once measured; absent in older records). */
  advertisedSamples?: number[];
}

export interface UplinkClassesRecord {
  /** When the period after the joins began, s (null: the run ended first). */
  fromS: number | null;
  viewers: ViewerUplinkRecord[];
}

export interface UplinkSpan {
  /** Seconds (summed over viewers, viewer-seconds). */
  seconds: number;
  bytes: Record<UplinkClass, number>;
  /** The kernel's total: the sum of the classes. */
  totalBytes: number;
  /** Packets by the kernel's classes (payload, control and overhead share the UDP packets). */
  packets: Record<KernelClass, number>;
  /** Bytes × 8 / seconds / 1000: per viewer where summed over viewers. */
  kbitPerS: Record<UplinkClass | 'total', number>;
}

export interface ViewerUplinkClasses {
  id: string;
  /** It sent payload to peers after the joins (over its run, if it joined later). */
  sendsPayload: boolean;
  capBitsPerS: number | null;
  /** From its join to its last reading. */
  run: UplinkSpan | null;
  afterJoins: UplinkSpan | null;
  /** Its governor's mean pace and advertised rate after the joins against what went out, bytes/s (payload, all UDP, everything). */
  rates: { paceBytesPerS: number | null; advertisedBytesPerS: number | null; payloadBytesPerS: number; udpBytesPerS: number; linkBytesPerS: number } | null;
  timerLag: { run: TimerLagSummary | null; afterJoins: TimerLagSummary | null };
}

export interface UplinkGroup {
  viewers: number;
  /** Bytes summed, kbit/s per viewer. */
  afterJoins: UplinkSpan | null;
  run: UplinkSpan | null;
}

export interface UplinkClassesReport {
  fromS: number | null;
  /** Every engine counted its control bytes (else control is inside overhead where it did not). */
  controlCounted: boolean;
  viewers: ViewerUplinkClasses[];
  all: UplinkGroup;
  sendingPayload: UplinkGroup;
  sendingNone: UplinkGroup;
  /** Every viewer's timer fires pooled. */
  timerLag: { intervalMs: number | null; run: TimerLagSummary | null; afterJoins: TimerLagSummary | null };
}

const ZERO: KernelUplink = Object.fromEntries(KERNEL_CLASSES.map((kind) => [kind, { bytes: 0, packets: 0 }])) as KernelUplink;
const kbit = (bytes: number, seconds: number) => (seconds > 0 ? Math.round((bytes * 8) / seconds / 100) / 10 : 0);

function spanOf(bytes: Record<UplinkClass, number>, packets: Record<KernelClass, number>, seconds: number): UplinkSpan {
  const totalBytes = UPLINK_CLASSES.reduce((sum, kind) => sum + bytes[kind], 0);
  const rates = Object.fromEntries(UPLINK_CLASSES.map((kind) => [kind, kbit(bytes[kind], seconds)])) as Record<UplinkClass, number>;
  return { seconds: Math.round(seconds * 10) / 10, bytes, totalBytes, packets, kbitPerS: { ...rates, total: kbit(totalBytes, seconds) } };
}

/** The classes between two readings of one viewer (from null: zero, at `fromS`). */
export function uplinkSpan(from: UplinkPoint | null, to: UplinkPoint, fromS: number): UplinkSpan {
  const before = from?.kernel ?? ZERO;
  const delta = (kind: KernelClass) => to.kernel[kind].bytes - before[kind].bytes;
  const payload = to.uploadBytes - (from?.uploadBytes ?? 0);
  const control = to.controlBytes === null ? 0 : to.controlBytes - (from?.controlBytes ?? 0);
  const bytes: Record<UplinkClass, number> = {
    payload, control, overhead: delta('udp') - payload - control, origin: delta('origin'), tracker: delta('tracker'), other: delta('other'),
  };
  const packets = Object.fromEntries(KERNEL_CLASSES.map((kind) => [kind, to.kernel[kind].packets - before[kind].packets])) as Record<KernelClass, number>;
  return spanOf(bytes, packets, to.tS - (from?.tS ?? fromS));
}

/** Spans of several viewers as one: bytes and seconds summed (kbit/s per viewer); null with none. */
export function sumSpans(spans: readonly UplinkSpan[]): UplinkSpan | null {
  if (spans.length === 0) return null;
  const bytes = Object.fromEntries(UPLINK_CLASSES.map((kind) => [kind, spans.reduce((sum, span) => sum + span.bytes[kind], 0)])) as Record<UplinkClass, number>;
  const packets = Object.fromEntries(KERNEL_CLASSES.map((kind) => [kind, spans.reduce((sum, span) => sum + span.packets[kind], 0)])) as Record<KernelClass, number>;
  return spanOf(bytes, packets, spans.reduce((sum, span) => sum + span.seconds, 0));
}

const perSecond = (bytes: number, seconds: number) => (seconds > 0 ? Math.round(bytes / seconds) : 0);

function viewerClasses(record: ViewerUplinkRecord, joinedS: number, capBitsPerS: number | null): ViewerUplinkClasses {
  const { atJoins, last } = record;
  const run = last ? uplinkSpan(null, last, joinedS) : null;
  const afterJoins = atJoins && last && last.tS > atJoins.tS ? uplinkSpan(atJoins, last, atJoins.tS) : null;
  const span = afterJoins ?? run;
  const meanOf = (samples: number[] | undefined) => (samples?.length ? Math.round(samples.reduce((sum, value) => sum + value, 0) / samples.length) : null);
  const lag = (from: UplinkPoint | null) => (last?.timerLag ? summarizeLag(lagHistogramBetween(from?.timerLag ?? undefined, last.timerLag), from ? undefined : last.timerLag.maxMs) : null);
  return {
    id: record.id,
    sendsPayload: (span?.bytes.payload ?? 0) > 0,
    capBitsPerS,
    run,
    afterJoins,
    rates: afterJoins
      ? {
          paceBytesPerS: meanOf(record.paceSamples),
          advertisedBytesPerS: meanOf(record.advertisedSamples),
          payloadBytesPerS: perSecond(afterJoins.bytes.payload, afterJoins.seconds),
          udpBytesPerS: perSecond(afterJoins.bytes.payload + afterJoins.bytes.control + afterJoins.bytes.overhead, afterJoins.seconds),
          linkBytesPerS: perSecond(afterJoins.totalBytes, afterJoins.seconds),
        }
      : null,
    timerLag: { run: lag(null), afterJoins: afterJoins ? lag(atJoins) : null },
  };
}

function group(viewers: readonly ViewerUplinkClasses[]): UplinkGroup {
  const spans = (pick: (viewer: ViewerUplinkClasses) => UplinkSpan | null) => viewers.map(pick).filter((span): span is UplinkSpan => span !== null);
  return { viewers: viewers.length, afterJoins: sumSpans(spans((viewer) => viewer.afterJoins)), run: sumSpans(spans((viewer) => viewer.run)) };
}

/** The report's account, from the run's record; `viewers` gives each viewer's join (s) and uplink cap. */
export function summarizeUplinkClasses(
  record: UplinkClassesRecord,
  viewers: ReadonlyMap<string, { joinedS: number; capBitsPerS: number | null }>,
): UplinkClassesReport {
  const perViewer = record.viewers
    .filter((viewer) => viewers.has(viewer.id))
    .map((viewer) => viewerClasses(viewer, viewers.get(viewer.id)!.joinedS, viewers.get(viewer.id)!.capBitsPerS));
  const lagged = record.viewers.filter((viewer) => viewer.last?.timerLag && viewers.has(viewer.id));
  const runLag = lagged.map((viewer) => lagHistogramBetween(undefined, viewer.last!.timerLag!));
  const afterLag = lagged.filter((viewer) => viewer.atJoins?.timerLag).map((viewer) => lagHistogramBetween(viewer.atJoins!.timerLag!, viewer.last!.timerLag!));
  return {
    fromS: record.fromS,
    controlCounted: record.viewers.every((viewer) => viewer.last === null || viewer.last.controlBytes !== null),
    viewers: perViewer,
    all: group(perViewer),
    sendingPayload: group(perViewer.filter((viewer) => viewer.sendsPayload)),
    sendingNone: group(perViewer.filter((viewer) => !viewer.sendsPayload)),
    timerLag: {
      intervalMs: lagged[0]?.last?.timerLag?.intervalMs ?? null,
      run: runLag.length ? summarizeLag(poolHistograms(runLag), Math.max(...lagged.map((viewer) => viewer.last!.timerLag!.maxMs))) : null,
      afterJoins: afterLag.length ? summarizeLag(poolHistograms(afterLag)) : null,
    },
  };
}
