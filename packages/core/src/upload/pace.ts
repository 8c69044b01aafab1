// The pacing arithmetic the governor and its controller share, pure: the floor of the pace and
// the data-message size a pace sends.
import { CHUNK_BYTES } from '../wire/peer-protocol.js';

/** The pace never falls below this (so that it can recover), unless the viewer yields. */
export const MIN_PACE_BYTES_PER_S = 4 * 1024;
export const MIN_CHUNK_BYTES = 1024;

/** Data-message payload at a pace: about 40 ms of it, so that one message never queues for long. */
export function chunkBytesFor(paceBytesPerS: number): number {
  const bytes = Math.floor((paceBytesPerS * 0.04) / MIN_CHUNK_BYTES) * MIN_CHUNK_BYTES;
  return Math.max(MIN_CHUNK_BYTES, Math.min(CHUNK_BYTES, bytes));
}
