// The simulated origin (a CDN): a live stream whose edge advances one segment per segment
// duration with a sliding playlist window, or a VOD stream. It serves HTTP with Range to each
// simulated host through the flow network (the host's downlink is the shared bottleneck) and
// counts every segment byte it sends: the ground truth for offload, as in e2e/src/origin.ts.
import { ShoalError } from '../errors.js';
import { TCP_INITIAL_WINDOW_BYTES } from '../scheduler.js';
import type { ByteRange, HttpClient, HttpRequest, HttpTransfer, SegmentRef } from '../types.js';
import { Pipe, type FlowNetwork, type SimHost } from './flow-network.js';
import type { Prng } from './prng.js';
import type { VirtualClock } from './virtual-clock.js';

/** Bytes per HTTP body chunk handed to onData (a typical fetch() read size). */
export const HTTP_CHUNK_BYTES = 64 * 1024;

export interface StreamSpec {
  kind: 'live' | 'vod';
  streamKey: string;
  segmentDurationS: number;
  /** Media bitrate: a segment is about bitrate x duration, +- sizeJitter. */
  bitrateBitsPerS: number;
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
}

export interface OriginCounters {
  segmentRequests: number;
  /** Segment body bytes sent (every chunk that left the origin). */
  segmentBytes: number;
  refusedRequests: number;
  /** Per sequence: bytes sent. */
  bytesBySequence: Map<number, number>;
}

export class SimOrigin {
  readonly counters: OriginCounters = { segmentRequests: 0, segmentBytes: 0, refusedRequests: 0, bytesBySequence: new Map() };
  /** Origin bytes per time bucket (for offload over time). */
  readonly bytesByBucket: number[] = [];
  /** Hosts whose requests get 503: the "HTTP fallback off" switch of the stall test. */
  readonly refusing = new Set<string>();
  private readonly sizes: number[] = [];
  private readonly contents = new Map<number, Uint8Array>();
  private readonly segmentMs: number;

  constructor(
    private readonly clock: VirtualClock,
    private readonly network: FlowNetwork,
    readonly spec: StreamSpec,
    private readonly options: OriginOptions,
    prng: Prng,
    private readonly bucketMs: number,
  ) {
    this.segmentMs = spec.segmentDurationS * 1000;
    const meanBytes = (spec.bitrateBitsPerS / 8) * spec.segmentDurationS;
    for (let i = 0; i < spec.segmentCount; i++) {
      this.sizes.push(Math.round(meanBytes * (1 + spec.sizeJitter * (2 * prng.next() - 1))));
    }
  }

  segmentSize(sequence: number): number {
    return this.sizes[sequence] ?? 0;
  }

  /**
   * A segment's bytes: one shared buffer per segment (a position-dependent pattern, so a wrong
   * offset shows), handed out as views. Nobody writes to it.
   */
  content(sequence: number): Uint8Array {
    let bytes = this.contents.get(sequence);
    if (!bytes) {
      bytes = new Uint8Array(this.segmentSize(sequence));
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + sequence * 7) & 0xff;
      this.contents.set(sequence, bytes);
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

  /** The playlist as of now: the live window, or every VOD segment. */
  playlist(nowMs = this.clock.now()): SegmentRef[] {
    const edge = this.edgeSequence(nowMs);
    const first = this.spec.kind === 'live' ? Math.max(0, edge - this.spec.liveWindowSize + 1) : 0;
    const refs: SegmentRef[] = [];
    for (let sequence = first; sequence <= edge; sequence++) refs.push(this.ref(sequence));
    return refs;
  }

  ref(sequence: number): SegmentRef {
    const { streamKey, segmentDurationS } = this.spec;
    return { streamKey, sequence, url: `sim://origin/${sequence}.ts`, startS: sequence * segmentDurationS, durationS: segmentDurationS };
  }

  /** The playlist timeline's live edge (end of the newest segment), s. */
  liveEdgeS(nowMs = this.clock.now()): number {
    return (this.edgeSequence(nowMs) + 1) * this.spec.segmentDurationS;
  }

  /** An HttpClient for one host. */
  client(host: SimHost): HttpClient {
    return { fetch: (request) => this.fetch(host, request) };
  }

  private countBytes(sequence: number, bytes: number): void {
    this.counters.segmentBytes += bytes;
    this.counters.bytesBySequence.set(sequence, (this.counters.bytesBySequence.get(sequence) ?? 0) + bytes);
    const bucket = Math.floor(this.clock.now() / this.bucketMs);
    while (this.bytesByBucket.length <= bucket) this.bytesByBucket.push(0);
    this.bytesByBucket[bucket]! += bytes;
  }

  private fetch(host: SimHost, request: HttpRequest): HttpTransfer {
    const clock = this.clock;
    const oneWayMs = host.capacity.latencyMs + this.options.latencyMs;
    const sequence = Number(/\/(\d+)\.ts$/.exec(request.url)?.[1] ?? NaN);
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
        const available = Number.isInteger(sequence) && sequence >= 0 && sequence <= this.edgeSequence();
        if (!available || this.refusing.has(host.id)) {
          if (available) this.counters.refusedRequests++;
          const status = available ? 503 : 404;
          timers.push(clock.setTimeout(() => fail(new ShoalError('HTTP_STATUS', `${request.url}: HTTP ${status}`)), oneWayMs));
          return;
        }
        const content = this.content(sequence);
        const range: ByteRange = request.range ?? { start: 0, end: content.length };
        if (range.start < 0 || range.end > content.length || range.start >= range.end) {
          timers.push(clock.setTimeout(() => fail(new ShoalError('HTTP_STATUS', `${request.url}: HTTP 416`)), oneWayMs));
          return;
        }
        this.counters.segmentRequests++;
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
              this.countBytes(sequence, chunk.length);
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
