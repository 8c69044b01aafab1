// The cluster bus between worker threads of one process: BroadcastChannels, one every thread
// listens on and one per thread for messages addressed to it. A thread that exits is announced
// as lost by the main thread, which sees the exit.

import { BroadcastChannel } from 'node:worker_threads';
import { OutboundBatches, forEachPayload, type Destination } from './bus-batch.js';
import { LEAVING_PAYLOAD, type ClusterBus } from './cluster-membership.js';

interface Envelope {
  from: string;
  payload: Uint8Array;
}

const channelName = (namespace: string, nodeId: string | null) => `shoal-tracker:${namespace}:${nodeId ?? '*'}`;

export class ThreadBus implements ClusterBus {
  onMessage: ((from: string, payload: Uint8Array) => void) | null = null;
  onNodeLost: ((nodeId: string) => void) | null = null;
  onConnected: (() => void) | null = null;
  private readonly all: BroadcastChannel;
  private readonly mine: BroadcastChannel;
  private readonly outboxes = new Map<string, BroadcastChannel>();
  private readonly batches = new OutboundBatches((destination, batch) => this.post(destination, batch));

  constructor(
    readonly nodeId: string,
    private readonly namespace: string,
  ) {
    const receive = (event: unknown) => {
      const { from, payload } = (event as { data: Envelope }).data;
      if (from !== this.nodeId) forEachPayload(payload, (part) => this.onMessage?.(from, part));
    };
    this.all = new BroadcastChannel(channelName(namespace, null));
    this.mine = new BroadcastChannel(channelName(namespace, nodeId));
    this.all.onmessage = receive;
    this.mine.onmessage = receive;
    // Channels must not keep a thread alive once its server has closed.
    this.all.unref();
    this.mine.unref();
  }

  /** Announces this thread to the others (call once its membership is wired). */
  start(): void {
    this.onConnected?.();
  }

  private closed = false;

  /** Settles once its batch is posted (at the end of this turn of the event loop). */
  broadcast(payload: Uint8Array): Promise<void> | void {
    if (this.closed) return;
    return this.batches.add(null, payload);
  }

  sendTo(nodeId: string, payload: Uint8Array): void {
    if (this.closed) return;
    void this.batches.add(nodeId, payload);
  }

  private post(destination: Destination, batch: Uint8Array): void {
    if (this.closed) return;
    if (destination === null) {
      this.all.postMessage({ from: this.nodeId, payload: batch } satisfies Envelope);
      return;
    }
    const nodeId = destination;
    let outbox = this.outboxes.get(nodeId);
    if (!outbox) {
      outbox = new BroadcastChannel(channelName(this.namespace, nodeId));
      // It also hears what others send to that node: take and drop it rather than let it queue.
      outbox.onmessage = () => {};
      outbox.unref();
      this.outboxes.set(nodeId, outbox);
    }
    outbox.postMessage({ from: this.nodeId, payload: batch } satisfies Envelope);
  }

  close(): void {
    this.batches.flush();
    this.closed = true;
    this.all.close();
    this.mine.close();
    for (const outbox of this.outboxes.values()) outbox.close();
    this.outboxes.clear();
  }

  /** Main thread: tells every thread that `nodeId` is gone (it exited). */
  static announceLost(namespace: string, nodeId: string): void {
    const channel = new BroadcastChannel(channelName(namespace, null));
    const batch = new Uint8Array(4 + LEAVING_PAYLOAD.length);
    new DataView(batch.buffer).setUint32(0, LEAVING_PAYLOAD.length);
    batch.set(LEAVING_PAYLOAD, 4);
    channel.postMessage({ from: nodeId, payload: batch } satisfies Envelope);
    channel.close();
  }
}
