// The upload governor: how fast, in what order and whether this viewer uploads at all. Uploads
// share the viewer's uplink with its own playback (HTTP requests, the acknowledgements its
// downloads need); a home router's uplink buffer holds up to about a second of traffic, and
// everything the viewer sends waits behind it. So uploads are paced by one token bucket over
// every peer, at a rate a delay-based controller in the spirit of LEDBAT finds: it grows while
// the uplink's queueing delay (measured by peers from our ping messages' one-way delay) stays
// under a small target, and falls fast when the delay rises. Requests are served one at a time,
// oldest first, so that each copy completes as early as possible; none while the viewer's own
// buffer is low, and below the pace by what the viewer's own downloads need of the uplink while
// they run (the engine says both). What SCTP holds unsent is bounded too, so a cancel or a yield
// takes effect within a fraction of a second.
import { PACE_UNMEASURED } from '../wire/peer-protocol.js';
import { MIN_CHUNK_BYTES, MIN_PACE_BYTES_PER_S, TARGET_QUEUE_DELAY_MS, chunkBytesFor, nextPace } from './pace.js';
import type { Clock, TimerId } from '../types.js';
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
/** Every peer is pinged at once at most this often when one peer's reading shows a queue the others' do not. */
const ASK_ALL_INTERVAL_MS = 1000;
/** A new request that would wait longer than this behind the backlog (before its first byte) is answered busy. */
export const MAX_UPLOAD_WAIT_MS = 4000;

/** One peer session's side of uploading, as the governor sees it. */
export interface UploadSource {
  /** Bytes its channel holds unsent. */
  readonly bufferedAmount: number;
  /** When its oldest queued upload was requested, or undefined when it has none. */
  readonly oldestUploadMs: number | undefined;
  /** Payload bytes its queued uploads still have to send. */
  readonly backlogBytes: number;
  /** Sends up to `maxBytes` of its oldest upload; returns the payload bytes sent. */
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
  private pace: number;
  /** Where the pace starts, and restarts after idle: the start option, within the cap. */
  private readonly startPace: number;
  private tokens = 0;
  private refilledMs: number;
  private readonly sources = new Set<UploadSource>();
  private readonly delay = new UplinkDelay();
  private queueDelayMs: number | undefined;
  private queueDelayAtMs = -Infinity;
  private controlledMs: number;
  /** Since the last control update, uploads waited for tokens. */
  private paceLimited = false;
  /** Until the uplink first pushes back (delay over target, or channels full), the pace doubles every second it is used. */
  private slowStart = true;
  /** The pace at which the uplink last pushed back while uploads used all of it (undefined: not yet). */
  private ceiling: number | undefined;
  /**
   * What the channels actually took, over windows of a second or more: payload bytes handed to
   * them, whether they were full, and whether uploads sat idle (out of data, or yielding: then
   * the bytes say how much there was to send, not what the channels can take).
   */
  private window = { startMs: 0, bytes: 0, channelsFull: false, idle: true };
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
    private readonly capBytesPerS: number,
    /** Pace before the first delay sample (default option: 128 kbit/s, below nearly every home uplink; it doubles every second the uplink stays uncongested, and the controller cuts it where the uplink is slower). */
    initialPaceBytesPerS: number,
  ) {
    this.refilledMs = clock.now();
    this.controlledMs = clock.now();
    this.usage = new UplinkUsageMeter(clock.now());
    this.startPace = capBytesPerS > 0 ? Math.min(initialPaceBytesPerS, capBytesPerS) : initialPaceBytesPerS;
    this.pace = this.startPace;
  }

  get stats(): UploadGovernorStats {
    this.restartIfIdle();
    return {
      paceBytesPerS: this.yielding ? 0 : Math.round(this.pace), queueDelayMs: this.queueDelayMs, yielding: this.yielding,
      downloadReserveBytesPerS: Math.round(this.reserve), uplink: this.usage.snapshot(this.clock.now()),
    };
  }

  /**
   * How soon a peer session pings its peer again while this engine uploads: its pongs time our
   * uplink's queue (`toUploadTarget`: we upload to that peer) and tell it our upload state.
   */
  pingIntervalMs(toUploadTarget: boolean): number {
    if (!toUploadTarget) return OTHER_PEER_PING_INTERVAL_MS;
    return this.slowStart ? PROBE_PING_INTERVAL_MS : PING_INTERVAL_MS;
  }

  /**
   * The uplink's queueing delay now, as far as the last reading tells: a queue drains at most as
   * fast as time passes (pings stop with uploads, so a reading can be old; 0 before the first).
   */
  queueDelayNowMs(nowMs: number): number {
    return Math.max(0, (this.queueDelayMs ?? 0) - (nowMs - this.queueDelayAtMs));
  }

  /**
   * What peers are told (ping/pong): the pace a new request would get, and the backlog ahead of
   * it. In slow start the pace is only where probing has got to, not what the uplink carries: it
   * is not advertised (PACE_UNMEASURED), or requesters would judge every transfer by a start value
   * (too slow for a high-bitrate stream's deadline, so never tried, so never raised).
   */
  get advertised(): { paceBytesPerS: number; backlogBytes: number } {
    const backlogBytes = this.queuedBytes();
    const { paceBytesPerS } = this.stats;
    return { paceBytesPerS: this.slowStart && paceBytesPerS > 0 ? PACE_UNMEASURED : paceBytesPerS, backlogBytes };
  }

  /**
   * Whether a new request should be accepted: not while yielding, nor behind a backlog that takes
   * too long to send. Whether the transfer itself is fast enough is the requester's call: it knows
   * its deadline, and our pace.
   */
  accepts(): boolean {
    if (this.yielding) return false;
    return (this.advertised.backlogBytes / this.pace) * 1000 <= MAX_UPLOAD_WAIT_MS;
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
    if (reserve > 0) this.window.idle = true;
    this.pump();
  }

  /** The viewer's own playback needs the uplink (buffer low): pause every upload until told otherwise. */
  setYielding(yielding: boolean): void {
    if (yielding === this.yielding) return;
    this.yielding = yielding;
    if (yielding) {
      this.window.idle = true;
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

  /** A ping goes out to the peer: a previous one still unanswered may tell that the queue grew. */
  pingSent(peerId: string): void {
    const now = this.clock.now();
    this.read(peerId, this.delay.ping(peerId, now), now);
  }

  /** After `peerId`'s reading: the controller steps on the peers' new agreement, if any (`delayMs`). */
  private read(peerId: string, delayMs: number | undefined, now: number): void {
    if (delayMs !== undefined) this.control(delayMs, now);
    // This peer sees a queue that the others' older readings outvote: every peer is asked again now,
    // so that their answers come back through the queue as it is (browser swarm, realistic: the
    // median held at 14 ms for 1.5 s, then read 1.5 s; the viewer's download behind it stalled).
    const reading = this.delay.readingMs(peerId) ?? 0;
    if (reading > TARGET_QUEUE_DELAY_MS && reading > (this.queueDelayMs ?? 0) && now - this.askedAllMs >= ASK_ALL_INTERVAL_MS) {
      this.askedAllMs = now;
      for (const source of this.sources) source.uploading();
    }
  }

  private control(delayMs: number, now: number): void {
    this.queueDelayMs = delayMs;
    this.queueDelayAtMs = now;
    if (delayMs > TARGET_QUEUE_DELAY_MS) {
      this.slowStart = false;
      if (this.paceLimited) this.ceiling = this.pace;
    }
    const before = this.pace;
    this.pace = nextPace(this.pace, this.queueDelayMs, now - this.controlledMs, this.paceLimited, this.capBytesPerS, this.slowStart);
    if (this.slowStart && this.ceiling !== undefined && this.pace > this.ceiling) {
      this.pace = Math.max(before, this.ceiling);
      this.slowStart = false;
    }
    const windowMs = now - this.window.startMs;
    if (windowMs >= 1000) {
      // Channels that filled up while there was always more to send took less than the pace: the
      // pace is what they carried, not what we would like them to (else peers are told a rate
      // nobody gets).
      if (this.window.channelsFull && !this.window.idle) {
        this.slowStart = false;
        this.pace = Math.max(MIN_PACE_BYTES_PER_S, Math.min(this.pace, (this.window.bytes / windowMs) * 1000 * 1.1));
        this.ceiling = this.pace;
      }
      this.window = { startMs: now, bytes: 0, channelsFull: false, idle: !this.pending() };
    }
    this.controlledMs = now;
    this.paceLimited = false;
  }

  forgetPeer(peerId: string): void {
    this.delay.forget(peerId);
  }

  add(source: UploadSource): void {
    this.sources.add(source);
  }

  remove(source: UploadSource): void {
    this.sources.delete(source);
  }

  private restartIfIdle(): void {
    const now = this.clock.now();
    // Uploads waiting on full channels are not idle: the uplink is as slow as the pace says.
    if (now - this.lastBusyMs < IDLE_RESTART_MS || this.pace >= this.startPace || this.slowStart) return;
    this.slowStart = true;
    // The controller's next step counts from here: the idle time before is no time at this pace.
    this.controlledMs = now;
  }

  /** Some upload has data to send. */
  private pending(): boolean {
    for (const source of this.sources) if (source.oldestUploadMs !== undefined) return true;
    return false;
  }

  /** Sends what the pace allows now, oldest request first; sets a timer for the rest. */
  pump(): void {
    if (this.timer !== undefined || this.yielding) return;
    this.restartIfIdle();
    const now = this.clock.now();
    const pace = this.pace - this.reserve;
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
      for (const source of this.sources) {
        unsent += source.bufferedAmount;
        const since = source.oldestUploadMs;
        if (since !== undefined && (!next || since < next.oldestUploadMs!)) next = source;
      }
      if (!next) {
        this.window.idle = true;
        return this.usage.enter(this.queuedBytes() > 0 ? 'relay' : 'idle', now, sentBytes);
      }
      this.lastBusyMs = now;
      if (unsent >= sendBufferBytes) {
        // SCTP cannot send as fast as we pace (the uplink or its congestion window is the limit): wait for it.
        this.window.channelsFull = true;
        this.usage.enter('full', now, sentBytes);
        return this.wakeIn((unsent / pace) * 500);
      }
      if (this.tokens < chunk) {
        // Held back by the reserve, the pace itself was not what limited uploads: it does not grow on it.
        if (this.reserve === 0) this.paceLimited = true;
        this.usage.enter('paced', now, sentBytes);
        return this.wakeIn(((chunk - this.tokens) / pace) * 1000);
      }
      const sent = next.sendChunk(chunk);
      this.tokens -= sent;
      this.window.bytes += sent;
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
