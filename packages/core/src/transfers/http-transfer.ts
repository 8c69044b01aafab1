// The HTTP half of a transfer: one origin request for the whole segment, or a Range request for
// what a peer did not send, counted into the stream's stats and the link's throughput as it
// arrives. Its outcome goes back to the Transfers room (transfers.ts) through HttpRoom.
import { ShoalError, isShoalError } from '../errors.js';
import { createLogger } from '../logger.js';
import { estimatedSegmentBytes } from '../plan/scheduler.js';
import type { Transfer, TransferDeps, TransferStream } from './transfer.js';

const log = createLogger('shoal:core:transfers');

/** What an HTTP transfer reports to: the room that owns it. */
export interface HttpRoom {
  readonly stream: TransferStream;
  readonly deps: TransferDeps;
  /** Still the segment's transfer, and the engine alive: else its bytes are ignored. */
  isCurrent(transfer: Transfer): boolean;
  /** The bytes are complete (a P2P prefix joined to the body): verify and store them. */
  complete(transfer: Transfer, bytes: Uint8Array): void;
  /** The request failed: the transfer leaves the room. */
  drop(transfer: Transfer): void;
}

/** HTTP for the whole segment, or (after a P2P prefix) a Range request for its remainder. */
export function runHttp(transfer: Transfer, totalBytes: number | undefined, room: HttpRoom): void {
  const { clock, emit } = room.deps;
  const stream = room.stream;
  const ref = stream.refs.get(transfer.sequence)!;
  const base = ref.byteRange?.start ?? 0;
  const prefixLength = transfer.prefix?.length ?? 0;
  const range =
    prefixLength > 0 && totalBytes !== undefined ? { start: base + prefixLength, end: base + totalBytes } : ref.byteRange;
  const startedMs = clock.now();
  const { throughput } = room.deps;
  const linkBytesAtStart = throughput.receivedBytes;
  const expected = (transfer.httpExpected = { bytes: range ? range.end - range.start : estimatedSegmentBytes(ref, stream.bytesPerS), received: 0 });
  // This request's timing; the player's too when the whole segment comes from the origin.
  const timing = { requestMs: startedMs, firstByteMs: undefined as number | undefined };
  transfer.origin = prefixLength > 0 ? undefined : timing;
  const http = room.deps.http.fetch({
    url: ref.url,
    ...(range ? { range } : {}),
    onData: (chunk) => {
      if (!room.isCurrent(transfer)) return;
      transfer.firstByteMs ??= clock.now();
      timing.firstByteMs ??= clock.now();
      expected.received += chunk.length;
      throughput.receivedBytes += chunk.length;
      transfer.httpBytes += chunk.length;
      stream.stats.httpBytes += chunk.length;
      stream.stats.originBytes[transfer.originKind] += chunk.length;
      emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: chunk.length });
    },
  });
  transfer.http = http;
  http.body.then(
    (body) => {
      if (!room.isCurrent(transfer)) return;
      if (expected.received === 0) {
        // A client that does not report chunks: count the body once.
        throughput.receivedBytes += body.length;
        transfer.httpBytes += body.length;
        stream.stats.httpBytes += body.length;
        stream.stats.originBytes[transfer.originKind] += body.length;
        emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: body.length });
      }
      throughput.sample(body.length, throughput.receivedBytes - linkBytesAtStart, clock.now() - startedMs);
      log(`#${transfer.sequence} HTTP ${body.length} bytes${range ? ' (Range)' : ''}: first byte after ${timing.firstByteMs === undefined ? '-' : timing.firstByteMs - startedMs} ms, all after ${clock.now() - startedMs} ms`, stream.key);
      stream.stats.httpSegments++;
      let bytes = body;
      if (transfer.prefix) {
        bytes = new Uint8Array(transfer.prefix.length + body.length);
        bytes.set(transfer.prefix);
        bytes.set(body, transfer.prefix.length);
      }
      room.complete(transfer, bytes);
    },
    (error: unknown) => {
      if (!room.isCurrent(transfer)) return;
      room.drop(transfer);
      const failure = error instanceof Error ? error : new ShoalError('HTTP_NETWORK', `${ref.url}: ${String(error)}`);
      log(`#${transfer.sequence} HTTP failed${transfer.seed ? ' (seed)' : ''}: ${failure.message}`, stream.key);
      if (!isShoalError(failure, 'ABORTED')) {
        throughput.failed(clock.now());
        if (transfer.seed) stream.seeding.failed(transfer.sequence, clock.now());
      }
      stream.waiters.settle(transfer.sequence, (waiter) => waiter.reject(failure));
      room.deps.replan();
    },
  );
}
