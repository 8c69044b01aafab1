// /stats.json and /metrics of a process whose port is served by several worker threads: the
// thread that gets the request asks its siblings for their figures over a BroadcastChannel and
// adds them up, so counters stay monotonic whichever thread a scrape lands on.

import { BroadcastChannel } from 'node:worker_threads';
import { mergeHistograms } from './latency-histogram.js';
import type { TrackerStats } from './stats.js';

interface Ask {
  kind: 'ask';
  requestId: string;
}
interface Reply {
  kind: 'reply';
  requestId: string;
  stats: TrackerStats;
}

/** A thread busier than this is reported missing (`threads` counts those that answered). */
const REPLY_TIMEOUT_MS = 2000;

export class SiblingStats {
  private readonly channel: BroadcastChannel;
  private provider: (() => TrackerStats) | null = null;
  private readonly pending = new Map<string, { replies: TrackerStats[]; done: (replies: TrackerStats[]) => void }>();
  private nextRequest = 0;

  constructor(
    namespace: string,
    private readonly threadIndex: number,
    private readonly siblings: number,
  ) {
    this.channel = new BroadcastChannel(`shoal-tracker:${namespace}:stats`);
    this.channel.unref();
    this.channel.onmessage = (event: unknown) => {
      const message = (event as { data: Ask | Reply }).data;
      if (message.kind === 'ask') {
        if (this.provider) this.channel.postMessage({ kind: 'reply', requestId: message.requestId, stats: this.provider() } satisfies Reply);
        return;
      }
      const waiting = this.pending.get(message.requestId);
      if (!waiting) return;
      waiting.replies.push(message.stats);
      if (waiting.replies.length >= this.siblings) waiting.done(waiting.replies);
    };
  }

  answerWith(provider: () => TrackerStats): void {
    this.provider = provider;
  }

  /** The other threads' stats; after REPLY_TIMEOUT_MS, whatever arrived. */
  collect(): Promise<TrackerStats[]> {
    if (this.siblings === 0) return Promise.resolve([]);
    const requestId = `${this.threadIndex}:${this.nextRequest++}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(this.pending.get(requestId)?.replies ?? []), REPLY_TIMEOUT_MS);
      const finish = (replies: TrackerStats[]) => {
        clearTimeout(timer);
        this.pending.delete(requestId);
        resolve(replies);
      };
      this.pending.set(requestId, { replies: [], done: finish });
      this.channel.postMessage({ kind: 'ask', requestId } satisfies Ask);
    });
  }

  close(): void {
    this.channel.close();
  }
}

/**
 * One process's stats from its threads': sockets, counters, rates and local peers add up;
 * swarm and peer counts are the cluster's (every thread holds them all); memory, CPU and
 * descriptors are the process's and already the same on every thread.
 */
export function mergeThreadStats(own: TrackerStats, siblings: readonly TrackerStats[]): TrackerStats {
  const all = [own, ...siblings];
  const sum = <T extends object>(pick: (stats: TrackerStats) => T): T => {
    const total = { ...pick(own) } as Record<string, number>;
    for (const key of Object.keys(total)) total[key] = all.reduce((acc, stats) => acc + ((pick(stats) as Record<string, number>)[key] ?? 0), 0);
    return total as T;
  };
  const merged: TrackerStats = {
    ...own,
    connections: all.reduce((acc, stats) => acc + stats.connections, 0),
    rates: sum((stats) => stats.rates),
    totals: sum((stats) => stats.totals),
    rejectedConnections: sum((stats) => stats.rejectedConnections),
    announceLatency: mergeHistograms(all.map((stats) => stats.announceLatency))!,
    threads: all.length,
  };
  if (own.cluster) {
    const clusters = all.map((stats) => stats.cluster!).filter(Boolean);
    merged.cluster = {
      ...own.cluster,
      localPeers: clusters.reduce((acc, cluster) => acc + cluster.localPeers, 0),
      localSeeders: clusters.reduce((acc, cluster) => acc + cluster.localSeeders, 0),
      relays: sum((stats) => stats.cluster!.relays),
    };
  }
  return merged;
}
