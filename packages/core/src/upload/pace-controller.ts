// How fast this viewer uploads: the uplink's bottleneck rate as the receivers measured it (a
// windowed max of delivery-rate samples, delivery-rate.ts), and a pace around it, in the spirit of
// BBR. In startup the pace doubles every second it is used, until the delivered rate stops growing
// or falls short of what we sent; from then on the pace cycles around the estimate (a short probe
// above it, a drain below it, cruise at it), so that a faster link shows within a few seconds and
// the router's queue stays short. The estimate is held through idle time: a viewer that nobody
// asked for a while still offers what its link carries. Queueing delay (peers time our pings) is
// only a guard: a JavaScript timestamp reads event-loop lag and the receiver's own downlink queue
// as ours, so it drains a queue that grew far past the target but never sets the rate.
import { PACE_UNMEASURED } from '../wire/peer-protocol.js';
import type { DeliverySample } from './delivery-rate.js';
import { MIN_PACE_BYTES_PER_S } from './pace.js';

/** The estimate is the max of the samples over this window (a link's rate changes more slowly; a burst of app-limited or lagged samples cannot lower it). */
const MAX_FILTER_MS = 10_000;
/** Startup ends when the delivered rate grew by less than this over STARTUP_FLAT_SAMPLES samples in a row (BBR's "full pipe"). */
const STARTUP_GROWTH = 1.25;
const STARTUP_FLAT_SAMPLES = 3;
/**
 * In startup the pace grows to at most this many times what the receivers showed so far (or the
 * start pace before any sample): it probes past the link, by how far a sample can show, and a
 * demand that only ever used part of it (app-limited) cannot push it up for ever.
 */
const STARTUP_GAIN = 2;
/** Delivered below this share of what we sent at: the pace passed the link. */
const LINK_LIMITED_SHARE = 0.85;
/** After startup, a span sent this far above the estimate and delivered at least LINK_KEPT_UP_SHARE of it starts startup again. */
const REPROBE_ABOVE = 1.15;
const LINK_KEPT_UP_SHARE = 0.95;
/** The gain cycle after startup: probe above the estimate, drain what the probe queued, cruise. */
const GAIN_CYCLE = [1.15, 0.85, 1, 1, 1, 1];
const PHASE_MS = 500;
/** A queueing delay the peers agree on above this drains at once (far above timer lag and a receiver's downlink queue). */
export const QUEUE_GUARD_MS = 300;
const DRAIN_GAIN = 0.75;
/** A queue past the guard cuts the estimate by this much (each time, once a drain has ended). */
const GUARD_CUT = 0.85;
/** Requesters are told this share of the estimate: the rest is the viewer's own traffic (acknowledgements, requests, control). */
const ADVERTISED_SHARE = 0.9;
/** While we upload to a peer its pings sample the link this often (in startup every 250 ms, so that each doubling is seen); others every 4 s. */
const PING_INTERVAL_MS = 1000;
const STARTUP_PING_INTERVAL_MS = 250;
const OTHER_PEER_PING_INTERVAL_MS = 4000;

export class PaceController {
  /** Pace uploads may use now, bytes/s. */
  pace: number;
  startup = true;
  /** The uplink's queueing delay as last measured, ms, and when. */
  queueDelayMs: number | undefined;
  private queueDelayAtMs = -Infinity;
  /** Non-app-limited samples and when (the max filter's window); app-limited ones enter only above the max. */
  private samples: { bytesPerS: number; atMs: number }[] = [];
  /** The estimate: held when the window empties (the link did not get slower because nobody asked). */
  private bottleneckBytesPerS: number | undefined;
  /** Startup: the best rate seen and how many samples since it grew by STARTUP_GROWTH. */
  private startupBest = 0;
  private flatSamples = 0;
  /** Since the last sample, uploads waited for tokens. */
  private paceLimited = false;
  private grownMs: number;
  private cycleStartMs = 0;
  private drainUntilMs = -Infinity;
  private readonly startPace: number;

  constructor(
    nowMs: number,
    startPace: number,
    /** A hard cap from the options (0: none). */
    private readonly capBytesPerS: number,
  ) {
    this.startPace = this.capped(startPace);
    this.pace = this.startPace;
    this.grownMs = nowMs;
  }

  /** Uploads waited for the pace: in startup it may grow. */
  heldBack(nowMs: number): void {
    this.paceLimited = true;
    if (!this.startup) return;
    // Doubles per second of use, counted from the last growth (an idle second is no evidence).
    const elapsedMs = Math.min(nowMs - this.grownMs, 1000);
    if (elapsedMs <= 0) return;
    const ceiling = STARTUP_GAIN * Math.max(this.startPace, this.bottleneckBytesPerS ?? 0);
    this.pace = this.capped(Math.min(ceiling, Math.max(this.pace, this.pace * 2 ** (elapsedMs / 1000))));
    this.grownMs = nowMs;
  }

  /**
   * The channels hold all they may while uploads have more to send: SCTP or the link takes less
   * than the pace. The pace is not what held uploads back, but the span is busy: startup's "more
   * pace brought no more delivery" counts it.
   */
  channelsFull(): void {
    this.paceLimited = true;
  }

  /** Uploads did not use the pace for a while: startup's growth counts from now on. */
  idle(nowMs: number): void {
    this.grownMs = nowMs;
  }

  /** The rate peers may count on (PACE_UNMEASURED in startup): the estimate less the viewer's own traffic. */
  advertised(yielding: boolean): number {
    if (yielding) return 0;
    if (this.startup || this.bottleneckBytesPerS === undefined) return PACE_UNMEASURED;
    return Math.max(1, Math.round(this.capped(this.bottleneckBytesPerS) * ADVERTISED_SHARE));
  }

  /** What the uplink carries as far as the receivers showed, bytes/s (undefined before any sample). */
  get estimateBytesPerS(): number | undefined {
    return this.bottleneckBytesPerS;
  }

  /**
   * How soon a peer session pings its peer again while this engine uploads: its pongs sample what
   * our uplink delivers (`toUploadTarget`: we upload to that peer) and tell it our upload state.
   */
  pingIntervalMs(toUploadTarget: boolean): number {
    if (!toUploadTarget) return OTHER_PEER_PING_INTERVAL_MS;
    return this.startup ? STARTUP_PING_INTERVAL_MS : PING_INTERVAL_MS;
  }

  /**
   * The uplink's queue now, as far as the last reading tells (pings stop with uploads, so a reading
   * can be old): a queue drains at most as fast as time passes (0 before the first).
   */
  queueDelayNowMs(nowMs: number): number {
    return Math.max(0, (this.queueDelayMs ?? 0) - (nowMs - this.queueDelayAtMs));
  }

  /** A queueing delay the peers agree on: above the guard, the queue drains (startup ends there). */
  delay(delayMs: number, nowMs: number): void {
    this.queueDelayMs = delayMs;
    this.queueDelayAtMs = nowMs;
    if (delayMs <= QUEUE_GUARD_MS) return;
    if (this.startup) this.endStartup(nowMs);
    // A standing queue is proof the pace ran past the link: the estimate was too high (samples
    // from noisy JavaScript timestamps), so it comes down and the window starts over from here.
    // Once a drain is under way, later readings of the same queue do not cut again.
    if (nowMs >= this.drainUntilMs && this.bottleneckBytesPerS !== undefined) {
      this.bottleneckBytesPerS *= GUARD_CUT;
      this.samples = [];
    }
    this.drainUntilMs = nowMs + PHASE_MS;
    this.setPace(nowMs);
  }

  /** A delivery-rate sample (delivery-rate.ts). */
  delivered(sample: DeliverySample, nowMs: number): void {
    const { bytesPerS, sentBytesPerS, appLimited } = sample;
    if (!appLimited || bytesPerS > Math.max(this.maxOver(nowMs), this.bottleneckBytesPerS ?? 0)) this.samples.push({ bytesPerS, atMs: nowMs });
    const best = this.maxOver(nowMs);
    if (best > 0) this.bottleneckBytesPerS = best;
    if (this.startup) this.startupStep(bytesPerS, appLimited, sentBytesPerS, nowMs);
    else if (!appLimited && sentBytesPerS > best * REPROBE_ABOVE && bytesPerS >= sentBytesPerS * LINK_KEPT_UP_SHARE) this.restartStartup(bytesPerS, nowMs);
    this.paceLimited = false;
    this.setPace(nowMs);
  }

  /** Startup ends when more pace no longer brings more delivery (BBR), or at once when the link took less than we sent. */
  private startupStep(bytesPerS: number, appLimited: boolean, sentBytesPerS: number, nowMs: number): void {
    if (!appLimited && bytesPerS < sentBytesPerS * LINK_LIMITED_SHARE) return this.endStartup(nowMs);
    if (bytesPerS >= this.startupBest * STARTUP_GROWTH) {
      this.startupBest = bytesPerS;
      this.flatSamples = 0;
    } else if (!appLimited && this.paceLimited && ++this.flatSamples >= STARTUP_FLAT_SAMPLES) this.endStartup(nowMs);
  }

  /**
   * A probe above the estimate got through whole: the link has room the estimate does not know
   * (it was learnt while demand was low, or the link got faster). Startup again from here, rather
   * than a quarter more per gain cycle (from 4 kB/s to a 4 MB/s link took a minute and a half).
   */
  private restartStartup(bytesPerS: number, nowMs: number): void {
    this.startup = true;
    this.startupBest = bytesPerS;
    this.flatSamples = 0;
    this.grownMs = nowMs;
  }

  private endStartup(nowMs: number): void {
    this.startup = false;
    this.cycleStartMs = nowMs;
    // What startup queued beyond the link drains first.
    this.drainUntilMs = nowMs + PHASE_MS;
  }

  /** The pace for now: in startup as grown; after it, the estimate times the gain cycle's phase. */
  private setPace(nowMs: number): void {
    if (this.startup || this.bottleneckBytesPerS === undefined) return;
    const gain = nowMs < this.drainUntilMs ? DRAIN_GAIN : GAIN_CYCLE[Math.floor((nowMs - this.cycleStartMs) / PHASE_MS) % GAIN_CYCLE.length]!;
    this.pace = this.capped(this.bottleneckBytesPerS * gain);
  }

  /** Whether the gain cycle probes above the estimate now: the governor pings at the probe's edges, so that a sample spans the probe alone. */
  probing(nowMs: number): boolean {
    if (this.startup || this.bottleneckBytesPerS === undefined || nowMs < this.drainUntilMs) return false;
    return Math.floor((nowMs - this.cycleStartMs) / PHASE_MS) % GAIN_CYCLE.length === 0;
  }

  /** The pace as the gain cycle has it at `nowMs` (the governor asks on each pump: phases turn without a sample). */
  paceAt(nowMs: number): number {
    this.setPace(nowMs);
    return this.pace;
  }

  /** The windowed max of the samples (0 when none is in the window). */
  private maxOver(nowMs: number): number {
    while (this.samples.length > 0 && nowMs - this.samples[0]!.atMs > MAX_FILTER_MS) this.samples.shift();
    let best = 0;
    for (const sample of this.samples) best = Math.max(best, sample.bytesPerS);
    return best;
  }

  private capped(bytesPerS: number): number {
    const capped = this.capBytesPerS > 0 ? Math.min(this.capBytesPerS, bytesPerS) : bytesPerS;
    return Math.max(MIN_PACE_BYTES_PER_S, capped);
  }
}
