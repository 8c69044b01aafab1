#!/usr/bin/env node
// A WebSocket proxy in front of a tracker that records when each client connection sends each
// message, to measure what honest clients need from the per-connection rate limit. Per client
// kind (from the peer_id prefix of a connection's first announce) it reports the most messages
// one connection sent in any 1 s and any 10 s, and the token-bucket burst one connection needed
// at several refill rates (the bucket a connection must have had, starting full, to never be
// refused).
//
//   node tracker/bench/message-tap.mjs --target ws://127.0.0.1:8000 [--port 0] [--out tap.json]
//
// Prints `listening ws://127.0.0.1:PORT` on stdout; on SIGINT or SIGTERM writes the report (to
// --out, and a summary on stdout) and exits. Point clients at the printed URL.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket, { WebSocketServer } from 'ws';

export const REFILL_RATES = [1, 2, 5, 10, 20];

/** Client kinds by peer_id prefix (the first 8 characters, Azureus-style). */
export function clientKind(peerId) {
  if (typeof peerId !== 'string') return 'unknown';
  const prefix = peerId.slice(0, 8);
  if (prefix.startsWith('-SH')) return 'shoal';
  if (prefix.startsWith('-PM')) return 'p2p-media-loader';
  if (prefix.startsWith('-WW')) return 'bittorrent-tracker';
  return /^-[A-Za-z]{2}\d{4}-$/.test(prefix) ? prefix : 'unknown';
}

/** The most messages in any window of `windowMs` (times ascending, ms). */
export function maxInWindow(times, windowMs) {
  let best = 0;
  for (let end = 0, start = 0; end < times.length; end++) {
    while (times[end] - times[start] >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** The smallest token bucket (refilled at `perSecond`, starting full) that never refuses these messages. */
export function burstNeeded(times, perSecond) {
  let deficit = 0;
  let worst = 0;
  for (let i = 0; i < times.length; i++) {
    if (i > 0) deficit = Math.max(0, deficit - ((times[i] - times[i - 1]) * perSecond) / 1000);
    deficit += 1;
    worst = Math.max(worst, deficit);
  }
  return Math.ceil(worst - 1e-9);
}

/** Per-connection figures, and per kind the worst connection's. */
export function summarize(connections) {
  const perConnection = connections.map((c) => ({
    kind: c.kind,
    messages: c.times.length,
    announces: c.announces,
    answers: c.answers,
    scrapes: c.scrapes,
    swarms: c.swarms.size,
    durationS: c.times.length ? Math.round((c.times.at(-1) - c.times[0]) / 100) / 10 : 0,
    max1s: maxInWindow(c.times, 1000),
    max10s: maxInWindow(c.times, 10_000),
    burstNeeded: Object.fromEntries(REFILL_RATES.map((rate) => [rate, burstNeeded(c.times, rate)])),
  }));
  const kinds = {};
  for (const c of perConnection) {
    const k = (kinds[c.kind] ??= { connections: 0, messages: 0, announces: 0, answers: 0, max1s: 0, max10s: 0, maxMessages: 0, burstNeeded: {} });
    k.connections++;
    k.messages += c.messages;
    k.announces += c.announces;
    k.answers += c.answers;
    k.maxMessages = Math.max(k.maxMessages, c.messages);
    k.max1s = Math.max(k.max1s, c.max1s);
    k.max10s = Math.max(k.max10s, c.max10s);
    for (const rate of REFILL_RATES) k.burstNeeded[rate] = Math.max(k.burstNeeded[rate] ?? 0, c.burstNeeded[rate]);
  }
  return { kinds, connections: perConnection };
}

export function formatSummary({ kinds }) {
  const lines = [`kind                 conns  msgs  ann  answ  max/conn  max 1s  max 10s  burst needed at ${REFILL_RATES.join(', ')}/s`];
  for (const [kind, k] of Object.entries(kinds)) {
    lines.push(
      `${kind.padEnd(20)} ${String(k.connections).padStart(5)} ${String(k.messages).padStart(5)} ${String(k.announces).padStart(4)} ${String(k.answers).padStart(5)} ${String(k.maxMessages).padStart(9)} ${String(k.max1s).padStart(7)} ${String(k.max10s).padStart(8)}  ${REFILL_RATES.map((rate) => k.burstNeeded[rate]).join(', ')}`,
    );
  }
  return lines.join('\n');
}

/** Starts the tap; resolves to { url, connections, close() }. */
export async function startTap({ target, port = 0, host = '127.0.0.1' }) {
  const connections = [];
  const server = new WebSocketServer({ host, port, perMessageDeflate: false });
  server.on('connection', (client, request) => {
    const record = { kind: 'unknown', times: [], announces: 0, answers: 0, scrapes: 0, swarms: new Set() };
    connections.push(record);
    const headers = request.headers.origin ? { origin: request.headers.origin } : {};
    const upstream = new WebSocket(target.replace(/\/$/, '') + (request.url ?? '/'), { headers, perMessageDeflate: false });
    const pending = [];
    upstream.on('open', () => {
      for (const [data, isBinary] of pending.splice(0)) upstream.send(data, { binary: isBinary });
    });
    client.on('message', (data, isBinary) => {
      record.times.push(performance.now());
      try {
        const message = JSON.parse(String(data));
        if (message.action === 'scrape') record.scrapes++;
        else if (message.answer !== undefined) record.answers++;
        else if (message.action === 'announce') record.announces++;
        if (typeof message.info_hash === 'string') record.swarms.add(message.info_hash);
        if (record.kind === 'unknown') record.kind = clientKind(message.peer_id);
      } catch {
        // counted, not classified
      }
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
      else pending.push([data, isBinary]);
    });
    upstream.on('message', (data, isBinary) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    });
    const closeBoth = () => {
      client.close();
      upstream.close();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `ws://${host}:${server.address().port}`,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { target: { type: 'string' }, port: { type: 'string', default: '0' }, out: { type: 'string' } } });
  if (!values.target) {
    console.error('usage: node tracker/bench/message-tap.mjs --target ws://host:port [--port N] [--out file.json]');
    process.exit(2);
  }
  const tap = await startTap({ target: values.target, port: Number(values.port) });
  console.log(`listening ${tap.url}`);
  const finish = async () => {
    const summary = summarize(tap.connections);
    if (values.out) writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
    console.log(formatSummary(summary));
    await tap.close();
    process.exit(0);
  };
  process.once('SIGINT', finish);
  process.once('SIGTERM', finish);
}
