// How many viewers should fetch a new live segment from the origin at once: a share of the swarm
// sized to what its uplinks can spread before the segment is needed, independent of how many
// viewers there are. Pure. The rates give the share (deficitSeedShare) at most: from there an
// uplink that nobody asks pulls this viewer's own share down (idleSeedShare), so that a share
// judged from rates that were too low (browsers, at 63ef136: paces held far below the link made
// ρ small and nearly every viewer a seed, whose copies then sat unasked) does not hold.
//
// With k early origin copies and H whole-segment hops fitting between a segment's publication and
// its deadline, at most k·(2^H − 1) viewers can get it from peers: a share 2^−H of the swarm must
// start from the origin for the rest to be reached in time (H counted as a real number). And viewers' uplinks carry ρ times
// the stream's bitrate on average: where ρ < 1 they cannot pass on more than ρ of what the swarm
// plays, so 1 − ρ must come from the origin anyway, better at publication (while peers can still
// fetch from those copies) than at each deadline. The share is the larger of the two. One copy per
// neighbourhood, which rendezvous election gives (live-edge-seeding.ts), stays the floor.

/** One viewer of the neighbourhood: what its link delivers to peers, bytes/s (0: it does not upload). */
export interface NeighbourRate {
  uploadBytesPerS: number;
}

export interface SeedShareInput {
  /** The viewers this one knows whose rates are known (itself included); unmeasured ones are left out. */
  neighbourhood: readonly NeighbourRate[];
  /** The stream's bytes per second of media. */
  streamBytesPerS: number;
  /** The new segment's size, bytes. */
  segmentBytes: number;
  /** From now until HTTP must start for the new segment at the latest, ms: the time its P2P copies have. */
  windowMs: number;
  /** The share of a peer's advertised rate a transfer is planned at (the planner's slack). */
  rateSlack: number;
}

/**
 * The share of the swarm to fetch each new segment at publication, 0 (election alone) to 1, as the
 * rates say: `guess` is the larger of the deficit 1 − ρ and the hops' need 2^-H, `floor` the hops'
 * need alone (outcomes move the share above it, never below).
 */
export function deficitSeedShare(input: SeedShareInput): { guess: number; floor: number } {
  const { neighbourhood, streamBytesPerS, segmentBytes, windowMs, rateSlack } = input;
  const uploaders = neighbourhood.filter((viewer) => viewer.uploadBytesPerS > 0);
  if (uploaders.length === 0 || streamBytesPerS <= 0 || segmentBytes <= 0) return { guess: 0, floor: 0 };
  const supplied = uploaders.reduce((sum, viewer) => sum + viewer.uploadBytesPerS, 0);
  const rho = supplied / (neighbourhood.length * streamBytesPerS);
  const hopMs = (segmentBytes / ((supplied / uploaders.length) * rateSlack)) * 1000;
  // Hops as a real number: a window that fits most of a hop still lets most of a copy come from a
  // peer (the rest by a Range request), and the share should not jump as the window crosses a hop.
  const hops = Math.max(windowMs, 0) / hopMs;
  // Past 20 hops 2^-H is far below one copy per neighbourhood: election alone decides.
  const spread = hops >= 20 ? 0 : 2 ** -hops;
  return { guess: Math.min(1, Math.max(0, 1 - rho, spread)), floor: Math.min(1, spread) };
}

/** Uplink time idle (nobody asked) above this share says the neighbourhood has more supply than demand; below it, less. */
const IDLE_TARGET = 0.25;
/** How far one segment's idle time moves the cut, per unit of its distance from the target. */
const IDLE_GAIN = 0.1;

/**
 * How far below the rates' share (`ratesShare`) this viewer's own seed share goes, after a
 * segment's time in which its uplink was idle `idleShare` of the time: the cut grows while nobody
 * asks for what the uplink could send (more seeds than the uplinks can serve, whoever they are)
 * and heals while the uplink is busy. It never raises the share above the rates': a busy uplink is
 * also what seeding more makes, and must not feed on itself.
 */
export function nextIdleCut(cut: number, idleShare: number, ratesShare: number): number {
  return Math.min(ratesShare, Math.max(0, cut + IDLE_GAIN * (idleShare - IDLE_TARGET)));
}
