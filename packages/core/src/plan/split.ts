// Splitting a segment over several peers, pure: each brings one byte range, sized to the rate its
// link delivers (and, for a peer still receiving the segment, to what it will hold by then), so
// that all the ranges are in at about the same time, as early as the peers allow. One sender at
// an uplink below the stream's bitrate cannot bring a segment as fast as it plays; three can.

/** A peer that may bring part of the segment. */
export interface SplitCandidate {
  id: string;
  /** The rate a request to it would get, bytes/s (the planner's slack already taken off). */
  bytesPerS: number;
  /** How long its queued uploads keep a new request waiting, ms. */
  waitMs: number;
  /**
   * Still receiving the segment itself (a relay): it holds bytes [0, heldBytes) now, and more at
   * about `growthBytesPerS`: it can bring only bytes below what it will hold.
   */
  relay?: { heldBytes: number; growthBytesPerS: number };
  /**
   * In [0, 1), different for each requester: candidates about as fast are taken in a different
   * order by each, rather than all asking the same (default 0).
   */
  spread?: number;
}

export interface SplitPart {
  id: string;
  start: number;
  /** Exclusive; Infinity for the last part when the segment's size is not known. */
  end: number;
}

/** Parts smaller than this are not worth a request of their own (each costs messages both ways). */
const MIN_PART_BYTES = 16 * 1024;

/**
 * Ranges for up to `maxParts` of `candidates` that bring `bytes` within `availableMs`, as early as
 * they can; undefined when they cannot in time. Relays take the front of the segment (the bytes
 * they hold first), the others the rest. `sizeKnown`: the last part ends at `bytes`, else it runs
 * to the segment's end (the size was estimated).
 */
export function splitAcross(candidates: readonly SplitCandidate[], bytes: number, availableMs: number, maxParts: number, sizeKnown: boolean): SplitPart[] | undefined {
  const usable = candidates.filter((candidate) => candidate.bytesPerS > 0 && candidate.waitMs < availableMs);
  const relays = usable.filter((candidate) => candidate.relay).sort((a, b) => relayEndAt(a, 0) - relayEndAt(b, 0));
  const holders = usable.filter((candidate) => !candidate.relay).sort((a, b) => aloneMs(a, bytes) - aloneMs(b, bytes));
  const most = Math.max(1, Math.min(maxParts, Math.floor(bytes / MIN_PART_BYTES)));
  // The fastest holders, and relays before them while there is room.
  const chosen = [...relays.slice(0, Math.max(0, most - Math.min(holders.length, 1))), ...holders].slice(0, most);
  if (chosen.length === 0 || coverage(chosen, bytes, availableMs).covered < bytes) return undefined;
  // The earliest time the chosen ones cover the segment by (bisection: coverage grows with time;
  // to a fraction of it, not to a millisecond: fast peers bring a segment within one).
  let low = 0;
  let high = availableMs;
  for (let step = 0; step < 40; step++) {
    const middle = (low + high) / 2;
    if (coverage(chosen, bytes, middle).covered >= bytes) high = middle;
    else low = middle;
  }
  const parts = coverage(chosen, bytes, high).parts;
  // A part too small to be worth its messages goes to its neighbour.
  for (let i = parts.length - 1; i > 0; i--) {
    if (parts[i]!.end - parts[i]!.start < MIN_PART_BYTES) {
      parts[i - 1]!.end = parts[i]!.end;
      parts.splice(i, 1);
    }
  }
  if (!sizeKnown) parts[parts.length - 1]!.end = Infinity;
  return parts;
}

/** How long a candidate alone would take, ms, up to half as long again by its spread (the order of choice only). */
function aloneMs(candidate: SplitCandidate, bytes: number): number {
  return (candidate.waitMs + (bytes / candidate.bytesPerS) * 1000) * (1 + (candidate.spread ?? 0) / 2);
}

/** Where a relay's held bytes will end at `atMs` from now. */
function relayEndAt(candidate: SplitCandidate, atMs: number): number {
  return candidate.relay!.heldBytes + (candidate.relay!.growthBytesPerS * atMs) / 1000;
}

/** Front to back: what each chosen candidate brings within `withinMs` (relays only below what they will hold). */
function coverage(chosen: readonly SplitCandidate[], bytes: number, withinMs: number): { covered: number; parts: SplitPart[] } {
  const parts: SplitPart[] = [];
  let at = 0;
  for (const candidate of chosen) {
    if (at >= bytes) break;
    let can = (candidate.bytesPerS * Math.max(0, withinMs - candidate.waitMs)) / 1000;
    if (candidate.relay) can = Math.min(can, relayEndAt(candidate, withinMs) - at);
    const take = Math.floor(Math.min(can, bytes - at));
    if (take <= 0) continue;
    parts.push({ id: candidate.id, start: at, end: at + take });
    at += take;
  }
  return { covered: at, parts };
}
