// Which cluster a tracker joins, if any: its sibling worker threads (ThreadBus), or the nodes
// sharing a Redis (RedisBus; with --workers and --redis each thread is a Redis node).

import { hostname } from 'node:os';
import { ClusterMembership, type AddressableConnection, type ClusterBus } from './cluster-membership.js';
import type { TrackerOptions } from './config.js';
import type { Logger } from './logger.js';
import { RedisBus } from './redis-bus.js';
import type { OfferBook } from './offer-book.js';
import type { PeerEntry, SwarmRegistry } from './swarm-registry.js';
import { ThreadBus } from './thread-bus.js';
import type { Connection } from './connection.js';
import type { SiblingStats } from './worker-stats.js';

/** Where a worker thread sits among its siblings (set by worker-entry.ts). */
export interface ThreadPlace {
  namespace: string;
  nodeId: string;
  threads: number;
  siblingStats: SiblingStats;
}

export interface JoinedCluster {
  membership: ClusterMembership;
  bus: ClusterBus & { close(): void };
  redisBus: RedisBus | null;
}

export async function joinCluster(context: {
  options: TrackerOptions;
  logger: Logger;
  thread: ThreadPlace | undefined;
  registry: SwarmRegistry<Connection>;
  offers: OfferBook<PeerEntry<Connection>>;
  localConnection: (connectionId: number) => AddressableConnection | undefined;
  /** This node's summary, kept in its Redis lease. */
  summary: () => object;
}): Promise<JoinedCluster | null> {
  const { options, thread } = context;
  const nodeId = thread?.nodeId ?? `${hostname()}/${process.pid}`;
  let bus: (ClusterBus & { start(): void; close(): void }) | null = null;
  let redisBus: RedisBus | null = null;
  if (options.redis) {
    redisBus = await RedisBus.connect({
      url: options.redis,
      // A restarted process must not be taken for the one that held its lease before.
      nodeId: `${nodeId}/${Math.random().toString(36).slice(2, 8)}`,
      leaseSec: options.clusterLeaseSec,
      logger: context.logger,
      summary: context.summary,
    });
    bus = redisBus;
  } else if (thread) {
    bus = new ThreadBus(thread.nodeId, thread.namespace, thread.threads);
  }
  if (!bus) return null;
  const membership = new ClusterMembership(context.registry, bus, context.localConnection, context.offers);
  bus.start();
  return { membership, bus, redisBus };
}
