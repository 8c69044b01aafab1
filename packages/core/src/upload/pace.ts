// The pace controller's arithmetic, pure: how the upload pace moves with the uplink's queueing
// delay (in the spirit of LEDBAT), and the data-message size a pace sends. The governor
// (upload-governor.ts) holds the state and applies them.
import { CHUNK_BYTES } from '../wire/peer-protocol.js';

/** Queueing delay the controller aims for, ms: small next to a segment's download time. */
export const TARGET_QUEUE_DELAY_MS = 100;
/** The pace never falls below this (so that it can recover), unless the viewer yields. */
export const MIN_PACE_BYTES_PER_S = 4 * 1024;
const MAX_PACE_BYTES_PER_S = 64 * 1024 * 1024;
/** Rate of change at full deviation from the target: /4 per second down (the deviation counts twice when far above target)... */
const GAIN_PER_S = Math.LN2;
/** ...x2 per second up until the uplink first pushes back (slow start), then +15% per second at most. */
const PROBE_GAIN_PER_S = Math.log(1.15);
export const MIN_CHUNK_BYTES = 1024;

/**
 * The next pace after a delay sample: multiplicative, proportional to how far the queueing delay
 * is from the target, over the time since the last update. It grows only when the pace held
 * uploads back (otherwise an idle viewer would "learn" a rate it never tried).
 */
export function nextPace(
  paceBytesPerS: number, queueDelayMs: number, elapsedMs: number, paceLimited: boolean, capBytesPerS = 0, slowStart = true,
): number {
  const offTarget = Math.max(-2, Math.min(1, (TARGET_QUEUE_DELAY_MS - queueDelayMs) / TARGET_QUEUE_DELAY_MS));
  if (offTarget > 0 && !paceLimited) return paceBytesPerS;
  const gain = offTarget > 0 && !slowStart ? PROBE_GAIN_PER_S : GAIN_PER_S;
  const factor = Math.exp(gain * offTarget * (Math.min(elapsedMs, 1000) / 1000));
  const max = capBytesPerS > 0 ? capBytesPerS : MAX_PACE_BYTES_PER_S;
  return Math.max(MIN_PACE_BYTES_PER_S, Math.min(max, paceBytesPerS * factor));
}

/** Data-message payload at a pace: about 40 ms of it, so that one message never queues for long. */
export function chunkBytesFor(paceBytesPerS: number): number {
  const bytes = Math.floor((paceBytesPerS * 0.04) / MIN_CHUNK_BYTES) * MIN_CHUNK_BYTES;
  return Math.max(MIN_CHUNK_BYTES, Math.min(CHUNK_BYTES, bytes));
}
