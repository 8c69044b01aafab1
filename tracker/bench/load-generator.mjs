// Load generator for one tracker, run in its own process (see run.mjs). Opens N WebSocket
// connections over S swarms; every announce carries K offers; every offer received is answered.
// Measures from the client side (responses/s, relays/s, announce latency, offer relay latency:
// from the announce carrying an offer to its arrival at the target) and reads the tracker's CPU
// time and RSS from /proc/<pid>. Prints one JSON object on stdout. For a cluster, --url and
// --pid take comma-separated lists: connections go to the URLs in turn, CPU and RSS add up over
// the processes (tracker nodes, Redis).
//
//   node load-generator.mjs --url ws://127.0.0.1:8000[,ws://...] --pid 1234[,5678] --mode rate|closed|idle
//        [--connections 2000] [--swarms 50] [--offers 5] [--rate 2000] [--warmup 3] [--duration 10]

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    pid: { type: 'string' },
    mode: { type: 'string', default: 'rate' },
    connections: { type: 'string', default: '2000' },
    swarms: { type: 'string', default: '50' },
    offers: { type: 'string', default: '5' },
    rate: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    'connect-concurrency': { type: 'string', default: '200' },
  },
});
const urls = (args.url ?? '').split(',').filter(Boolean);
const trackerPids = (args.pid ?? '').split(',').filter(Boolean).map(Number);
const mode = args.mode;
const connectionCount = Number(args.connections);
const swarmCount = Number(args.swarms);
const offersPerAnnounce = Number(args.offers);
const announceRate = Number(args.rate);
const warmupMs = Number(args.warmup) * 1000;
const durationMs = Number(args.duration) * 1000;
if (urls.length === 0 || trackerPids.length === 0) throw new Error('--url and --pid are required');

const CLOCK_TICKS = 100; // USER_HZ on Linux
const cpuSec = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime + stime
};
const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const trackerCpuSec = () => trackerPids.reduce((sum, pid) => sum + cpuSec(pid), 0);
const trackerRssBytes = () => trackerPids.reduce((sum, pid) => sum + rssBytes(pid), 0);

// 20-char binary ids, like bittorrent-tracker's client sends.
const id = (prefix, n) => (prefix + n.toString(36)).padEnd(20, '\u00b7').slice(0, 20);
// A realistic offer: Chromium's data-channel-only SDP is ~500-700 bytes.
const fakeSdp = (type, n) => ({
  type,
  sdp: `v=0\r\no=- ${4611731400430051336n + BigInt(n)} 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\na=extmap-allow-mixed\r\na=msid-semantic: WMS\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=candidate:1 1 udp 2113937151 127.0.0.1 54321 typ host generation 0 network-cost 999\r\na=ice-ufrag:${n.toString(36).padStart(4, 'x')}\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\na=ice-options:trickle\r\na=fingerprint:sha-256 6B:8B:5D:EA:59:04:20:23:29:C8:87:1C:CD:87:32:BE:DD:8C:66:A5:8E:50:55:EA:8C:D3:B6:5C:09:5E:79:F2\r\na=setup:${type === 'offer' ? 'actpass' : 'active'}\r\na=mid:0\r\na=sctp-port:5000\r\na=max-message-size:262144\r\n`,
});
const OFFER_SDP = fakeSdp('offer', 1);
const ANSWER_SDP = fakeSdp('answer', 2);

const counters = { responses: 0, offersIn: 0, answersIn: 0, failures: 0, sent: 0, errors: 0, closed: 0 };
let latencies = [];
/** offer_id -> when the announce carrying it was sent, and from which URL (node). */
const offerSentAt = new Map();
/** Until the offer reached its target: all, and split by whether the target is on the sender's node. */
let relayLatencies = [];
const relayByPath = { sameNode: [], crossNode: [] };
let measuring = false;
let offerSeq = 0;

class Client {
  constructor(index) {
    this.index = index;
    this.peerId = id('p', index);
    this.infoHash = id('swarm-', index % swarmCount);
    this.pending = []; // send times of announces awaiting a response
    this.started = false;
    this.onResponse = null;
  }

  connect() {
    return new Promise((resolve) => {
      this.socket = new WebSocket(urls[this.index % urls.length], { perMessageDeflate: false });
      this.socket.on('open', () => resolve(true));
      this.socket.on('error', () => {
        counters.errors++;
        resolve(false);
      });
      this.socket.on('close', () => counters.closed++);
      this.socket.on('message', (data) => this.receive(data));
    });
  }

  announce(withOffers) {
    const offers = [];
    const now = performance.now();
    for (let i = 0; withOffers && i < offersPerAnnounce; i++) {
      const offerId = id('o', offerSeq++);
      offers.push({ offer: OFFER_SDP, offer_id: offerId });
      if (measuring) offerSentAt.set(offerId, { at: now, node: this.index % urls.length });
    }
    this.pending.push(now);
    this.socket.send(
      JSON.stringify({
        action: 'announce',
        event: this.started ? 'update' : 'started',
        info_hash: this.infoHash,
        peer_id: this.peerId,
        left: 1000,
        numwant: offers.length,
        offers,
      }),
    );
    this.started = true;
    counters.sent++;
  }

  receive(data) {
    const message = JSON.parse(data.toString());
    if (message['failure reason']) {
      counters.failures++;
      return;
    }
    if (message.offer) {
      if (measuring) counters.offersIn++;
      const sent = offerSentAt.get(message.offer_id);
      if (sent !== undefined) {
        offerSentAt.delete(message.offer_id);
        if (measuring) {
          const ms = performance.now() - sent.at;
          relayLatencies.push(ms);
          relayByPath[sent.node === this.index % urls.length ? 'sameNode' : 'crossNode'].push(ms);
        }
      }
      this.socket.send(
        JSON.stringify({
          action: 'announce',
          info_hash: message.info_hash,
          peer_id: this.peerId,
          to_peer_id: message.peer_id,
          offer_id: message.offer_id,
          answer: ANSWER_SDP,
        }),
      );
    } else if (message.answer) {
      if (measuring) counters.answersIn++;
    } else if (message.complete !== undefined) {
      const sentAt = this.pending.shift();
      if (measuring) {
        counters.responses++;
        if (sentAt !== undefined) latencies.push(performance.now() - sentAt);
      }
      this.onResponse?.();
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null);

async function connectAll() {
  const clients = Array.from({ length: connectionCount }, (_, i) => new Client(i));
  const concurrency = Number(args['connect-concurrency']);
  let next = 0;
  let connected = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < clients.length) {
        const client = clients[next++];
        if (await client.connect()) connected++;
      }
    }),
  );
  return { clients: clients.filter((c) => c.socket.readyState === WebSocket.OPEN), connected };
}

/** Every client joins its swarm (no offers) and waits for its response. */
async function joinAll(clients) {
  let waiting = clients.length;
  await new Promise((resolve) => {
    for (const client of clients) {
      client.onResponse = () => {
        client.onResponse = null;
        if (--waiting === 0) resolve();
      };
      client.announce(false);
    }
    setTimeout(resolve, 30_000);
  });
  return clients.length - waiting;
}

async function measureWindow(run) {
  const cpuStart = trackerCpuSec();
  const ownCpuStart = process.cpuUsage();
  const startedMs = performance.now();
  measuring = true;
  await run();
  measuring = false;
  const seconds = (performance.now() - startedMs) / 1000;
  const cpu = trackerCpuSec() - cpuStart;
  const ownCpu = process.cpuUsage(ownCpuStart);
  latencies.sort((a, b) => a - b);
  relayLatencies.sort((a, b) => a - b);
  const byPath = (samples) => {
    samples.sort((a, b) => a - b);
    return { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)), samples: samples.length };
  };
  const result = {
    seconds: round(seconds),
    announceResponsesPerSec: round(counters.responses / seconds),
    offersRelayedPerSec: round(counters.offersIn / seconds),
    answersRelayedPerSec: round(counters.answersIn / seconds),
    latencyMs: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? null) },
    offerRelayMs: { p50: round(percentile(relayLatencies, 50)), p99: round(percentile(relayLatencies, 99)), samples: relayLatencies.length },
    // With several URLs: the same run's offers whose target sits on the sender's node, and the
    // others. Both see the same machine at the same moments, so their difference is the relay's.
    ...(urls.length > 1 ? { offerRelaySameNodeMs: byPath(relayByPath.sameNode), offerRelayCrossNodeMs: byPath(relayByPath.crossNode) } : {}),
    trackerCpuSec: round(cpu),
    trackerCpuUsPerAnnounce: counters.responses ? round((cpu * 1e6) / counters.responses) : null,
    trackerCpuUtilization: round(cpu / seconds),
    // Near 1, the generator's own queueing is in every latency figure.
    generatorCpuUtilization: round((ownCpu.user + ownCpu.system) / 1e6 / seconds),
    failures: counters.failures,
  };
  return result;
}

const round = (value) => (value === null || value === undefined ? null : Math.round(value * 100) / 100);

async function main() {
  const rssBefore = trackerRssBytes();
  const { clients, connected } = await connectAll();
  const joined = await joinAll(clients);
  const base = { mode, connections: connectionCount, connected, joined, swarms: swarmCount, offersPerAnnounce };

  if (mode === 'idle') {
    await sleep(2000);
    const rssAfter = trackerRssBytes();
    const perPeer = (rssAfter - rssBefore) / Math.max(1, joined);
    print({
      ...base,
      trackerRssBeforeMB: round(rssBefore / 2 ** 20),
      trackerRssAfterMB: round(rssAfter / 2 ** 20),
      rssPerPeerKB: round(perPeer / 1024),
      rssFor100kPeersMB: round((rssBefore + perPeer * 100_000) / 2 ** 20),
      errors: counters.errors,
    });
    return;
  }

  let stop = false;
  let runner;
  if (mode === 'closed') {
    // Each connection keeps one announce in flight: a new one as soon as its response arrives.
    runner = async () => {
      for (const client of clients) {
        client.onResponse = () => {
          if (!stop) client.announce(true);
        };
        client.announce(true);
      }
      await sleep(warmupMs);
      const result = await measureWindow(() => sleep(durationMs));
      stop = true;
      return result;
    };
  } else {
    // Fixed rate: announces spread evenly over the connections, every 5 ms a batch.
    runner = async () => {
      let cursor = 0;
      let owed = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        owed += ((now - last) / 1000) * announceRate;
        last = now;
        while (owed >= 1) {
          clients[cursor++ % clients.length].announce(true);
          owed--;
        }
      }, 5);
      await sleep(warmupMs);
      const result = await measureWindow(() => sleep(durationMs));
      clearInterval(timer);
      stop = true;
      return result;
    };
  }
  const result = await runner();
  await sleep(300);
  print({ ...base, targetRate: mode === 'rate' ? announceRate : null, ...result, trackerRssMB: round(trackerRssBytes() / 2 ** 20) });
}

function print(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // Sockets close with the process: the tracker sees a mass disconnect, as in a real outage.
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`load generator failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
