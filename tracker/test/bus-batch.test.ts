import { describe, expect, it } from 'vitest';
import { MAX_BATCH_BYTES, OutboundBatches, forEachPayload, type Destination } from '../src/bus-batch.js';

describe('OutboundBatches', () => {
  it('sends one batch per destination per turn, split where it would pass MAX_BATCH_BYTES, in order', async () => {
    const sent: { destination: Destination; payloads: number[] }[] = [];
    const batches = new OutboundBatches((destination, batch) => {
      const payloads: number[] = [];
      forEachPayload(batch, (payload) => payloads.push(payload[0]!));
      sent.push({ destination, payloads });
      expect(batch.length).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    });
    const big = (tag: number) => new Uint8Array(0.4 * MAX_BATCH_BYTES).fill(tag);
    const settled: number[] = [];
    for (let tag = 1; tag <= 5; tag++) void batches.add('node-b', big(tag)).then(() => settled.push(tag));
    void batches.add(null, Uint8Array.of(9));
    void batches.add('node-b', Uint8Array.of(6));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([
      { destination: 'node-b', payloads: [1, 2] },
      { destination: 'node-b', payloads: [3, 4] },
      { destination: 'node-b', payloads: [5, 6] },
      { destination: null, payloads: [9] },
    ]);
    await Promise.resolve();
    expect(settled.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('sends a payload larger than MAX_BATCH_BYTES alone', () => {
    const sizes: number[] = [];
    const batches = new OutboundBatches((_destination, batch) => void sizes.push(batch.length));
    void batches.add(null, Uint8Array.of(1));
    void batches.add(null, new Uint8Array(MAX_BATCH_BYTES + 10));
    void batches.add(null, Uint8Array.of(2));
    batches.flush();
    expect(sizes).toEqual([5, MAX_BATCH_BYTES + 14, 5]);
  });
});
