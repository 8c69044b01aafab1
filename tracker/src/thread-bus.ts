// The cluster bus between worker threads of one process: BroadcastChannels, one every thread
// listens on and one per thread for messages addressed to it. A broadcast (joins and leaves) is
// acknowledged by every other thread once applied, so a client told "you joined" can rely on
// every thread knowing it. A thread that exits is announced as lost by the main thread, which
// sees the exit.

import { BroadcastChannel } from 'node:worker_threads';
import { OutboundBatches, forEachPayload, type Destination } from './bus-batch.js';
import { LEAVING_PAYLOAD, type ClusterBus } from './cluster-membership.js';

interface Envelope {
  from: string;
  payload?: Uint8Array;
  /** On a broadcast: acknowledge it with this number. */
  seq?: number;
  /** An acknowledgement of the sender's broadcast `ack`. */
  ack?: number;
}

/** A thread that does not acknowledge within this is stuck or gone: stop waiting for it. */
const ACK_TIMEOUT_MS = 100;

const channelName = (namespace: string, nodeId: string | null) => `shoal-tracker:${namespace}:${nodeId ?? '*'}`;

export class ThreadBus implements ClusterBus {
  onMessage: ((from: string, payload: Uint8Array) => void) | null = null;
  onNodeLost: ((nodeId: string) => void) | null = null;
  onConnected: (() => void) | null = null;
  private readonly all: BroadcastChannel;
  private readonly mine: BroadcastChannel;
  private readonly outboxes = new Map<string, BroadcastChannel>();
  private readonly batches = new OutboundBatches((destination, batch) => this.post(destination, batch));
  private nextSeq = 1;
  private readonly awaitingAcks = new Map<number, { missing: number; done: () => void }>();

  constructor(
    readonly nodeId: string,
    private readonly namespace: string,
    /** Threads in the process, this one included. */
    private readonly threads: number,
  ) {
    const receive = (event: unknown) => {
      const { from, payload, seq, ack } = (event as { data: Envelope }).data;
      if (from === this.nodeId) return;
      if (ack !== undefined) {
        const waiting = this.awaitingAcks.get(ack);
        if (waiting && --waiting.missing <= 0) waiting.done();
        return;
      }
      if (payload) forEachPayload(payload, (part) => this.onMessage?.(from, part));
      if (seq !== undefined && !this.closed) this.outbox(from).postMessage({ from: this.nodeId, ack: seq } satisfies Envelope);
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

  /** Settles once every other thread has applied its batch (posted at the end of this turn of the event loop). */
  broadcast(payload: Uint8Array): Promise<void> | void {
    if (this.closed) return;
    return this.batches.add(null, payload);
  }

  sendTo(nodeId: string, payload: Uint8Array): void {
    if (this.closed) return;
    void this.batches.add(nodeId, payload);
  }

  private post(destination: Destination, batch: Uint8Array): Promise<void> | void {
    if (this.closed) return;
    if (destination !== null) {
      this.outbox(destination).postMessage({ from: this.nodeId, payload: batch } satisfies Envelope);
      return;
    }
    const seq = this.nextSeq++;
    this.all.postMessage({ from: this.nodeId, payload: batch, seq } satisfies Envelope);
    if (this.threads <= 1) return;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.awaitingAcks.delete(seq);
        resolve();
      };
      const timer = setTimeout(done, ACK_TIMEOUT_MS);
      this.awaitingAcks.set(seq, { missing: this.threads - 1, done });
    });
  }

  private outbox(nodeId: string): BroadcastChannel {
    let outbox = this.outboxes.get(nodeId);
    if (!outbox) {
      outbox = new BroadcastChannel(channelName(this.namespace, nodeId));
      // It also hears what others send to that node: take and drop it rather than let it queue.
      outbox.onmessage = () => {};
      outbox.unref();
      this.outboxes.set(nodeId, outbox);
    }
    return outbox;
  }

  close(): void {
    this.batches.flush();
    this.closed = true;
    for (const waiting of [...this.awaitingAcks.values()]) waiting.done();
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
