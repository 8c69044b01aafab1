// One thread's /stats.json figures, gathered from the parts that count them: the message
// handler and its registry, the sockets, the cluster, the process. The HTTP routes serve a
// snapshot at most a second old (cachedFor), so a flood of scrapes costs one snapshot a second.

import type { JoinedCluster, ThreadPlace } from './cluster-setup.js';
import type { LatencyHistogram } from './latency-histogram.js';
import type { MessageHandler } from './message-handler.js';
import { readOpenFilesLimit } from './open-files-limit.js';
import { countOpenFds, type EventLoopMonitor } from './process-metrics.js';
import type { SocketBook } from './socket-book.js';
import type { ClusterStats, RateWindow, TrackerStats } from './stats.js';
import { TRACKER_VERSION } from './version.js';

export interface StatsSources {
  startedMs: number;
  uwsBuild: string;
  handler: MessageHandler;
  book: SocketBook;
  rateWindow: RateWindow;
  eventLoop: EventLoopMonitor;
  announceLatency: LatencyHistogram;
  cluster: JoinedCluster | null;
  thread: ThreadPlace | undefined;
}

function openFilesLimit(): { soft: number | null; hard: number | null } {
  try {
    const read = readOpenFilesLimit();
    return { soft: Number.isFinite(read.soft) ? read.soft : null, hard: Number.isFinite(read.hard) ? read.hard : null };
  } catch {
    // not Linux: leave unknown
    return { soft: null, hard: null };
  }
}

function clusterStats(cluster: JoinedCluster, thread: ThreadPlace | undefined): ClusterStats {
  const { membership, bus, redisBus } = cluster;
  const local = membership.countLocal();
  return {
    nodeId: bus.nodeId,
    nodes: redisBus ? redisBus.clusterNodes.length : (thread?.threads ?? 1),
    localPeers: local.peers,
    localSeeders: local.seeders,
    relays: { ...membership.counters, sendFailures: redisBus?.failures ?? 0 },
    redis: redisBus ? { ...redisBus.redisStatus, nodes: redisBus.clusterNodes } : null,
  };
}

/** How long /stats.json and /metrics serve the same snapshot. */
export const STATS_CACHE_MS = 1000;

/** `produce`'s last value while it is younger than `ms` (a promise is shared by everyone asking meanwhile). */
export function cachedFor<T>(ms: number, produce: () => T): () => T {
  let value: T;
  let atMs = -Infinity;
  return () => {
    const nowMs = Date.now();
    if (nowMs - atMs >= ms) {
      value = produce();
      atMs = nowMs;
    }
    return value;
  };
}

/**
 * `processFigures` false leaves out what is the process's, not the thread's (open descriptors, a
 * walk of /proc/self/fd, and the open-files limit): what a thread answers its sibling with.
 */
export function snapshotStats(sources: StatsSources, nowMs: number, processFigures = true): TrackerStats {
  const { handler, book } = sources;
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  const limit = processFigures ? openFilesLimit() : { soft: null, hard: null };
  return {
    uptimeSec: Math.round((nowMs - sources.startedMs) / 1000),
    version: TRACKER_VERSION,
    node: process.version,
    uws: sources.uwsBuild,
    connections: book.size,
    ...handler.registry.counts(),
    rates: sources.rateWindow.rates(nowMs, handler.counters),
    totals: { ...handler.counters, connectionsOpened: book.opened, slowSocketsClosed: book.slowClosed },
    rejectedConnections: { ...book.rejected },
    memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external },
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    openFilesLimit: limit,
    fds: { open: processFigures ? countOpenFds() : null, max: limit.soft },
    eventLoopLag: sources.eventLoop.lag(),
    announceLatency: sources.announceLatency.snapshot(),
    cluster: sources.cluster ? clusterStats(sources.cluster, sources.thread) : null,
    threads: 1,
  };
}
