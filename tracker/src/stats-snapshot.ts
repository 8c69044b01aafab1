// One thread's /stats.json figures, gathered from the parts that count them: the message
// handler and its registry, the sockets, the cluster, the process.

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

export function snapshotStats(sources: StatsSources, nowMs: number): TrackerStats {
  const { handler, book } = sources;
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  const limit = openFilesLimit();
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
    fds: { open: countOpenFds(), max: limit.soft },
    eventLoopLag: sources.eventLoop.lag(),
    announceLatency: sources.announceLatency.snapshot(),
    cluster: sources.cluster ? clusterStats(sources.cluster, sources.thread) : null,
    threads: 1,
  };
}
