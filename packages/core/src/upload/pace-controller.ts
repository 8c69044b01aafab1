// How fast this viewer uploads: the pace a delay-based controller (in the spirit of LEDBAT) finds.
// It grows while the uplink's queueing delay (peers time our pings) stays under a small target,
// doubling every second until the uplink first pushes back (slow start), and falls fast when the
// delay rises; what the channels took and what the receivers got cap it where the link is the
// limit. The governor (upload-governor.ts) holds the bucket and the order; this holds the rate.
import { PACE_UNMEASURED } from '../wire/peer-protocol.js';
import type { LinkReading } from './link-window.js';
import { MIN_PACE_BYTES_PER_S, TARGET_QUEUE_DELAY_MS, nextPace } from './pace.js';

/**
 * After this long without uploading, a pace below the start pace probes again, in slow start (so
 * not advertised as measured): what was learnt may be stale, and a pace too low to offer anyone
 * would never be used, so never raised again. It probes from where it is, not from the start pace:
 * on a 125 kbit/s uplink a restart at 16 KiB/s filled the router's queue each time, and the
 * viewer's own requests waited behind it (browser swarm, `--level 0` realistic). Slow start ends
 * where the uplink last pushed back while uploads used the whole pace (TCP's ssthresh): doubling
 * past it filled a slow uplink's router queue within a second (64 KiB/s to 170 kB/s on a 37 kB/s
 * uplink in the browser swarm).
 */
const IDLE_RESTART_MS = 5000;
/**
 * While we upload to a peer, pings to it measure our uplink's queueing delay, this often; the
 * others are pinged every OTHER_PEER_PING_INTERVAL_MS, for our upload state. With no uploads only
 * the handshake's ping goes: an idle peer's pace does not change. Every message costs a home uplink
 * a packet and the peer's SCTP acknowledgement another: at a ping a second to every neighbour,
 * pings, pongs and the acknowledgements of both took about a tenth of a 125 kbit/s uplink in the
 * browser swarm.
 */
const PING_INTERVAL_MS = 1000;
/**
 * In slow start the pace doubles every second, and a reading a second old let it overshoot a
 * 125 kbit/s uplink twice over before the queue showed (browser swarm, realistic: 16 to 29 kB/s
 * on one 17 ms reading, then 1.8 s of queue and a newcomer's segment took 3 s): the peers we
 * upload to are pinged this often then, so each step is about a fifth.
 */
const PROBE_PING_INTERVAL_MS = 250;
const OTHER_PEER_PING_INTERVAL_MS = 4000;
/** Delivered below this share of the rate we sent at: the link, not the pace, limits uploads. */
const LINK_LIMITED_SHARE = 0.85;

export class PaceController {
  pace: number;
  /** Until the uplink first pushes back (delay over target, channels full, or receivers getting less), the pace doubles every second it is used. */
  slowStart = true;
  /** The uplink's queueing delay as last measured, ms, and when. */
  queueDelayMs: number | undefined;
  private queueDelayAtMs = -Infinity;
  /** The pace at which the uplink last pushed back while uploads used all of it (undefined: not yet). */
  private ceiling: number | undefined;
  /**
   * What the uplink carries, bytes/s, as the receivers' counts say: set when a busy window
   * delivered less than the pace (the link, not the pace, was the limit), raised when one delivered
   * more than it. Undefined until the link was seen to be the limit.
   */
  private linkBytesPerS: number | undefined;
  private controlledMs: number;
  /** Since the last step, uploads waited for tokens. */
  private paceLimited = false;

  constructor(
    nowMs: number,
    /** Where the pace starts, and restarts after idle: the start option, within the cap. */
    private readonly startPace: number,
    /** A hard cap from the options (0: none). */
    private readonly capBytesPerS: number,
  ) {
    this.pace = startPace;
    this.controlledMs = nowMs;
  }

  /** Uploads waited for the pace (not for the viewer's own downloads): it may grow on the next step. */
  heldBack(): void {
    this.paceLimited = true;
  }

  /** The pace the controller would have peers count on now (PACE_UNMEASURED in slow start): what the link delivered, not the probe. */
  advertised(yielding: boolean): number {
    if (yielding) return 0;
    if (this.slowStart) return PACE_UNMEASURED;
    return Math.round(Math.min(this.pace, this.linkBytesPerS ?? Infinity));
  }

  /** How soon a session pings its peer again while we upload (`toUploadTarget`: to that peer). */
  pingIntervalMs(toUploadTarget: boolean): number {
    if (!toUploadTarget) return OTHER_PEER_PING_INTERVAL_MS;
    return this.slowStart ? PROBE_PING_INTERVAL_MS : PING_INTERVAL_MS;
  }

  /** The queue now, as far as the last reading tells: a queue drains at most as fast as time passes (0 before the first). */
  queueDelayNowMs(nowMs: number): number {
    return Math.max(0, (this.queueDelayMs ?? 0) - (nowMs - this.queueDelayAtMs));
  }

  /** A delay the peers' fresh readings agree on: one step of the controller, and what a closed busy window says of the link. */
  step(delayMs: number, nowMs: number, reading: LinkReading | undefined): void {
    this.queueDelayMs = delayMs;
    this.queueDelayAtMs = nowMs;
    if (delayMs > TARGET_QUEUE_DELAY_MS) {
      this.slowStart = false;
      if (this.paceLimited) this.ceiling = this.pace;
    }
    const before = this.pace;
    this.pace = nextPace(this.pace, delayMs, nowMs - this.controlledMs, this.paceLimited, this.capBytesPerS, this.slowStart);
    if (this.slowStart && this.ceiling !== undefined && this.pace > this.ceiling) {
      this.pace = Math.max(before, this.ceiling);
      this.slowStart = false;
    }
    if (reading) this.learnLink(reading);
    this.controlledMs = nowMs;
    this.paceLimited = false;
  }

  /**
   * What the uplink showed (link-window.ts). Channels that filled up in a busy window took less
   * than the pace: the pace is what they carried (else peers are told a rate nobody gets). A
   * receiver that got our bytes more slowly than we sent them says the same of the link beyond the
   * channels (a router's queue filling): within a ping of it, rather than once the queue has grown
   * long enough for the delay readings to show.
   */
  private learnLink({ channelsBytesPerS, delivery }: LinkReading): void {
    if (channelsBytesPerS !== undefined) {
      this.slowStart = false;
      this.pace = Math.max(MIN_PACE_BYTES_PER_S, Math.min(this.pace, channelsBytesPerS * 1.1));
      this.ceiling = this.pace;
    }
    if (delivery === undefined) return;
    const { deliveredBytesPerS, sentBytesPerS } = delivery;
    if (deliveredBytesPerS < sentBytesPerS * LINK_LIMITED_SHARE) {
      // The pace ran past what the link carries (slow start doubling, or the probe between delay
      // readings): it comes back to a little over what got through, and slow start ends there.
      this.linkBytesPerS = Math.max(MIN_PACE_BYTES_PER_S, deliveredBytesPerS);
      this.pace = Math.max(MIN_PACE_BYTES_PER_S, Math.min(this.pace, deliveredBytesPerS * 1.1));
      if (this.slowStart) {
        this.slowStart = false;
        this.ceiling = this.pace;
      }
    } else if (this.linkBytesPerS !== undefined) {
      // The link took all we sent: it carries at least that (a faster link, or less cross traffic now).
      this.linkBytesPerS = Math.max(this.linkBytesPerS, deliveredBytesPerS);
    }
  }

  /** After IDLE_RESTART_MS without uploads, a pace below the start pace probes again (see there). */
  restartIfIdle(nowMs: number, lastBusyMs: number): void {
    // Uploads waiting on full channels are not idle: the uplink is as slow as the pace says.
    if (nowMs - lastBusyMs < IDLE_RESTART_MS || this.pace >= this.startPace || this.slowStart) return;
    this.slowStart = true;
    // The next step counts from here: the idle time before is no time at this pace.
    this.controlledMs = nowMs;
  }
}
