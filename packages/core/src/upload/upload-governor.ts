// The upload governor: how fast, in what order and whether this viewer uploads at all. Uploads
// share the viewer's uplink with its own playback (HTTP requests, the acknowledgements its
// downloads need); a home router's uplink buffer holds up to about a second of traffic, and
// everything the viewer sends waits behind it. So uploads are paced by one token bucket over
// every peer, at the rate the pace controller finds (pace-controller.ts: it grows while the
// uplink's queueing delay, measured by peers from our pings' one-way delay, stays under a small
// target, and falls fast when the delay rises). Requests are served one at a time,
// earliest deadline first, each taken only if it can be met in time; none while the viewer's own
// buffer is low, and below the pace by what the viewer's own downloads need of the uplink while
// they run (the engine says both). What SCTP holds unsent is bounded too, so a cancel or a yield
// takes effect within a fraction of a second.
import { NOT_SERVING, PACE_UNMEASURED } from '../wire/peer-protocol.js';
import { MIN_CHUNK_BYTES, TARGET_QUEUE_DELAY_MS, chunkBytesFor } from './pace.js';
import type { Clock, TimerId } from '../types.js';
import { admissionWaitMs, type QueuedUpload } from './admission.js';
import { LinkWindow } from './link-window.js';
import { PaceController } from './pace-controller.js';
import { UplinkDelay } from './uplink-delay.js';
import { UplinkUsageMeter, type UplinkUsage } from './uplink-usage.js';

/** The bucket holds at most this much pace: bursts stay short (a burst waits in the router's queue). */
const BURST_S = 0.05;
/** What a download's TCP acknowledgements take of the uplink, as a share of its rate (setOriginDownloads). */
const DOWNLOAD_ACK_SHARE = 0.05;
/**
 * The pacing timer's period: each wake sends what accrued since the last. Wakes fall on a grid of
 * this period, so that many engines on one clock (the simulator) share their instants.
 */
const WAKE_GRID_MS = 20;
/** Bytes SCTP may hold unsent over all peers, as time at the current pace (at least one chunk). */
const SEND_BUFFER_S = 0.1;
/** Every peer is pinged at once at most this often when one peer's reading shows a queue the others' do not. */
const ASK_ALL_INTERVAL_MS = 1000;
/** In slow start (the uplink's rate not known yet), a new request is taken unless it would wait longer than this behind the backlog. */
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
}

export interface UploadGovernorStats {
  /** The pace uploads may use now, bytes/s (0 while yielding or with upload off). */
  paceBytesPerS: number;
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
  private readonly controller: PaceController;
  private tokens = 0;
  private refilledMs: number;
  private readonly sources = new Set<UploadSource>();
  private readonly delay = new UplinkDelay();
  /** What the channels took and the receivers got, over windows in which uploads always had more to send. */
  private readonly link: LinkWindow;
  private yielding = false;
  private readonly usage: UplinkUsageMeter;
  /** Uplink the viewer's own downloads need now (their acknowledgements), bytes/s: uploads use the pace less this. */
  private reserve = 0;
  private timer: TimerId | undefined;
  /** When every peer was last asked for a fresh reading (delaySample). */
  private askedAllMs = -Infinity;
  /** When data was last sent, over any source. */
  lastSentMs = -Infinity;
  /** When an upload last had data to send (sent, or waiting for tokens or for full channels). */
  private lastBusyMs = -Infinity;

  constructor(
    private readonly clock: Clock,
    /** A hard cap from the options (0: none). */
    capBytesPerS: number,
    /** Pace before the first delay sample (default option: 128 kbit/s, below nearly every home uplink; it doubles every second the uplink stays uncongested, and the controller cuts it where the uplink is slower). */
    initialPaceBytesPerS: number,
  ) {
    this.refilledMs = clock.now();
    this.usage = new UplinkUsageMeter(clock.now());
    this.link = new LinkWindow(clock.now());
    this.controller = new PaceController(clock.now(), capBytesPerS > 0 ? Math.min(initialPaceBytesPerS, capBytesPerS) : initialPaceBytesPerS, capBytesPerS);
  }

  get stats(): UploadGovernorStats {
    this.restartIfIdle();
    const { controller } = this;
    return {
      paceBytesPerS: this.yielding ? 0 : Math.round(controller.pace), queueDelayMs: controller.queueDelayMs, yielding: this.yielding,
      downloadReserveBytesPerS: Math.round(this.reserve), uplink: this.usage.snapshot(this.clock.now()),
    };
  }

  /**
   * How soon a peer session pings its peer again while this engine uploads: its pongs time our
   * uplink's queue (`toUploadTarget`: we upload to that peer) and tell it our upload state.
   */
  pingIntervalMs(toUploadTarget: boolean): number {
    return this.controller.pingIntervalMs(toUploadTarget);
  }

  /** The uplink's queueing delay now, as far as the last reading tells (pings stop with uploads, so a reading can be old). */
  queueDelayNowMs(nowMs: number): number {
    return this.controller.queueDelayNowMs(nowMs);
  }

  /**
   * What peers are told (ping/pong): the pace a new request would get, and the backlog ahead of
   * it. In slow start the pace is only where probing has got to, not what the uplink carries: it
   * is not advertised (PACE_UNMEASURED), or requesters would judge every transfer by a start value
   * (too slow for a high-bitrate stream's deadline, so never tried, so never raised).
   */
  get advertised(): { paceBytesPerS: number; backlogBytes: number } {
    this.restartIfIdle();
    return { paceBytesPerS: this.controller.advertised(this.yielding), backlogBytes: this.queuedBytes() };
  }

  /**
   * A peer's pong to our ping sent at `echoMs` says how many bytes it has received from us in all
   * (mod 2^32), at its clock's `remoteMs` when the ping arrived: the rate our uplink really
   * delivered at between two pings (link-window.ts).
   */
  delivered(peerId: string, echoMs: number, remoteMs: number, cumulativeBytes: number): void {
    this.link.pong(peerId, echoMs, remoteMs, cumulativeBytes);
  }

  /**
   * Whether a new request of `bytes` needed by `deadlineMs` can be met: served earliest deadline
   * first at the rate the uplink delivers, it must finish in time without making an upload with a
   * later deadline late that was on time. Returns undefined when it can, else how long it would
   * wait before its first byte (NOT_SERVING while uploads yield to the viewer's own playback). In
   * slow start the rate is not known yet: a request is taken unless the backlog is long.
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

  /**
   * How long everything queued takes to send at the pace, ms. Neither this nor admission counts
   * the reserve for the viewer's own downloads: it holds uploads back for a download's length (a
   * fraction of a second on a downlink several times the bitrate), which the requesters' slack
   * covers; counted in, a 2 Mbit/s download on a 134 kbit/s uplink refused every request.
   */
  waitBehindBacklogMs(): number {
    return (this.queuedBytes() / Math.max(this.controller.pace, MIN_CHUNK_BYTES)) * 1000;
  }

  /**
   * The viewer's own origin downloads run at this rate now, bytes/s (0: none runs; before the
   * first measurement the configured rate, so a newcomer's first downloads get the whole uplink).
   * Their TCP acknowledgements need about DOWNLOAD_ACK_SHARE of it on the uplink: the browser
   * swarm's HTTP-only viewers sent 15-20 kbit/s while downloading 355-442 kbit/s, most of a
   * 125 kbit/s uplink at 2 Mbit/s. Queued behind uploads they slow the download (browser swarm,
   * realistic: a Range resume took 1.6 s and a seed fetch beside it 3.6 s, and a newcomer
   * stalled). So uploads send at the pace less that reserve, nothing when it is the whole pace;
   * the pace itself stays (the reserve comes and goes with each download). P2P downloads are
   * left out: on such links they are as slow as their senders' uplinks.
   */
  setOriginDownloads(bytesPerS: number): void {
    const reserve = bytesPerS * DOWNLOAD_ACK_SHARE;
    if (reserve === this.reserve) return;
    this.reserve = reserve;
    if (reserve > 0) this.link.interrupted();
    this.pump();
  }

  /** The viewer's own playback needs the uplink (buffer low): pause every upload until told otherwise. */
  setYielding(yielding: boolean): void {
    if (yielding === this.yielding) return;
    this.yielding = yielding;
    if (yielding) {
      this.link.interrupted();
      return this.usage.enter('yielding', this.clock.now());
    }
    // Our peers heard pace 0 while we yielded, and never ask a peer at pace 0: each source pings
    // its peer now with our pace (a peer we do not upload to is not pinged otherwise).
    for (const source of this.sources) source.uploading();
    this.pump();
  }

  /**
   * A peer answered our ping: the one-way delay it measured (its receive clock minus our send
   * clock), and the round trip on our clock when known. The controller steps on the delay the
   * fresh readings agree on (uplink-delay.ts).
   */
  delaySample(peerId: string, oneWayMs: number, rttMs?: number): void {
    const now = this.clock.now();
    const delayMs = this.delay.pong(peerId, oneWayMs, rttMs, now);
    this.read(peerId, delayMs, now);
  }

  /** A ping goes out to the peer, saying `wireSentMs`: a previous one still unanswered may tell that the queue grew. */
  pingSent(peerId: string, wireSentMs: number): void {
    const now = this.clock.now();
    this.link.pingSent(peerId, wireSentMs);
    this.read(peerId, this.delay.ping(peerId, now), now);
  }

  /** After `peerId`'s reading: the controller steps on the peers' new agreement, if any (`delayMs`). */
  private read(peerId: string, delayMs: number | undefined, now: number): void {
    // The next window is busy from its start only if uploads can use the whole pace now.
    if (delayMs !== undefined) this.controller.step(delayMs, now, this.link.read(now, !this.yielding && this.reserve === 0 && this.pending()));
    // This peer sees a queue that the others' older readings outvote: every peer is asked again now,
    // so that their answers come back through the queue as it is (browser swarm, realistic: the
    // median held at 14 ms for 1.5 s, then read 1.5 s; the viewer's download behind it stalled).
    const reading = this.delay.readingMs(peerId) ?? 0;
    if (reading > TARGET_QUEUE_DELAY_MS && reading > (this.controller.queueDelayMs ?? 0) && now - this.askedAllMs >= ASK_ALL_INTERVAL_MS) {
      this.askedAllMs = now;
      for (const source of this.sources) source.uploading();
    }
  }

  forgetPeer(peerId: string): void {
    this.delay.forget(peerId);
    this.link.forget(peerId);
  }

  add(source: UploadSource): void {
    this.sources.add(source);
  }

  remove(source: UploadSource): void {
    this.sources.delete(source);
  }

  private restartIfIdle(): void {
    this.controller.restartIfIdle(this.clock.now(), this.lastBusyMs);
  }

  /** Some upload has data to send. */
  private pending(): boolean {
    for (const source of this.sources) if (source.nextDeadlineMs !== undefined) return true;
    return false;
  }

  /** Sends what the pace allows now, the earliest deadline first; sets a timer for the rest. */
  pump(): void {
    if (this.timer !== undefined || this.yielding) return;
    this.restartIfIdle();
    const now = this.clock.now();
    const pace = this.controller.pace - this.reserve;
    // Sending below the pace for the viewer's own downloads, a window says nothing of the link.
    if (this.reserve > 0) this.link.interrupted();
    // The whole pace is needed by our own downloads: nothing goes until the reserve changes.
    if (pace < MIN_CHUNK_BYTES) {
      this.refilledMs = now;
      return this.usage.enter('yielding', now);
    }
    let sentBytes = 0;
    const chunk = chunkBytesFor(pace);
    this.tokens = Math.min(Math.max(chunk, pace * BURST_S), this.tokens + ((now - this.refilledMs) / 1000) * pace);
    this.refilledMs = now;
    const sendBufferBytes = Math.max(chunk, pace * SEND_BUFFER_S);
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
        this.link.interrupted();
        return this.usage.enter(this.queuedBytes() > 0 ? 'relay' : 'idle', now, sentBytes);
      }
      this.lastBusyMs = now;
      if (unsent >= sendBufferBytes) {
        // SCTP cannot send as fast as we pace (the uplink or its congestion window is the limit): wait for it.
        this.link.full();
        this.usage.enter('full', now, sentBytes);
        return this.wakeIn((unsent / pace) * 500);
      }
      if (this.tokens < chunk) {
        // Held back by the reserve, the pace itself was not what limited uploads: it does not grow on it.
        if (this.reserve === 0) this.controller.heldBack();
        this.usage.enter('paced', now, sentBytes);
        return this.wakeIn(((chunk - this.tokens) / pace) * 1000);
      }
      const sent = next.sendChunk(chunk);
      this.tokens -= sent;
      this.link.sent(sent);
      sentBytes += sent;
      if (sent > 0) this.sent(now);
    }
  }

  /** Payload bytes the queued uploads still have to send, over every peer. */
  private queuedBytes(): number {
    let bytes = 0;
    for (const source of this.sources) bytes += source.backlogBytes;
    return bytes;
  }

  /** A requester cancelled an upload after `sentBytes` of it went out. */
  uploadCancelled(sentBytes: number): void {
    this.usage.cancelled(sentBytes);
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
  }
}
