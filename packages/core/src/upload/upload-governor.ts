// The upload governor: how fast, in what order and whether this viewer uploads at all. Uploads
// share the viewer's uplink with its own playback (HTTP requests, the acknowledgements its
// downloads need); a home router's uplink buffer holds up to about a second of traffic, and
// everything the viewer sends waits behind it. So uploads are paced by one token bucket over
// every peer, at the rate the pace controller finds (pace-controller.ts: around the uplink's
// bottleneck rate as the receivers measured it, delivery-rate.ts). Requests are served one at a
// time, earliest deadline first, each taken only if it can be met in time; none while the
// viewer's own buffer is low, and a little below the pace while the player waits on one of the
// viewer's own origin downloads (its acknowledgements need the uplink). What SCTP holds unsent is
// bounded too, so a cancel or a yield takes effect within a fraction of a second.
import { NOT_SERVING, PACE_UNMEASURED, measuredPace } from '../wire/peer-protocol.js';
import { MIN_CHUNK_BYTES, chunkBytesFor } from './pace.js';
import type { Clock, TimerId } from '../types.js';
import { admissionWaitMs, type QueuedUpload } from './admission.js';
import { DeliveryRate } from './delivery-rate.js';
import { PaceController } from './pace-controller.js';
import { UplinkDelay } from './uplink-delay.js';
import { UplinkUsageMeter, type UplinkUsage } from './uplink-usage.js';

/**
 * The bucket holds at most this much pace: a pacing timer that fires late (100 ms and more with
 * several browsers on a busy machine) still sends what accrued, and a burst this short queues at
 * the router for no longer than it lasts.
 */
const BURST_S = 0.2;
/** What a download's TCP acknowledgements take of the uplink, as a share of its rate (setOriginDownloads). */
const DOWNLOAD_ACK_SHARE = 0.05;
/** The reserve for the viewer's own downloads never takes more than this share of the pace: uploads slow down, never stop, for a download. */
const MAX_RESERVE_SHARE = 0.4;
/**
 * The pacing timer's period: each wake sends what accrued since the last. Wakes fall on a grid of
 * this period, so that many engines on one clock (the simulator) share their instants.
 */
const WAKE_GRID_MS = 20;
/**
 * Bytes SCTP may hold unsent over all peers, as time at the current pace (at least one chunk), and
 * at most SEND_BUFFER_MAX_BYTES: the peer protocol's small messages (have, fetching, pongs) wait
 * behind them, and a pace still probing upward must not buy seconds of queue.
 */
const SEND_BUFFER_S = 0.1;
const SEND_BUFFER_MAX_BYTES = 128 * 1024;
/** In startup (the uplink's rate not known yet), a new request is taken unless it would wait longer than this behind the backlog. */
export const MAX_UPLOAD_WAIT_MS = 4000;

/** One peer session's side of uploading, as the governor sees it. */
export interface UploadSource {
  /** Bytes its channel holds unsent. */
  readonly bufferedAmount: number;
  /** The deadline of its most urgent upload that can send now, or undefined when none can. */
  readonly nextDeadlineMs: number | undefined;
  /** Payload bytes its queued uploads still have to send. */
  readonly backlogBytes: number;
  /** Its queued uploads: what each still has to send, and by when. */
  queued(): Iterable<{ remainingBytes: number; deadlineMs: number }>;
  /** Sends up to `maxBytes` of its most urgent upload; returns the payload bytes sent. */
  sendChunk(maxBytes: number): number;
  /** Uploading (over any source) began after a pause, yielding ended, or a fresh reading is wanted: the source pings its peer now (the ping says our pace). */
  uploading(): void;
  /** A burst of uploads to it started (after its first chunk) or ended: it pings its peer now, so that a delivery sample spans the burst alone. */
  burstEdge(): void;
}

export interface UploadGovernorStats {
  /** The pace uploads may use now, bytes/s (0 while yielding or with upload off). */
  paceBytesPerS: number;
  /** What the uplink delivers as the receivers measured it, bytes/s (undefined before the first sample). */
  linkEstimateBytesPerS: number | undefined;
  /** What peers are told a new request gets, bytes/s (undefined while the uplink's rate is being found, 0 while yielding). */
  advertisedBytesPerS: number | undefined;
  /** The uplink's queueing delay as last measured, ms (undefined before the first sample). */
  queueDelayMs: number | undefined;
  /** Uploads are paused for the viewer's own playback. */
  yielding: boolean;
  /** Of the pace, what the viewer's own downloads need now (uploads use the rest), bytes/s. */
  downloadReserveBytesPerS: number;
  /** Where the uplink's time went: why uploads did not fill it, and uploads the requesters cancelled. */
  uplink: UplinkUsage;
}

export class UploadGovernor {
  /** The pace around the uplink's rate; the sessions read its ping cadence, the plan its queueing delay. */
  readonly controller: PaceController;
  private tokens = 0;
  private refilledMs: number;
  private readonly sources = new Set<UploadSource>();
  private readonly delay = new UplinkDelay();
  private readonly delivery = new DeliveryRate();
  private yielding = false;
  /** Where the uplink's time went (stats), and the uploads the requesters cancelled (the sessions tell it). */
  readonly usage: UplinkUsageMeter;
  /** Uplink the viewer's own downloads need now (their acknowledgements), bytes/s: uploads use the pace less this. */
  private downloadBytesPerS = 0;
  private timer: TimerId | undefined;
  /** When data was last sent, over any source. */
  lastSentMs = -Infinity;
  /** The sources sent to since uploads last ran dry: their pings bracket the burst (delivery-rate.ts). */
  private readonly burst = new Set<UploadSource>();
  /** The controller probed above its estimate at the last pump. */
  private probing = false;

  constructor(
    private readonly clock: Clock,
    /** A hard cap from the options (0: none). */
    capBytesPerS: number,
    /** Pace before the first delivery sample (default option: 128 kbit/s, below nearly every home uplink; it doubles every second it is used until the receivers show the link's rate). */
    initialPaceBytesPerS: number,
  ) {
    this.refilledMs = clock.now();
    this.usage = new UplinkUsageMeter(clock.now());
    this.controller = new PaceController(clock.now(), initialPaceBytesPerS, capBytesPerS);
  }

  get stats(): UploadGovernorStats {
    const { controller } = this;
    const advertised = controller.advertised(this.yielding);
    return {
      paceBytesPerS: this.yielding ? 0 : Math.round(controller.paceAt(this.clock.now())),
      linkEstimateBytesPerS: controller.estimateBytesPerS === undefined ? undefined : Math.round(controller.estimateBytesPerS),
      advertisedBytesPerS: measuredPace(advertised),
      queueDelayMs: controller.queueDelayMs, yielding: this.yielding,
      downloadReserveBytesPerS: Math.round(this.reserve(controller.pace)), uplink: this.usage.snapshot(this.clock.now()),
    };
  }

  /**
   * What peers are told (ping/pong): the rate a new request would get, and the backlog ahead of
   * it. While the uplink's rate is being found it is not advertised (PACE_UNMEASURED), or
   * requesters would judge every transfer by a start value; after that, what the link delivers
   * (held while nobody asks: capacity, not current use).
   */
  get advertised(): { paceBytesPerS: number; backlogBytes: number } {
    return { paceBytesPerS: this.controller.advertised(this.yielding), backlogBytes: this.queuedBytes() };
  }

  /**
   * A peer's pong to our ping sent at `echoMs` says how many bytes it has received from us in all
   * (mod 2^32), at its clock's `remoteMs` when the ping arrived: a sample of what our uplink
   * delivered (delivery-rate.ts).
   */
  delivered(peerId: string, echoMs: number, remoteMs: number, cumulativeBytes: number): void {
    const sample = this.delivery.pong(peerId, echoMs, remoteMs, cumulativeBytes);
    if (sample) this.controller.delivered(sample, this.clock.now());
  }

  /**
   * Whether a new request of `bytes` needed by `deadlineMs` can be met: served earliest deadline
   * first at the rate the uplink delivers, it must finish in time without making an upload with a
   * later deadline late that was on time. Returns undefined when it can, else how long it would
   * wait before its first byte (NOT_SERVING while uploads yield to the viewer's own playback).
   * While the rate is being found, a request is taken unless the backlog is long.
   */
  admit(bytes: number, deadlineMs: number): number | undefined {
    if (this.yielding) return NOT_SERVING;
    const advertised = this.controller.advertised(false);
    if (advertised === PACE_UNMEASURED) {
      const waitMs = this.waitBehindBacklogMs();
      return waitMs <= MAX_UPLOAD_WAIT_MS ? undefined : waitMs;
    }
    const queue: QueuedUpload[] = [];
    for (const source of this.sources) for (const upload of source.queued()) queue.push(upload);
    return admissionWaitMs(queue, bytes, deadlineMs, this.clock.now(), advertised);
  }

  /** How long everything queued takes to send at the pace, ms. */
  waitBehindBacklogMs(): number {
    return (this.queuedBytes() / Math.max(this.controller.pace, MIN_CHUNK_BYTES)) * 1000;
  }

  /**
   * The player waits on the viewer's own origin download, at this rate now, bytes/s (0: none).
   * Its TCP acknowledgements need about DOWNLOAD_ACK_SHARE of it on the uplink (the browser
   * swarm's HTTP-only viewers sent 15-20 kbit/s while downloading 355-442 kbit/s); queued behind
   * uploads they slow the very download playback waits on. So uploads leave that much of the pace,
   * at most MAX_RESERVE_SHARE of it: a 2 Mbit/s download on a 300 kbit/s uplink slows uploads, and
   * never stops them (a reserve as large as the pace had every viewer's uplink shut at each
   * publication).
   */
  setOriginDownloads(bytesPerS: number): void {
    if (bytesPerS === this.downloadBytesPerS) return;
    this.downloadBytesPerS = bytesPerS;
    this.pump();
  }

  private reserve(pace: number): number {
    return Math.min(this.downloadBytesPerS * DOWNLOAD_ACK_SHARE, pace * MAX_RESERVE_SHARE);
  }

  /** The viewer's own playback needs the uplink (buffer low): pause every upload until told otherwise. */
  setYielding(yielding: boolean): void {
    if (yielding === this.yielding) return;
    this.yielding = yielding;
    if (yielding) {
      this.delivery.appLimited();
      return this.usage.enter('yielding', this.clock.now());
    }
    // Our peers heard pace 0 while we yielded, and never ask a peer at pace 0: each source pings
    // its peer now with our pace (a peer we do not upload to is not pinged otherwise).
    for (const source of this.sources) source.uploading();
    this.pump();
  }

  /**
   * A peer answered our ping: the one-way delay it measured (its receive clock minus our send
   * clock), and the round trip on our clock when known. The controller drains on a queue the
   * fresh readings agree on (uplink-delay.ts).
   */
  delaySample(peerId: string, oneWayMs: number, rttMs?: number): void {
    const now = this.clock.now();
    const delayMs = this.delay.pong(peerId, oneWayMs, rttMs, now);
    if (delayMs !== undefined) this.controller.delay(delayMs, now);
  }

  /** A ping goes out to the peer, saying `wireSentMs`, after `sentHere` payload bytes to it in all: a previous one still unanswered may tell that the queue grew. */
  pingSent(peerId: string, wireSentMs: number, sentHere: number): void {
    const now = this.clock.now();
    this.delivery.pingSent(peerId, wireSentMs, sentHere);
    const delayMs = this.delay.ping(peerId, now);
    if (delayMs !== undefined) this.controller.delay(delayMs, now);
  }

  forgetPeer(peerId: string): void {
    this.delay.forget(peerId);
    this.delivery.forget(peerId);
  }

  add(source: UploadSource): void {
    this.sources.add(source);
  }

  remove(source: UploadSource): void {
    this.sources.delete(source);
    this.burst.delete(source);
  }

  /** Sends what the pace allows now, the earliest deadline first; sets a timer for the rest. */
  pump(): void {
    if (this.timer !== undefined || this.yielding) return;
    const now = this.clock.now();
    const fullPace = this.controller.paceAt(now);
    const probing = this.controller.probing(now);
    if (probing !== this.probing) {
      // A probe's edges: the sources of the burst under way ping, so that a sample spans the probe alone.
      this.probing = probing;
      for (const source of this.burst) source.burstEdge();
    }
    const reserve = this.reserve(fullPace);
    const pace = fullPace - reserve;
    // Sending below the pace for the viewer's own downloads, a sample says less than the link carries.
    if (reserve > 0) this.delivery.appLimited();
    let sentBytes = 0;
    const chunk = chunkBytesFor(pace);
    this.tokens = Math.min(Math.max(chunk, pace * BURST_S), this.tokens + ((now - this.refilledMs) / 1000) * pace);
    this.refilledMs = now;
    const sendBufferBytes = Math.max(chunk, Math.min(pace * SEND_BUFFER_S, SEND_BUFFER_MAX_BYTES));
    for (;;) {
      let unsent = 0;
      let next: UploadSource | undefined;
      let nextDeadlineMs = Infinity;
      for (const source of this.sources) {
        unsent += source.bufferedAmount;
        const deadlineMs = source.nextDeadlineMs;
        if (deadlineMs !== undefined && (!next || deadlineMs < nextDeadlineMs)) {
          next = source;
          nextDeadlineMs = deadlineMs;
        }
      }
      if (!next) {
        // The burst's closing pings go out before the span turns app-limited.
        for (const source of this.burst) source.burstEdge();
        this.burst.clear();
        this.delivery.appLimited();
        this.controller.idle(now);
        return this.usage.enter(this.queuedBytes() > 0 ? 'relay' : 'idle', now, sentBytes);
      }
      if (unsent >= sendBufferBytes) {
        // SCTP cannot send as fast as we pace (the uplink or its congestion window is the limit): wait for it.
        this.controller.channelsFull();
        this.usage.enter('full', now, sentBytes);
        return this.wakeIn((unsent / pace) * 500);
      }
      if (this.tokens < chunk) {
        if (reserve === 0) this.controller.heldBack(now);
        this.usage.enter('paced', now, sentBytes);
        return this.wakeIn(((chunk - this.tokens) / pace) * 1000);
      }
      const sent = next.sendChunk(chunk);
      this.tokens -= sent;
      this.delivery.sent(sent);
      sentBytes += sent;
      if (sent > 0) this.sent(now);
      if (sent > 0 && !this.burst.has(next)) {
        this.burst.add(next);
        next.burstEdge();
      }
    }
  }

  /** Payload bytes the queued uploads still have to send, over every peer. */
  private queuedBytes(): number {
    let bytes = 0;
    for (const source of this.sources) bytes += source.backlogBytes;
    return bytes;
  }

  private sent(now: number): void {
    const resumed = now - this.lastSentMs > 2000;
    this.lastSentMs = now;
    if (resumed) for (const source of this.sources) source.uploading();
  }

  private wakeIn(delayMs: number): void {
    const now = this.clock.now();
    const atMs = Math.ceil((now + Math.max(delayMs, 1)) / WAKE_GRID_MS) * WAKE_GRID_MS;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, atMs - now);
  }

  destroy(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.sources.clear();
    this.burst.clear();
  }
}
