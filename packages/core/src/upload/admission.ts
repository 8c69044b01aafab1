// Whether an uploader takes a new request: served earliest deadline first at the rate its uplink
// delivers, the request must finish by its deadline without making a queued upload late that was
// on time. Pure: the governor gives the queue and the rate.

export interface QueuedUpload {
  remainingBytes: number;
  /** When the requester needs its last byte (Infinity: no deadline). */
  deadlineMs: number;
}

/**
 * Undefined when `bytes` needed by `deadlineMs` can be taken; else how long the request would wait
 * before its first byte, ms (or, when it would make a later upload late, before the whole queue is sent).
 */
export function admissionWaitMs(queue: readonly QueuedUpload[], bytes: number, deadlineMs: number, nowMs: number, bytesPerS: number): number | undefined {
  const msPerByte = 1000 / Math.max(bytesPerS, 1);
  const ordered = [...queue].sort((a, b) => a.deadlineMs - b.deadlineMs);
  let doneMs = nowMs;
  let startMs: number | undefined;
  for (const upload of ordered) {
    if (startMs === undefined && deadlineMs < upload.deadlineMs) {
      startMs = doneMs;
      doneMs += bytes * msPerByte;
      if (doneMs > deadlineMs) return startMs - nowMs;
    }
    doneMs += upload.remainingBytes * msPerByte;
    if (startMs !== undefined && doneMs > upload.deadlineMs && doneMs - bytes * msPerByte <= upload.deadlineMs) {
      return ordered.reduce((sum, queued) => sum + queued.remainingBytes, 0) * msPerByte;
    }
  }
  if (startMs !== undefined) return undefined;
  return doneMs + bytes * msPerByte > deadlineMs ? doneMs - nowMs : undefined;
}
