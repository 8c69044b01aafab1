// The simulated origin (a CDN): a live stream whose edge advances one segment per segment
// duration with a sliding playlist window, or a VOD stream, in one or more renditions (hls.js
// levels) on one timeline. It serves HTTP with Range to each simulated host through the flow
// network (the host's downlink is the shared bottleneck) and counts every segment byte and
// request it sends: the ground truth for offload, as in e2e/src/origin.ts. It can also serve a
// SHA-256 integrity manifest (PeerTube's format) listing exactly the segments published so far,
// as a live origin's does.
import { ShoalError, TCP_INITIAL_WINDOW_BYTES, type ByteRange, type HttpClient, type HttpRequest, type HttpTransfer, type SegmentRef } from '@shoal/core';
import { Pipe, type FlowNetwork, type SimHost } from './flow-network.js';
import type { Prng } from './prng.js';
import type { VirtualClock } from './virtual-clock.js';

/** Bytes per HTTP body chunk handed to onData (a typical fetch() read size). */
export const HTTP_CHUNK_BYTES = 64 * 1024;

export interface Rendition {
  streamKey: string;
  /** Media bitrate: a segment is about bitrate x duration, +- the stream's sizeJitter. */
  bitrateBitsPerS: number;
}

export interface StreamSpec {
  kind: 'live' | 'vod';
  /** The first is the one a player starts with. Segment file names are unique per rendition. */
  renditions: readonly Rendition[];
  segmentDurationS: number;
  /** A segment's size varies by this fraction, by the same factor in every rendition. */
  sizeJitter: number;
  /** Live: segments in the playlist window. */
  liveWindowSize: number;
  /** VOD: segments in the playlist. Live: how many segments may be produced (an upper bound for the run). */
  segmentCount: number;
}

export interface OriginOptions {
  /** One-way latency from the origin to any host (added to the host's own), ms. */
  latencyMs: number;
  /** Per-connection cap at the origin, bytes/s (Infinity: the host's downlink limits). */
  perConnectionBytesPerS: number;
  /** Serve a SHA-256 manifest of the published segments at this URL (sha256Hex: a synchronous SHA-256, in hex). */
  integrityManifest?: { url: string; sha256Hex: (bytes: Uint8Array) => string };
}

export interface OriginCounters {
  /** Segment requests served (not refused). */
  segmentRequests: number;
  /** Segment body bytes sent (every chunk that left the origin). */
  segmentBytes: number;
  refusedRequests: number;
  /** Per sequence (every rendition): bytes sent. */
  bytesBySequence: Map<number, number>;
  /** Per sequence (every rendition): requests served, Range resumes included. */
  requestsBySequence: Map<number, number>;
  /** Integrity manifest requests served: more than one per viewer when it lagged the live edge. */
  manifestRequests: number;
}

export class SimOrigin {
  readonly counters: OriginCounters = { segmentRequests: 0, segmentBytes: 0, refusedRequests: 0, bytesBySequence: new Map(), requestsBySequence: new Map(), manifestRequests: 0 };
  /** Origin bytes per time bucket (for offload over time). */
  readonly bytesByBucket: number[] = [];
  /** Hosts whose requests get 503: the "HTTP fallback off" switch of the stall test. */
  readonly refusing = new Set<string>();
  /** The first this many requests for each segment get 503 (a burst of origin errors meeting its first fetchers). */
  refuseFirstRequests = 0;
  private readonly refusedBySequence = new Map<number, number>();
  /** Per sequence: the size factor every rendition's segment has (1 +- sizeJitter). */
  private readonly sizeFactors: number[] = [];
  /** Per rendition: contents by sequence. */
  private readonly contents: Map<number, Uint8Array>[];
  private readonly hashes = new Map<string, string>();
  private readonly segmentMs: number;

  constructor(
    private readonly clock: VirtualClock,
    private readonly network: FlowNetwork,
    readonly spec: StreamSpec,
    private readonly options: OriginOptions,
    prng: Prng,
    private readonly bucketMs: number,
  ) {
    if (spec.renditions.length === 0) throw new ShoalError('INVALID_OPTION', 'SimOrigin: a stream needs at least one rendition');
    this.segmentMs = spec.segmentDurationS * 1000;
    this.contents = spec.renditions.map(() => new Map());
    for (let i = 0; i < spec.segmentCount; i++) this.sizeFactors.push(1 + spec.sizeJitter * (2 * prng.next() - 1));
  }

  /** The rendition a player starts with. */
  get streamKey(): string {
    return this.spec.renditions[0]!.streamKey;
  }

  private renditionIndex(streamKey: string): number {
    const index = this.spec.renditions.findIndex((rendition) => rendition.streamKey === streamKey);
    if (index < 0) throw new ShoalError('INVALID_OPTION', `SimOrigin: no rendition ${streamKey}`);
    return index;
  }

  segmentSize(sequence: number, streamKey = this.streamKey): number {
    return this.sizeOf(this.renditionIndex(streamKey), sequence);
  }

  private sizeOf(rendition: number, sequence: number): number {
    const factor = this.sizeFactors[sequence];
    if (factor === undefined) return 0;
    const { bitrateBitsPerS } = this.spec.renditions[rendition]!;
    return Math.round((bitrateBitsPerS / 8) * this.spec.segmentDurationS * factor);
  }

  /**
   * A segment's bytes: one shared buffer per segment (a position-dependent pattern, so a wrong
   * offset shows), handed out as views. Nobody writes to it.
   */
  content(sequence: number, streamKey = this.streamKey): Uint8Array {
    return this.contentOf(this.renditionIndex(streamKey), sequence);
  }

  private contentOf(rendition: number, sequence: number): Uint8Array {
    const contents = this.contents[rendition]!;
    let bytes = contents.get(sequence);
    if (!bytes) {
      bytes = new Uint8Array(this.sizeOf(rendition, sequence));
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + sequence * 7 + rendition * 101) & 0xff;
      contents.set(sequence, bytes);
    }
    return bytes;
  }

  /** Newest segment available now (live: the edge), or the last VOD segment. */
  edgeSequence(nowMs = this.clock.now()): number {
    if (this.spec.kind === 'vod') return this.spec.segmentCount - 1;
    // At time 0 a full window exists; segment k is complete at (k + 1 - window) segment durations.
    const edge = Math.floor(nowMs / this.segmentMs) + this.spec.liveWindowSize - 1;
    return Math.min(edge, this.spec.segmentCount - 1);
  }

  /** When the next live segment appears, ms (Infinity for VOD or at the end). */
  nextSegmentAtMs(nowMs = this.clock.now()): number {
    if (this.spec.kind === 'vod' || this.edgeSequence(nowMs) >= this.spec.segmentCount - 1) return Infinity;
    return (Math.floor(nowMs / this.segmentMs) + 1) * this.segmentMs;
  }

  /** A rendition's playlist as of now: the live window, or every VOD segment. */
  playlist(streamKey = this.streamKey): SegmentRef[] {
    const edge = this.edgeSequence();
    const first = this.spec.kind === 'live' ? Math.max(0, edge - this.spec.liveWindowSize + 1) : 0;
    const refs: SegmentRef[] = [];
    for (let sequence = first; sequence <= edge; sequence++) refs.push(this.ref(sequence, streamKey));
    return refs;
  }

  ref(sequence: number, streamKey = this.streamKey): SegmentRef {
    const { segmentDurationS } = this.spec;
    const url = `sim://origin/r${this.renditionIndex(streamKey)}-${sequence}.ts`;
    return { streamKey, sequence, url, startS: sequence * segmentDurationS, durationS: segmentDurationS };
  }

  /** The integrity manifest as of now: a SHA-256 per published segment file, every rendition. */
  private manifest(sha256Hex: (bytes: Uint8Array) => string): Uint8Array {
    const entries: Record<string, string> = {};
    for (let rendition = 0; rendition < this.spec.renditions.length; rendition++) {
      for (let sequence = 0; sequence <= this.edgeSequence(); sequence++) {
        const file = `r${rendition}-${sequence}.ts`;
        let hash = this.hashes.get(file);
        if (hash === undefined) this.hashes.set(file, (hash = sha256Hex(this.contentOf(rendition, sequence))));
        entries[file] = hash;
      }
    }
    return new TextEncoder().encode(JSON.stringify(entries));
  }

  /** The playlist timeline's live edge (end of the newest segment), s. */
  liveEdgeS(nowMs = this.clock.now()): number {
    return (this.edgeSequence(nowMs) + 1) * this.spec.segmentDurationS;
  }

  /** An HttpClient for one host. */
  client(host: SimHost): HttpClient {
    return { fetch: (request) => this.fetch(host, request) };
  }

  private countBytes(sequence: number | undefined, bytes: number): void {
    if (sequence === undefined) return; // the manifest
    this.counters.segmentBytes += bytes;
    this.counters.bytesBySequence.set(sequence, (this.counters.bytesBySequence.get(sequence) ?? 0) + bytes);
    const bucket = Math.floor(this.clock.now() / this.bucketMs);
    while (this.bytesByBucket.length <= bucket) this.bytesByBucket.push(0);
    this.bytesByBucket[bucket]! += bytes;
  }

  private fetch(host: SimHost, request: HttpRequest): HttpTransfer {
    const clock = this.clock;
    const oneWayMs = host.capacity.latencyMs + this.options.latencyMs;
    const segment = /\/r(\d+)-(\d+)\.ts$/.exec(request.url);
    const rendition = Number(segment?.[1] ?? NaN);
    const sequence = Number(segment?.[2] ?? NaN);
    const manifest = this.options.integrityManifest;
    const isManifest = manifest !== undefined && request.url === manifest.url;
    let settled = false;
    let resolveBody!: (bytes: Uint8Array) => void;
    let rejectBody!: (error: Error) => void;
    const body = new Promise<Uint8Array>((resolve, reject) => {
      resolveBody = resolve;
      rejectBody = reject;
    });
    body.catch(() => {}); // the engine handles rejections; this only keeps Node from reporting a transfer nobody awaited
    const timers: unknown[] = [];
    let pipe: Pipe | undefined;
    const fail = (error: ShoalError) => {
      if (settled) return;
      settled = true;
      rejectBody(error);
    };

    // The request reaches the origin after one one-way latency, behind the viewer's uplink queue.
    timers.push(
      clock.setTimeout(() => {
        if (settled) return;
        const available =
          isManifest || (rendition < this.spec.renditions.length && Number.isInteger(sequence) && sequence >= 0 && sequence <= this.edgeSequence());
        const refusedSoFar = this.refusedBySequence.get(sequence) ?? 0;
        const refusedFirst = available && !isManifest && refusedSoFar < this.refuseFirstRequests;
        if (refusedFirst) this.refusedBySequence.set(sequence, refusedSoFar + 1);
        if (!available || refusedFirst || this.refusing.has(host.id)) {
          if (available) this.counters.refusedRequests++;
          const status = available ? 503 : 404;
          timers.push(clock.setTimeout(() => fail(new ShoalError('HTTP_STATUS', `${request.url}: HTTP ${status}`)), oneWayMs));
          return;
        }
        const content = isManifest ? this.manifest(manifest.sha256Hex) : this.contentOf(rendition, sequence);
        const counted = isManifest ? undefined : sequence;
        const range: ByteRange = request.range ?? { start: 0, end: content.length };
        if (range.start < 0 || range.end > content.length || range.start >= range.end) {
          timers.push(clock.setTimeout(() => fail(new ShoalError('HTTP_STATUS', `${request.url}: HTTP 416`)), oneWayMs));
          return;
        }
        if (counted === undefined) {
          this.counters.manifestRequests++;
        } else {
          this.counters.segmentRequests++;
          this.counters.requestsBySequence.set(counted, (this.counters.requestsBySequence.get(counted) ?? 0) + 1);
        }
        pipe = new Pipe(this.network, undefined, host, this.options.perConnectionBytesPerS);
        const transfer = pipe;
        let offset = range.start;
        let windowBytes = TCP_INITIAL_WINDOW_BYTES;
        // TCP slow start, restarted per request (the connection idled between segments): each
        // window leaves one round trip after the previous one, and the acknowledgements that clock
        // it wait behind whatever the viewer's own uploads queued at its router.
        const sendWindow = () => {
          if (settled) return;
          const windowEnd = Math.min(offset + windowBytes, range.end);
          while (offset < windowEnd) {
            const end = Math.min(offset + HTTP_CHUNK_BYTES, windowEnd);
            const chunk = content.subarray(offset, end);
            const last = end === range.end;
            offset = end;
            transfer.push(chunk.length, () => {
              this.countBytes(counted, chunk.length);
              const overhead = this.network.wireOverhead;
              if (overhead) host.sendOverhead(chunk.length * overhead.httpAckShare, true);
              timers.push(
                clock.setTimeout(() => {
                  if (settled) return;
                  request.onData?.(chunk);
                  if (last) {
                    settled = true;
                    resolveBody(content.subarray(range.start, range.end));
                  }
                }, oneWayMs),
              );
            });
          }
          windowBytes *= 2;
          if (offset < range.end) timers.push(clock.setTimeout(sendWindow, 2 * oneWayMs + host.uplinkQueueDelayMs()));
        };
        sendWindow();
      }, oneWayMs + host.uplinkQueueDelayMs()),
    );

    return {
      body,
      abort: () => {
        if (settled) return;
        pipe?.clear();
        for (const timer of timers) clock.clearTimeout(timer);
        fail(new ShoalError('ABORTED', `${request.url}: aborted`));
      },
    };
  }
}
