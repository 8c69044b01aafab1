// The cluster bus between tracker nodes on several machines, on Redis (or Valkey) primitives only:
// - pub/sub: one channel every node subscribes to (joins, leaves, syncs) and one per node
//   (offers and answers relayed to a socket it holds);
// - leases: each node keeps a key `<prefix>:lease:<node>` alive with an expiry; a node whose key
//   expired is gone, and the others drop its peers. The key's value is the node's summary, which
//   is how /stats.json lists the cluster.
// When Redis is unreachable the node keeps serving its own peers; after a lease without Redis it
// forgets the other nodes' peers (it can reach none of them), and on reconnection everyone
// re-syncs.

import { OutboundBatches, forEachPayload } from './bus-batch.js';
import type { ClusterBus } from './cluster-membership.js';
import type { Logger } from './logger.js';
import { RedisConnection, type Reply } from './redis-connection.js';

export interface RedisBusOptions {
  url: string;
  nodeId: string;
  leaseSec: number;
  /** Key and channel prefix; several clusters can share a Redis under different prefixes. */
  prefix?: string;
  /** This node's summary, stored in its lease (JSON). */
  summary: () => object;
  logger: Logger;
}

export interface RedisStatus {
  up: boolean;
  /** Since when (ms) it has been in that state. */
  sinceMs: number;
  lastError: string | null;
}

export interface ClusterNode {
  nodeId: string;
  summary: Record<string, unknown>;
}

export class RedisBus implements ClusterBus {
  onMessage: ((from: string, payload: Uint8Array) => void) | null = null;
  onNodeLost: ((nodeId: string) => void) | null = null;
  onConnected: (() => void) | null = null;
  readonly nodeId: string;
  private readonly prefix: string;
  private readonly publisher: RedisConnection;
  private readonly subscriber: RedisConnection;
  private readonly header: Buffer;
  /** Nodes heard from (by message or lease) and not lost since. */
  private readonly known = new Set<string>();
  private nodes: ClusterNode[] = [];
  private status: RedisStatus = { up: false, sinceMs: Date.now(), lastError: null };
  private readonly leaseTimer: NodeJS.Timeout;
  private publishFailures = 0;
  private closed = false;
  /** Set by start(): the membership is wired, so (re)connections may be announced. */
  private started = false;
  /** One PUBLISH per destination per turn of the event loop. */
  private readonly batches = new OutboundBatches((destination, batch) => this.publish(this.channel(destination), batch));

  private constructor(private readonly options: RedisBusOptions) {
    this.nodeId = options.nodeId;
    this.prefix = options.prefix ?? 'shoal-tracker';
    const id = Buffer.from(options.nodeId);
    this.header = Buffer.concat([Buffer.of(id.length), id]);
    const onDown = (reason: string) => this.setDown(reason);
    const onReady = () => void this.checkUp();
    this.publisher = new RedisConnection({ url: options.url, name: `shoal-tracker:${options.nodeId}`, onReady, onDown });
    this.subscriber = new RedisConnection({
      url: options.url,
      name: `shoal-tracker-sub:${options.nodeId}`,
      channels: [this.channel(null), this.channel(this.nodeId)],
      onMessage: (_channel, message) => this.receive(message),
      onReady,
      onDown,
    });
    const everyMs = Math.max(500, Math.floor((options.leaseSec * 1000) / 3));
    this.leaseTimer = setInterval(() => void this.renewLease(), everyMs);
    this.leaseTimer.unref();
  }

  /**
   * Connects both clients. If Redis cannot be reached now the node starts anyway, serving its own
   * peers (an outage at deploy time must not keep trackers down), says so in the log and in
   * /health, and joins the cluster when Redis answers.
   */
  static async connect(options: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(options);
    try {
      // Each connection subscribes (the subscriber) and retries by itself from now on.
      await Promise.all([bus.publisher.open(), bus.subscriber.open()]);
      await bus.renewLease();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      options.logger.warn('Redis unreachable at start: serving this node\'s own peers until it answers', { redis: redactUrl(options.url), error: message });
      bus.status = { up: false, sinceMs: Date.now(), lastError: message };
    }
    return bus;
  }

  /** Call once the membership is wired: announces this node (now, or when Redis first answers). */
  start(): void {
    this.started = true;
    void this.checkUp();
  }

  get redisStatus(): RedisStatus {
    return { ...this.status };
  }

  /** The nodes whose leases were alive at the last renewal, with their summaries (this one included). */
  get clusterNodes(): ClusterNode[] {
    return this.nodes;
  }

  get failures(): number {
    return this.publishFailures;
  }

  /** Settles once Redis has acknowledged the PUBLISH of its batch, i.e. written it to every subscriber. */
  broadcast(payload: Uint8Array): Promise<void> | void {
    return this.batches.add(null, payload);
  }

  sendTo(nodeId: string, payload: Uint8Array): void {
    void this.batches.add(nodeId, payload);
  }

  close(): void {
    if (this.closed) return;
    this.batches.flush();
    this.closed = true;
    clearInterval(this.leaseTimer);
    // Give the lease back so the others need not wait for it to expire; QUIT after the last PUBLISH.
    if (this.publisher.isReady) {
      void this.publisher
        .command(['DEL', this.leaseKey(this.nodeId)])
        .catch(() => {})
        .finally(() => this.publisher.quit());
    } else {
      this.publisher.disconnect();
    }
    this.subscriber.disconnect();
  }

  private channel(nodeId: string | null): string {
    return nodeId === null ? `${this.prefix}:all` : `${this.prefix}:node:${nodeId}`;
  }

  private leaseKey(nodeId: string): string {
    return `${this.prefix}:lease:${nodeId}`;
  }

  private publish(channel: string, payload: Uint8Array): Promise<void> | undefined {
    if (this.closed || !this.publisher.isReady) {
      this.publishFailures++;
      return undefined;
    }
    return this.publisher.publish(channel, [this.header, payload]).then(
      () => undefined,
      () => {
        this.publishFailures++;
      },
    );
  }

  private receive(message: Buffer): void {
    const idLength = message[0]!;
    const from = message.toString('utf8', 1, 1 + idLength);
    if (from === this.nodeId) return;
    if (!this.known.has(from)) {
      this.known.add(from);
      // A node we had not heard of: list it now rather than at our next renewal.
      void this.renewLease();
    }
    forEachPayload(new Uint8Array(message.buffer, message.byteOffset + 1 + idLength, message.length - 1 - idLength), (payload) => this.onMessage?.(from, payload));
  }

  private setDown(reason: string): void {
    if (this.closed) return;
    if (this.status.up) {
      this.options.logger.warn('Redis unreachable: serving this node\'s own peers only', { error: reason });
      this.status = { up: false, sinceMs: Date.now(), lastError: reason };
    } else {
      this.status.lastError = reason;
    }
  }

  private async checkUp(): Promise<void> {
    if (this.closed || this.status.up || !this.started) return;
    if (!this.publisher.isReady || !this.subscriber.isReady) return;
    // The subscriber has subscribed again; the others may have dropped us, so tell them everything again.
    if (this.status.lastError !== null) this.options.logger.info('Redis reachable: (re-)syncing with the cluster');
    this.status = { up: true, sinceMs: Date.now(), lastError: null };
    await this.renewLease();
    this.onConnected?.();
  }

  private async renewLease(): Promise<void> {
    if (this.closed) return;
    const leaseMs = this.options.leaseSec * 1000;
    if (!this.status.up && this.status.sinceMs + leaseMs < Date.now()) {
      // A lease without Redis: the other nodes' peers cannot be reached, and they have dropped ours.
      for (const nodeId of this.known) this.onNodeLost?.(nodeId);
      this.known.clear();
    }
    try {
      await this.publisher.command(['SET', this.leaseKey(this.nodeId), JSON.stringify(this.options.summary()), 'PX', String(leaseMs)]);
      const keys: Buffer[] = [];
      let cursor = '0';
      do {
        const [next, batch] = (await this.publisher.command(['SCAN', cursor, 'MATCH', `${this.prefix}:lease:*`, 'COUNT', '1000'])) as [Buffer, Buffer[]];
        cursor = next.toString();
        keys.push(...batch);
      } while (cursor !== '0');
      const values = keys.length > 0 ? ((await this.publisher.command(['MGET', ...keys])) as Reply[]) : [];
      const nodes: ClusterNode[] = [];
      keys.forEach((key, i) => {
        const value = values[i];
        if (!Buffer.isBuffer(value)) return;
        let summary: Record<string, unknown> = {};
        try {
          summary = JSON.parse(value.toString()) as Record<string, unknown>;
        } catch {
          // another program's key under our prefix: list the node without a summary
        }
        nodes.push({ nodeId: key.toString().slice(`${this.prefix}:lease:`.length), summary });
      });
      this.nodes = nodes;
      const alive = new Set(nodes.map((node) => node.nodeId));
      for (const nodeId of [...this.known]) {
        if (!alive.has(nodeId)) {
          this.known.delete(nodeId);
          this.options.logger.info('cluster node lost (lease expired)', { node: nodeId });
          this.onNodeLost?.(nodeId);
        }
      }
    } catch (error) {
      this.setDown(error instanceof Error ? error.message : String(error));
    }
  }
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
