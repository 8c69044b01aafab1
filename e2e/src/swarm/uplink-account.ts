// Where the viewers' uplinks went over a period (after the joins): how much of what the links
// could carry was sent, why the rest was not (the engines' own account of their upload state:
// nobody asked, yielding to the viewer's playback, waiting for relayed bytes, held by the pace,
// or the channels full), the origin copies per segment by what they were for, the uploads the
// requesters cancelled, and (where the simulator can tell) how many peer hops the P2P copies
// travelled from the origin. One computation for the simulator and the browser swarm.

export type UplinkState = 'idle' | 'yielding' | 'relay' | 'paced' | 'full';
export type OriginKind = 'seed' | 'urgent' | 'range' | 'refetch';
const STATES: UplinkState[] = ['idle', 'yielding', 'relay', 'paced', 'full'];
const KINDS: OriginKind[] = ['seed', 'urgent', 'range', 'refetch'];

/** What the account reads of an engine's getStats(). */
export interface EngineCounters {
  uploadBytes: number;
  originBytes: Record<OriginKind, number>;
  upload: { uplink: { ms: Record<UplinkState, number>; bytes: Record<UplinkState, number>; cancelledUploads: number; cancelledBytes: number } };
}

export interface UplinkViewer {
  /** Its engine serves peers (P2P on, upload on). */
  uploads: boolean;
  /** Its uplink, bytes/s (Infinity: unlimited). */
  capBytesPerS: number;
  /** Its counters at the start of the period (undefined: it joined during it), and at its end (or when it left). */
  from: EngineCounters | undefined;
  to: EngineCounters;
}

export interface UplinkAccount {
  /** The period accounted: from fromS to its end, periodS long. */
  fromS: number;
  periodS: number;
  uploaders: number;
  /** What the uploaders' links could carry over their time in the period, bytes (null: a link is unlimited). */
  capacityBytes: number | null;
  sentBytes: number;
  /** sentBytes / capacityBytes. */
  utilisation: number | null;
  /** The unused rest, by cause, as shares of it (they sum to 1; null with unlimited links). */
  unusedByCause: Record<UplinkState, number> | null;
  /** Origin bytes over the period by what they were for, in copies of the stream (1: the origin sent each segment once). */
  originCopiesPerSegment: Record<OriginKind | 'total', number>;
  cancelledUploads: number;
  cancelledBytes: number;
  /** P2P copies completed in the period by peer hops from an origin copy (index 1: from a viewer that got it from the origin); null where unknown (browser swarm). */
  hopDepth: { copies: number; byDepth: number[]; mean: number | null } | null;
}

const minus = (to: number, from: number | undefined) => to - (from ?? 0);

export function uplinkAccount(input: {
  viewers: readonly UplinkViewer[];
  fromS: number;
  periodS: number;
  /** The stream's bytes per second of media: one copy of the period is this × periodS. */
  streamBytesPerS: number;
  hopCounts?: readonly number[];
}): UplinkAccount {
  const { viewers, fromS, periodS, streamBytesPerS } = input;
  let capacity = 0;
  let sent = 0;
  let cancelledUploads = 0;
  let cancelledBytes = 0;
  const unused = Object.fromEntries(STATES.map((state) => [state, 0])) as Record<UplinkState, number>;
  const origin = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<OriginKind, number>;
  let uploaders = 0;
  for (const { uploads, capBytesPerS, from, to } of viewers) {
    for (const kind of KINDS) origin[kind] += minus(to.originBytes[kind], from?.originBytes[kind]);
    if (!uploads) continue;
    uploaders++;
    const usage = to.upload.uplink;
    const before = from?.upload.uplink;
    sent += minus(to.uploadBytes, from?.uploadBytes);
    cancelledUploads += minus(usage.cancelledUploads, before?.cancelledUploads);
    cancelledBytes += minus(usage.cancelledBytes, before?.cancelledBytes);
    for (const state of STATES) {
      const seconds = minus(usage.ms[state], before?.ms[state]) / 1000;
      capacity += capBytesPerS * seconds;
      unused[state] += capBytesPerS * seconds - minus(usage.bytes[state], before?.bytes[state]);
    }
  }
  const finite = Number.isFinite(capacity);
  const unusedTotal = STATES.reduce((sum, state) => sum + Math.max(0, unused[state]), 0);
  const copies = streamBytesPerS * periodS;
  const hopCounts = input.hopCounts;
  const hopCopies = hopCounts ? hopCounts.reduce((sum, count) => sum + count, 0) : 0;
  return {
    fromS, periodS, uploaders,
    capacityBytes: finite ? Math.round(capacity) : null,
    sentBytes: sent,
    utilisation: finite && capacity > 0 ? sent / capacity : null,
    unusedByCause: finite && unusedTotal > 0 ? (Object.fromEntries(STATES.map((state) => [state, Math.max(0, unused[state]) / unusedTotal])) as Record<UplinkState, number>) : null,
    originCopiesPerSegment: {
      ...(Object.fromEntries(KINDS.map((kind) => [kind, copies > 0 ? origin[kind] / copies : 0])) as Record<OriginKind, number>),
      total: copies > 0 ? KINDS.reduce((sum, kind) => sum + origin[kind], 0) / copies : 0,
    },
    cancelledUploads, cancelledBytes,
    hopDepth: hopCounts
      ? { copies: hopCopies, byDepth: [...hopCounts], mean: hopCopies > 0 ? hopCounts.reduce((sum, count, depth) => sum + count * depth, 0) / hopCopies : null }
      : null,
  };
}

const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

/** The account in a few lines, for the terminal table. */
export function describeUplinkAccount(account: UplinkAccount): string {
  const lines = [`uplinks after the joins (${Math.round(account.fromS)} s on, ${account.uploaders} uploading viewers):`];
  if (account.utilisation !== null && account.unusedByCause) {
    const causes = (Object.entries(account.unusedByCause) as [UplinkState, number][]).filter(([, share]) => share >= 0.005).sort((a, b) => b[1] - a[1]);
    lines.push(`  used ${pct(account.utilisation)} of what they could carry; the unused rest: ${causes.map(([state, share]) => `${UNUSED_WORDS[state]} ${pct(share)}`).join(', ')}`);
  } else lines.push(`  ${(account.sentBytes / 1e6).toFixed(1)} MB sent (unlimited links: no utilisation)`);
  const copies = account.originCopiesPerSegment;
  lines.push(`  origin copies per segment ${copies.total.toFixed(2)}: seed ${copies.seed.toFixed(2)}, urgent ${copies.urgent.toFixed(2)}, range ${copies.range.toFixed(2)}, refetch ${copies.refetch.toFixed(2)}`);
  lines.push(`  uploads cancelled by their requesters ${account.cancelledUploads} (${(account.cancelledBytes / 1e6).toFixed(1)} MB sent of them)`);
  if (account.hopDepth && account.hopDepth.copies > 0) {
    const { byDepth, copies: total, mean } = account.hopDepth;
    lines.push(`  P2P copies ${total} by hops from an origin copy: ${byDepth.map((count, depth) => (count ? `${depth}: ${pct(count / total)}` : '')).filter(Boolean).join(', ')} (mean ${mean!.toFixed(2)})`);
  }
  return lines.join('\n');
}

export const UNUSED_WORDS: Record<UplinkState, string> = {
  idle: 'nobody asked',
  yielding: "yielding to the viewer's own playback",
  relay: 'waiting for relayed bytes',
  paced: 'held by the pace',
  full: 'channels full',
};
