// An hls.js-like player on virtual time. It reloads the live playlist every target duration and
// registers it with the engine; loads one fragment at a time through engine.loadSegment (as
// Shoal's fragment loader does) while the forward buffer is under maxBufferLength; starts after
// a startup buffer; plays at rate 1; stalls when the playhead reaches the end of the buffer and
// resumes when the next fragment is appended. Like @shoal/hlsjs it reports playback to the engine
// on every `timeupdate` (every 250 ms) and on every change of state. It plays the origin's first
// rendition until told to switch (an ABR level switch).
import type { PlaybackReport, SegmentLoad, SegmentRef, ShoalEngine } from '@shoal/core';
import type { SimOrigin } from './sim-origin.js';
import type { VirtualClock } from './virtual-clock.js';

export interface PlayerParams {
  /** Live: start this many segments behind the edge (hls.js liveSyncDurationCount). */
  liveSyncDurationCount: number;
  /** hls.js maxBufferLength, s. */
  maxBufferLengthS: number;
  /** Media buffered before the first frame, s. */
  startupBufferS: number;
  /** The media element's timeupdate period, ms. */
  timeupdateMs: number;
  /** A failed fragment load is retried after this long, ms (hls.js fragLoadPolicy retry delay). */
  retryDelayMs: number;
}

export const DEFAULT_PLAYER_PARAMS: PlayerParams = {
  liveSyncDurationCount: 5,
  maxBufferLengthS: 30,
  startupBufferS: 2,
  timeupdateMs: 250,
  retryDelayMs: 1000,
};

export interface StallRecord {
  startMs: number;
  endMs: number | null;
}

/** What a viewer measured, in the browser swarm's terms (viewer-snapshot.ts). */
export interface ViewerRecord {
  index: number;
  p2p: boolean;
  joinMs: number;
  leftMs: number | null;
  firstFrameMs: number | null;
  stalls: StallRecord[];
  /** Segment bytes handed to the player, by the source the engine reported. */
  deliveredBytes: number;
  deliveredBySource: { http: number; p2p: number; store: number };
  /** Media sequence -> bytes of every segment handed to the player. */
  segments: Map<number, number>;
  /** Bytes of delivered segments whose media was played. */
  playedBytes: number;
  playedSeconds: number;
  latencySamples: number[];
  loadErrors: number;
}

/** One viewer's player: who it is, and its phases against the others'. */
export interface PlayerSetup extends Pick<ViewerRecord, 'index' | 'p2p'> {
  /** One-way latency from this viewer to the origin, ms (playlist requests). */
  originOneWayMs: number;
  /** Offset of this viewer's timeupdate ticks, ms. */
  feedPhaseMs: number;
  /** Delay of this viewer's first playlist load, so of every reload after it, ms (default 0). */
  playlistPhaseMs?: number;
  /** Told of every segment handed to the player (offload over time). */
  onDelivered?: (bytes: number) => void;
}

export class PlayerModel {
  readonly record: ViewerRecord;
  private readonly segmentDurationS: number;
  private knownEdge = -1;
  private nextSequence = -1;
  private startPositionS = 0;
  private bufferedUntilS = 0;
  /** Position at anchorMs; the playhead moves at rate 1 from there while playing. */
  private anchorS = 0;
  private anchorMs = 0;
  private playing = false;
  private ended = false;
  private stopped = false;
  private loading: SegmentLoad | undefined;
  private readonly loadedSizes = new Map<number, number>();
  private timers = { refresh: undefined as unknown, underrun: undefined as unknown, wake: undefined as unknown, feed: undefined as unknown };
  private feedCount = 0;
  /** The rendition playing. */
  private streamKey: string;
  private readonly onDelivered: (bytes: number) => void;

  constructor(
    private readonly clock: VirtualClock,
    private readonly origin: SimOrigin,
    private readonly engine: ShoalEngine,
    private readonly params: PlayerParams,
    { index, p2p, originOneWayMs, feedPhaseMs, playlistPhaseMs = 0, onDelivered = () => {} }: PlayerSetup,
  ) {
    this.segmentDurationS = origin.spec.segmentDurationS;
    this.streamKey = origin.streamKey;
    this.onDelivered = onDelivered;
    this.record = {
      index, p2p, joinMs: clock.now(), leftMs: null, firstFrameMs: null, stalls: [], deliveredBytes: 0,
      deliveredBySource: { http: 0, p2p: 0, store: 0 }, segments: new Map(), playedBytes: 0, playedSeconds: 0, latencySamples: [], loadErrors: 0,
    };
    this.timers.refresh = clock.setTimeout(() => this.loadPlaylist(), 2 * originOneWayMs + playlistPhaseMs);
    this.timers.feed = clock.setTimeout(() => this.timeupdate(), feedPhaseMs);
  }

  private get isLive(): boolean {
    return this.origin.spec.kind === 'live';
  }

  positionS(): number {
    return this.playing ? this.anchorS + (this.clock.now() - this.anchorMs) / 1000 : this.anchorS;
  }

  /** The viewer leaves: timers stop, the engine is destroyed. */
  stop(): void {
    if (this.stopped) return;
    this.settlePlayed();
    this.stopped = true;
    this.record.leftMs = this.clock.now();
    const stall = this.record.stalls[this.record.stalls.length - 1];
    if (stall && stall.endMs === null) stall.endMs = this.clock.now();
    for (const timer of Object.values(this.timers)) this.clock.clearTimeout(timer);
    this.loading?.abort();
    this.engine.destroy();
  }

  /**
   * An ABR level switch: the player registers the new rendition's playlist, makes it the active
   * stream, and loads the fragments after the ones it has from it (a load in flight completes).
   */
  switchRendition(streamKey: string): void {
    if (this.stopped || streamKey === this.streamKey) return;
    this.streamKey = streamKey;
    if (this.nextSequence < 0) return; // not started: the first playlist load registers it
    this.engine.registerStream({ streamKey, isLive: this.isLive, segments: this.origin.playlist(streamKey), bandwidthBitsPerS: this.bandwidthOf(streamKey) });
    this.engine.setActiveStream(streamKey);
    this.maybeLoad();
  }

  /** The rendition's bitrate, as hls.js hands the level's BANDWIDTH to attachShoal. */
  private bandwidthOf(streamKey: string): number | undefined {
    return this.origin.spec.renditions.find((rendition) => rendition.streamKey === streamKey)?.bitrateBitsPerS;
  }

  private loadPlaylist(): void {
    if (this.stopped) return;
    const segments = this.origin.playlist(this.streamKey);
    this.knownEdge = segments[segments.length - 1]?.sequence ?? -1;
    // hls.js hears of a reload before Shoal (its own listeners come first) and loads a new edge
    // segment at once: the engine often learns of it from the load, then from the playlist.
    this.maybeLoad();
    this.engine.registerStream({ streamKey: this.streamKey, isLive: this.isLive, segments, bandwidthBitsPerS: this.bandwidthOf(this.streamKey) });
    if (this.nextSequence === -1 && this.knownEdge >= 0) {
      const first = this.isLive ? Math.max(segments[0]!.sequence, this.knownEdge - this.params.liveSyncDurationCount + 1) : 0;
      this.nextSequence = first;
      this.startPositionS = first * this.segmentDurationS;
      this.anchorS = this.bufferedUntilS = this.startPositionS;
      this.anchorMs = this.clock.now();
      this.engine.setActiveStream(this.streamKey);
      this.feed();
    }
    this.maybeLoad();
    // hls.js reloads a live playlist every target duration (the request's round trip included).
    if (this.isLive) this.timers.refresh = this.clock.setTimeout(() => this.loadPlaylist(), this.segmentDurationS * 1000);
  }

  private maybeLoad(): void {
    if (this.stopped || this.loading || this.ended || this.nextSequence < 0) return;
    const sequence = this.nextSequence;
    if (sequence > this.knownEdge) {
      if (!this.isLive) this.ended = true;
      return; // live: the next playlist reload brings it
    }
    const aheadS = this.bufferedUntilS - this.positionS();
    if (aheadS >= this.params.maxBufferLengthS) {
      this.clock.clearTimeout(this.timers.wake);
      const waitMs = this.playing ? (aheadS - this.params.maxBufferLengthS) * 1000 + 1 : Infinity;
      if (waitMs < Infinity) this.timers.wake = this.clock.setTimeout(() => this.maybeLoad(), waitMs);
      return;
    }
    const ref: SegmentRef = this.origin.ref(sequence, this.streamKey);
    const load = this.engine.loadSegment(ref);
    this.loading = load;
    load.result.then(
      (result) => {
        if (this.loading !== load || this.stopped) return;
        this.loading = undefined;
        this.appended(ref, result.bytes.length, result.source);
      },
      () => {
        if (this.loading !== load || this.stopped) return;
        this.loading = undefined;
        this.record.loadErrors++;
        this.clock.clearTimeout(this.timers.wake);
        this.timers.wake = this.clock.setTimeout(() => this.maybeLoad(), this.params.retryDelayMs);
      },
    );
  }

  private appended(ref: SegmentRef, bytes: number, source: 'http' | 'p2p' | 'store'): void {
    this.record.deliveredBytes += bytes;
    this.onDelivered(bytes);
    this.record.deliveredBySource[source] += bytes;
    this.record.segments.set(ref.sequence, bytes);
    this.loadedSizes.set(ref.sequence, bytes);
    this.nextSequence = ref.sequence + 1;
    this.bufferedUntilS = ref.startS + ref.durationS;
    const now = this.clock.now();
    if (this.record.firstFrameMs === null) {
      if (this.bufferedUntilS - this.startPositionS >= this.params.startupBufferS) {
        this.record.firstFrameMs = now;
        this.play();
      }
    } else if (!this.playing) {
      const stall = this.record.stalls[this.record.stalls.length - 1];
      if (stall && stall.endMs === null) stall.endMs = now;
      this.play();
    }
    this.scheduleUnderrun();
    this.feed();
    this.maybeLoad();
  }

  private play(): void {
    this.anchorS = this.positionS();
    this.anchorMs = this.clock.now();
    this.playing = true;
  }

  private scheduleUnderrun(): void {
    this.clock.clearTimeout(this.timers.underrun);
    if (!this.playing) return;
    const aheadMs = (this.bufferedUntilS - this.positionS()) * 1000;
    this.timers.underrun = this.clock.setTimeout(() => this.underrun(), Math.max(aheadMs, 0));
  }

  /** The playhead reached the end of the buffer. */
  private underrun(): void {
    if (this.stopped) return;
    this.anchorS = this.bufferedUntilS;
    this.anchorMs = this.clock.now();
    this.playing = false;
    const lastVodSegment = !this.isLive && this.nextSequence > this.origin.spec.segmentCount - 1;
    if (lastVodSegment) this.ended = true;
    else this.record.stalls.push({ startMs: this.clock.now(), endMs: null });
    this.settlePlayed();
    this.feed();
    this.maybeLoad();
  }

  private settlePlayed(): void {
    if (this.record.firstFrameMs === null || this.stopped) return;
    const playedS = this.positionS() - this.startPositionS;
    this.record.playedSeconds = Math.max(0, playedS);
    let bytes = 0;
    const fullSegments = Math.floor(playedS / this.segmentDurationS + 0.5);
    const first = Math.round(this.startPositionS / this.segmentDurationS);
    for (let sequence = first; sequence < first + fullSegments; sequence++) bytes += this.loadedSizes.get(sequence) ?? 0;
    this.record.playedBytes = bytes;
  }

  private timeupdate(): void {
    if (this.stopped) return;
    this.feed();
    // Live latency once a second (hls.latency: playlist edge minus currentTime).
    if (this.isLive && this.playing && this.feedCount++ % Math.max(1, Math.round(1000 / this.params.timeupdateMs)) === 0) {
      this.record.latencySamples.push(this.origin.liveEdgeS() - this.positionS());
    }
    this.maybeLoad();
    this.timers.feed = this.clock.setTimeout(() => this.timeupdate(), this.params.timeupdateMs);
  }

  private feed(): void {
    if (this.stopped || this.nextSequence < 0) return;
    const positionS = this.positionS();
    const state: PlaybackReport = {
      positionS,
      rate: this.ended ? 0 : 1,
      bufferedUntilS: Math.max(this.bufferedUntilS, positionS),
      isLive: this.isLive,
    };
    if (this.isLive) {
      state.liveEdgeS = (this.knownEdge + 1) * this.segmentDurationS;
      state.targetLatencyS = this.params.liveSyncDurationCount * this.segmentDurationS;
    }
    this.engine.setPlayback(state);
  }

  /** Called at the end of the run. */
  finish(): void {
    this.settlePlayed();
    const stall = this.record.stalls[this.record.stalls.length - 1];
    if (stall && stall.endMs === null && !this.stopped) stall.endMs = this.clock.now();
  }
}
