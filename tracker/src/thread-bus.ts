// The cluster bus between worker threads of one process: BroadcastChannels, one every thread
// listens on and one per thread for messages addressed to it. A thread that exits is announced
// as lost by the main thread, which sees the exit.

import { BroadcastChannel } from 'node:worker_threads';
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

  constructor(
    readonly nodeId: string,
    private readonly namespace: string,
  ) {
    const receive = (event: unknown) => {
      const { from, payload } = (event as { data: Envelope }).data;
      if (from !== this.nodeId) this.onMessage?.(from, payload);
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

  broadcast(payload: Uint8Array): void {
    if (this.closed) return;
    this.all.postMessage({ from: this.nodeId, payload } satisfies Envelope);
  }

  sendTo(nodeId: string, payload: Uint8Array): void {
    if (this.closed) return;
    let outbox = this.outboxes.get(nodeId);
    if (!outbox) {
      outbox = new BroadcastChannel(channelName(this.namespace, nodeId));
      // It also hears what others send to that node: take and drop it rather than let it queue.
      outbox.onmessage = () => {};
      outbox.unref();
      this.outboxes.set(nodeId, outbox);
    }
    outbox.postMessage({ from: this.nodeId, payload } satisfies Envelope);
  }

  close(): void {
    this.closed = true;
    this.all.close();
    this.mine.close();
    for (const outbox of this.outboxes.values()) outbox.close();
    this.outboxes.clear();
  }

  /** Main thread: tells every thread that `nodeId` is gone (it exited). */
  static announceLost(namespace: string, nodeId: string): void {
    const channel = new BroadcastChannel(channelName(namespace, null));
    channel.postMessage({ from: nodeId, payload: LEAVING_PAYLOAD } satisfies Envelope);
    channel.close();
  }
}
