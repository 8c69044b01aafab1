// Our uplink's queueing delay, as the peers' answers to our pings measure it: the rise of each
// ping's one-way delay (the peer's receive clock minus our send clock, so an unknown clock offset
// is included) over its minimum, and a pong that is late by more than the peer's shortest round
// trip. The pace controller drains on it past its guard, and the engine's HTTP budgets count it
// (upload-governor.ts, pace-controller.ts).

/** A reading older than this says nothing about the queue now (peers we upload to are pinged every second or faster, others every 4 s). */
const SAMPLE_MAX_AGE_MS = 1500;
/** A peer's first samples set its base; its delays count from this many on (a first sample taken behind a full queue would read as no queue). */
const MIN_BASE_SAMPLES = 3;
/** One-way delay base: the minimum over two windows of this length (clock offsets cancel; a stale base ages out). */
const BASE_WINDOW_MS = 30_000;

/** One peer's view of our uplink: its one-way delay base, its latest reading, and its pongs' timing. */
class PeerDelay {
  private current = Infinity;
  private previous = Infinity;
  private windowStartMs: number;
  latestMs = Infinity;
  latestAtMs = -Infinity;
  samples = 0;
  /** The shortest round trip of a ping to this peer, on our clock. */
  minRttMs = Infinity;
  /** When the oldest ping still unanswered went out. */
  unansweredSinceMs: number | undefined;

  constructor(nowMs: number) {
    this.windowStartMs = nowMs;
  }

  add(oneWayMs: number, nowMs: number): void {
    if (nowMs - this.windowStartMs >= BASE_WINDOW_MS) {
      this.previous = this.current;
      this.current = Infinity;
      this.windowStartMs = nowMs;
    }
    this.current = Math.min(this.current, oneWayMs);
    this.samples++;
    this.reading(oneWayMs - Math.min(this.current, this.previous), nowMs);
  }

  reading(queueMs: number, nowMs: number): void {
    this.latestMs = queueMs;
    this.latestAtMs = nowMs;
  }
}

export class UplinkDelay {
  private readonly peers = new Map<string, PeerDelay>();

  /**
   * A pong: the one-way delay of the ping it answers and, when known, its round trip on our clock.
   * Returns the queueing delay now as the fresh readings agree (undefined while there are none).
   */
  pong(peerId: string, oneWayMs: number, rttMs: number | undefined, nowMs: number): number | undefined {
    const peer = this.peer(peerId, nowMs);
    peer.add(oneWayMs, nowMs);
    peer.unansweredSinceMs = undefined;
    if (rttMs !== undefined && rttMs >= 0) peer.minRttMs = Math.min(peer.minRttMs, rttMs);
    return this.agreed(nowMs);
  }

  /**
   * A ping goes out to the peer. If its previous one is still unanswered beyond the peer's shortest
   * round trip, the queue is at least that much now: a queue that grows fast holds back the very
   * pongs that would measure it (browser swarm, 125 kbit/s uplinks: 2.5 s without a reading while
   * the queue went from 0.4 to 1.8 s), so the late pong counts as a reading of what it shows so far.
   * Returns the agreed delay when that raised this peer's reading, else undefined.
   */
  ping(peerId: string, nowMs: number): number | undefined {
    const peer = this.peer(peerId, nowMs);
    const since = peer.unansweredSinceMs;
    peer.unansweredSinceMs ??= nowMs;
    if (since === undefined || peer.samples < MIN_BASE_SAMPLES || peer.minRttMs === Infinity) return undefined;
    const lateMs = nowMs - since - peer.minRttMs;
    if (lateMs <= peer.latestMs && nowMs - peer.latestAtMs <= SAMPLE_MAX_AGE_MS) return undefined;
    peer.reading(lateMs, nowMs);
    return this.agreed(nowMs);
  }

  forget(peerId: string): void {
    this.peers.delete(peerId);
  }

  private peer(peerId: string, nowMs: number): PeerDelay {
    let peer = this.peers.get(peerId);
    if (!peer) this.peers.set(peerId, (peer = new PeerDelay(nowMs)));
    return peer;
  }

  /**
   * The uplink is shared by every peer, so the recent readings should agree: their median counts,
   * which one peer lying in its pongs cannot move far (the smallest would let any one peer talk us
   * into filling our uplink). Recent ones are mostly from the peers we upload to (pinged every
   * second, the others every 4 s): a liar that is the only one of them can hide our queue until
   * the player's low buffer stops uploads, and one that never answers can slow our uploads down
   * (never our playback).
   */
  private agreed(nowMs: number): number | undefined {
    const fresh: number[] = [];
    for (const peer of this.peers.values()) {
      if (peer.samples >= MIN_BASE_SAMPLES && nowMs - peer.latestAtMs <= SAMPLE_MAX_AGE_MS) fresh.push(peer.latestMs);
    }
    if (fresh.length === 0) return undefined;
    fresh.sort((a, b) => a - b);
    return fresh[(fresh.length - 1) >> 1]!;
  }
}
