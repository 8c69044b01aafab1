// A leg from the origin: one HTTP request for the whole segment, or a Range request for a leg's
// bytes no peer brings in time, counted into the stream's stats and the link's throughput as it
// arrives. What it brings and how it ends goes back to the Transfers that started it.
import { ShoalError, isShoalError } from '../errors.js';
import type { EngineEmit, StreamStats } from '../engine-events.js';
import { createLogger } from '../logger.js';
import type { Clock, HttpClient } from '../types.js';
import type { OriginThroughput } from './origin-throughput.js';
import type { SegmentVerifier } from '../store/integrity.js';
import type { Leg } from './transfer.js';

const log = createLogger('shoal:core:transfers');

/** What an origin leg needs from the stream's Transfers. */
export interface OriginLegOwner {
  readonly streamKey: string;
  readonly clock: Clock;
  readonly http: HttpClient;
  readonly throughput: OriginThroughput;
  readonly stats: Omit<StreamStats, 'peers'>;
  readonly emit: EngineEmit;
  /** Learns the origin's digest of the segment, when the response carries one. */
  readonly verifier: Pick<SegmentVerifier, 'observe'>;
  /** The segment's size, as the response says: false when it differs from what another leg said. */
  sized(leg: Leg, totalBytes: number): boolean;
  /** Bytes of the leg arrived, in order. */
  arrived(leg: Leg, chunk: Uint8Array): void;
  /** The request is over: its bytes are all in (`failure` undefined), or it failed. */
  ended(leg: Leg, failure: ShoalError | undefined): void;
}

const wrongSize = (url: string, bytes: number) => new ShoalError('HTTP_STATUS', `${url}: ${bytes} bytes, not the size a peer said`);

/** Runs an origin leg: the whole segment (a leg from 0 with no known end), or a Range request for [start, end). */
export function runOriginLeg(leg: Leg, owner: OriginLegOwner): void {
  const { clock, throughput, stats, emit } = owner;
  const ref = leg.transfer.ref;
  const base = ref.byteRange?.start ?? 0;
  const whole = leg.start === 0 && leg.end === Infinity;
  const range = whole ? ref.byteRange : { start: base + leg.start, end: base + leg.end };
  const startedMs = clock.now();
  const linkBytesAtStart = throughput.receivedBytes;
  const timing = { requestMs: startedMs, firstByteMs: undefined as number | undefined };
  if (whole) leg.transfer.origin = timing;
  const kind = leg.source.kind === 'origin' ? leg.source.originKind : 'urgent';
  let bodyBytes = 0;
  const count = (bytes: number) => {
    bodyBytes += bytes;
    throughput.receivedBytes += bytes;
    stats.httpBytes += bytes;
    stats.originBytes[kind] += bytes;
    emit('bytes-down', { streamKey: owner.streamKey, source: 'http', bytes });
  };
  let failed: ShoalError | undefined;
  const http = owner.http.fetch({
    url: ref.url,
    ...(range ? { range } : {}),
    onHeaders: (header) => owner.verifier.observe(ref.url, header),
    onLength: (bytes) => {
      if (leg.ended || !whole) return;
      if (!owner.sized(leg, bytes)) failed = wrongSize(ref.url, bytes);
    },
    onData: (chunk) => {
      if (leg.ended || failed) return;
      // The leg's own first byte is the Transfers' to note (arrived), with the transfer's.
      timing.firstByteMs ??= clock.now();
      count(chunk.length);
      owner.arrived(leg, chunk);
    },
  });
  if (leg.source.kind === 'origin') leg.source.http = http;
  http.body.then(
    (body) => {
      if (leg.ended) return;
      if (failed) return owner.ended(leg, failed);
      if (bodyBytes === 0) {
        // A client that does not report chunks: the body at once.
        count(body.length);
        if (whole && !owner.sized(leg, body.length)) return owner.ended(leg, wrongSize(ref.url, body.length));
        owner.arrived(leg, body);
      } else if (whole && !owner.sized(leg, bodyBytes)) {
        return owner.ended(leg, wrongSize(ref.url, bodyBytes));
      }
      throughput.sample(body.length, throughput.receivedBytes - linkBytesAtStart, clock.now() - startedMs);
      log(`#${ref.sequence} HTTP ${body.length} bytes${whole ? '' : ' (Range)'} in ${clock.now() - startedMs} ms`, owner.streamKey);
      stats.httpSegments++;
      owner.ended(leg, undefined);
    },
    (error: unknown) => {
      if (leg.ended) return;
      const failure = isShoalError(error) ? error : new ShoalError('HTTP_NETWORK', `${ref.url}: ${String(error)}`);
      log(`#${ref.sequence} HTTP failed: ${failure.message}`, owner.streamKey);
      if (!isShoalError(failure, 'ABORTED')) throughput.failed(clock.now());
      owner.ended(leg, failure);
    },
  );
}
