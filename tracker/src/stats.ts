// The figures an operator watches: /stats.json as one JSON object, /metrics in Prometheus text format.

import type { EngineCounters } from './tracker-engine.js';

export interface RejectedConnections {
  draining: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  origin: number;
}

export interface TrackerStats {
  uptimeSec: number;
  uws: string;
  connections: number;
  swarms: number;
  peers: number;
  seeders: number;
  leechers: number;
  /** Per-second rates over the last few seconds. */
  rates: {
    messages: number;
    announces: number;
    answers: number;
    offersRelayed: number;
    answersRelayed: number;
  };
  totals: EngineCounters & { connectionsOpened: number; slowSocketsClosed: number };
  rejectedConnections: RejectedConnections;
  memory: { rssBytes: number; heapUsedBytes: number; externalBytes: number };
  cpuSeconds: number;
  openFilesLimit: { soft: number | null; hard: number | null };
}

/** Keeps the counters seen a few seconds ago so rates cover a short window, not all time. */
export class RateWindow {
  private samples: { atMs: number; counters: EngineCounters }[] = [];
  constructor(private readonly windowMs = 10_000) {}

  sample(nowMs: number, counters: EngineCounters): void {
    this.samples.push({ atMs: nowMs, counters: { ...counters } });
    while (this.samples.length > 2 && nowMs - this.samples[1]!.atMs >= this.windowMs) this.samples.shift();
  }

  rates(nowMs: number, current: EngineCounters): TrackerStats['rates'] {
    const oldest = this.samples[0];
    const seconds = oldest ? (nowMs - oldest.atMs) / 1000 : 0;
    const rate = (key: keyof EngineCounters) => (oldest && seconds > 0 ? round((current[key] - oldest.counters[key]) / seconds) : 0);
    return {
      messages: rate('messages'),
      announces: rate('announces'),
      answers: rate('answers'),
      offersRelayed: rate('offersRelayed'),
      answersRelayed: rate('answersRelayed'),
    };
  }
}

const round = (value: number) => Math.round(value * 10) / 10;

/** Prometheus text exposition format 0.0.4. */
export function renderPrometheus(stats: TrackerStats): string {
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: [string, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${Number.isFinite(value) ? value : 0}`);
  };
  const t = stats.totals;
  metric('shoal_tracker_connections', 'gauge', 'Open WebSocket connections.', [['', stats.connections]]);
  metric('shoal_tracker_swarms', 'gauge', 'Swarms (info_hashes) with at least one peer.', [['', stats.swarms]]);
  metric('shoal_tracker_peers', 'gauge', 'Peers in all swarms.', [
    ['{state="seeder"}', stats.seeders],
    ['{state="leecher"}', stats.leechers],
  ]);
  metric('shoal_tracker_messages_received_total', 'counter', 'WebSocket messages received.', [['', t.messages]]);
  metric('shoal_tracker_requests_total', 'counter', 'Valid requests by kind.', [
    ['{kind="announce"}', t.announces],
    ['{kind="answer"}', t.answers],
    ['{kind="scrape"}', t.scrapes],
  ]);
  metric('shoal_tracker_relayed_total', 'counter', 'Signalling messages relayed to other peers.', [
    ['{kind="offer"}', t.offersRelayed],
    ['{kind="answer"}', t.answersRelayed],
  ]);
  metric('shoal_tracker_failures_total', 'counter', 'Responses carrying a failure reason.', [['', t.failures]]);
  metric('shoal_tracker_rate_limited_total', 'counter', 'Messages dropped by the per-connection rate limit.', [['', t.rateLimited]]);
  metric('shoal_tracker_sockets_closed_total', 'counter', 'Sockets the tracker closed.', [
    ['{reason="abuse"}', t.abusersClosed],
    ['{reason="slow"}', t.slowSocketsClosed],
  ]);
  metric('shoal_tracker_peers_expired_total', 'counter', 'Peers removed for missing their announces.', [['', t.peersExpired]]);
  metric('shoal_tracker_connections_opened_total', 'counter', 'WebSocket connections accepted.', [['', t.connectionsOpened]]);
  metric(
    'shoal_tracker_connections_rejected_total',
    'counter',
    'WebSocket upgrades refused, by reason.',
    Object.entries(stats.rejectedConnections).map(([reason, value]) => [`{reason="${reason}"}`, value]),
  );
  metric('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', [['', stats.memory.rssBytes]]);
  metric('process_cpu_seconds_total', 'counter', 'User and system CPU time in seconds.', [['', stats.cpuSeconds]]);
  metric('shoal_tracker_uptime_seconds', 'gauge', 'Seconds since start.', [['', stats.uptimeSec]]);
  return `${lines.join('\n')}\n`;
}
