// Messages between cluster nodes, gathered per destination until the current turn of the event
// loop ends and sent as one: a node handling a burst of announces sends one postMessage or one
// PUBLISH per destination instead of one per offer, join or answer. A batch holds at most
// MAX_BATCH_BYTES (unless one payload is larger): a burst of relayed offers to one node goes as
// several PUBLISHes, in order, none of which alone fills a subscriber's output buffer at Redis.
// Framing: each payload prefixed with its length (u32, big-endian).

export type Destination = string | null;

export const MAX_BATCH_BYTES = 1024 * 1024;

interface Pending {
  parts: Uint8Array[];
  bytes: number;
  settled: Promise<void> | null;
  settle: (() => void) | null;
}

export class OutboundBatches {
  /** Per destination, its batches in order; only the last one takes more. */
  private readonly pending = new Map<Destination, Pending[]>();
  private scheduled = false;

  /** `send` delivers one batch; a promise it returns settles the adds that went into it. */
  constructor(private readonly send: (destination: Destination, batch: Uint8Array) => Promise<void> | void) {}

  /** Queues a payload; the promise settles once its batch has been handed over (where `send` says so). */
  add(destination: Destination, payload: Uint8Array): Promise<void> {
    let batches = this.pending.get(destination);
    if (!batches) {
      batches = [];
      this.pending.set(destination, batches);
    }
    let entry = batches[batches.length - 1];
    if (!entry || (entry.parts.length > 0 && entry.bytes + 4 + payload.length > MAX_BATCH_BYTES)) {
      entry = { parts: [], bytes: 0, settled: null, settle: null };
      const created = entry;
      created.settled = new Promise<void>((resolve) => (created.settle = resolve));
      batches.push(entry);
    }
    entry.parts.push(payload);
    entry.bytes += 4 + payload.length;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return entry.settled!;
  }

  /** Sends everything queued now. */
  flush(): void {
    this.scheduled = false;
    const pending = [...this.pending];
    this.pending.clear();
    for (const [destination, batches] of pending) for (const entry of batches) this.sendBatch(destination, entry);
  }

  private sendBatch(destination: Destination, entry: Pending): void {
    const batch = new Uint8Array(entry.bytes);
    const view = new DataView(batch.buffer);
    let offset = 0;
    for (const part of entry.parts) {
      view.setUint32(offset, part.length);
      batch.set(part, offset + 4);
      offset += 4 + part.length;
    }
    const sent = this.send(destination, batch);
    if (sent) void sent.finally(entry.settle!);
    else entry.settle!();
  }
}

/** Calls `receive` with each payload of a batch, in order; stops at a truncated entry. */
export function forEachPayload(batch: Uint8Array, receive: (payload: Uint8Array) => void): void {
  const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
  let offset = 0;
  while (offset + 4 <= batch.length) {
    const length = view.getUint32(offset);
    if (offset + 4 + length > batch.length) return;
    receive(batch.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
  }
}
