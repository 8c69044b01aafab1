// The figures an operator watches: /stats.json as one JSON object, /metrics in Prometheus text format.

import type { MembershipCounters } from './cluster-membership.js';
import type { HistogramSnapshot } from './latency-histogram.js';
import type { ClusterNode, RedisStatus } from './redis-bus.js';
import type { EventLoopLag } from './process-metrics.js';
import type { MessageCounters } from './message-handler.js';

export interface RejectedConnections {
  draining: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  origin: number;
}

export interface TrackerStats {
  uptimeSec: number;
  /** @shoal/tracker's version. */
  version: string;
  node: string;
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
  totals: MessageCounters & { connectionsOpened: number; slowSocketsClosed: number };
  rejectedConnections: RejectedConnections;
  memory: { rssBytes: number; heapUsedBytes: number; externalBytes: number };
  cpuSeconds: number;
  openFilesLimit: { soft: number | null; hard: number | null };
  /** Descriptors open now, and the soft limit they count against (null where unknown). */
  fds: { open: number | null; max: number | null };
  eventLoopLag: EventLoopLag;
  /** Time to handle one announce inside the tracker (parse, swarm update, response and offers written). */
  announceLatency: HistogramSnapshot;
  /**
   * With worker threads or Redis: `swarms`/`peers`/`seeders`/`leechers` above count the whole
   * cluster (each peer once, on every node); `localPeers` are the peers whose sockets this node
   * (this process) holds, which sum across nodes to `peers`.
   */
  cluster: ClusterStats | null;
  /** Worker threads serving this process's port (1 without workers). */
  threads: number;
}

export interface ClusterStats {
  nodeId: string;
  /** Nodes with a live lease (Redis), or this process's worker threads. */
  nodes: number;
  localPeers: number;
  localSeeders: number;
  relays: MembershipCounters & { sendFailures: number };
  redis: (RedisStatus & { nodes: ClusterNode[] }) | null;
}

/** Keeps the counters seen a few seconds ago so rates cover a short window, not all time. */
export class RateWindow {
  private samples: { atMs: number; counters: MessageCounters }[] = [];
  constructor(private readonly windowMs = 10_000) {}

  sample(nowMs: number, counters: MessageCounters): void {
    this.samples.push({ atMs: nowMs, counters: { ...counters } });
    while (this.samples.length > 2 && nowMs - this.samples[1]!.atMs >= this.windowMs) this.samples.shift();
  }

  rates(nowMs: number, current: MessageCounters): TrackerStats['rates'] {
    const oldest = this.samples[0];
    const seconds = oldest ? (nowMs - oldest.atMs) / 1000 : 0;
    const rate = (key: keyof MessageCounters) => (oldest && seconds > 0 ? round((current[key] - oldest.counters[key]) / seconds) : 0);
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

/** A label value with backslash, quote and newline escaped, as the text format requires. */
const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function histogram(lines: string[], name: string, help: string, snapshot: HistogramSnapshot): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  let cumulative = 0;
  snapshot.boundsSec.forEach((bound, i) => {
    cumulative += snapshot.counts[i]!;
    lines.push(`${name}_bucket{le="${bound}"} ${cumulative}`);
  });
  lines.push(`${name}_bucket{le="+Inf"} ${snapshot.count}`, `${name}_sum ${snapshot.sumSec}`, `${name}_count ${snapshot.count}`);
}

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
  metric('shoal_tracker_identity_refusals_total', 'counter', 'Announces and answers refused for speaking for a peer they do not hold (among the failures).', [
    ['{kind="peer_id_in_use"}', t.peerIdInUse],
    ['{kind="answer_without_offer"}', t.answersWithoutOffer],
  ]);
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
  if (stats.fds.open !== null) metric('process_open_fds', 'gauge', 'Open file descriptors.', [['', stats.fds.open]]);
  if (stats.fds.max !== null) metric('process_max_fds', 'gauge', 'Limit of open file descriptors (soft RLIMIT_NOFILE).', [['', stats.fds.max]]);
  metric('nodejs_eventloop_lag_seconds', 'gauge', 'Event-loop delay beyond the timer asked for, over the last ~10 s.', [
    ['{quantile="0.5"}', stats.eventLoopLag.p50Sec],
    ['{quantile="0.99"}', stats.eventLoopLag.p99Sec],
    ['{quantile="1"}', stats.eventLoopLag.maxSec],
  ]);
  metric('shoal_tracker_build_info', 'gauge', 'The running build; always 1.', [
    [`{version="${label(stats.version)}",node="${label(stats.node)}",uws="${label(stats.uws)}"}`, 1],
  ]);
  const cluster = stats.cluster;
  if (cluster) {
    metric('shoal_tracker_cluster_nodes', 'gauge', 'Tracker nodes in the cluster (live leases, or worker threads).', [['', cluster.nodes]]);
    metric('shoal_tracker_local_peers', 'gauge', "Peers whose sockets this node holds (shoal_tracker_peers counts the cluster's).", [['', cluster.localPeers]]);
    metric('shoal_tracker_cluster_messages_total', 'counter', 'Messages between nodes, by kind.', [
      ['{kind="join_sent"}', cluster.relays.joinsSent],
      ['{kind="leave_sent"}', cluster.relays.leavesSent],
      ['{kind="relay_sent"}', cluster.relays.relaysSent],
      ['{kind="relay_received"}', cluster.relays.relaysReceived],
      ['{kind="relay_undeliverable"}', cluster.relays.relaysUndeliverable],
      ['{kind="send_failed"}', cluster.relays.sendFailures],
      ['{kind="malformed_received"}', cluster.relays.malformed],
      ['{kind="claim_refused"}', cluster.relays.claimsRefused],
    ]);
    metric('shoal_tracker_cluster_nodes_lost_total', 'counter', 'Nodes forgotten (left, or lease expired).', [['', cluster.relays.nodesLost]]);
    if (cluster.redis) metric('shoal_tracker_redis_up', 'gauge', '1 while Redis is reachable.', [['', cluster.redis.up ? 1 : 0]]);
  }
  histogram(lines, 'shoal_tracker_announce_duration_seconds', 'Time to handle one announce inside the tracker.', stats.announceLatency);
  return `${lines.join('\n')}\n`;
}
