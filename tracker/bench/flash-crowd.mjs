#!/usr/bin/env node
// A flash crowd at a scale no single machine's browsers reach, through the tracker's real message
// logic (MessageHandler, no sockets) on a virtual clock. Every client behaves as bittorrent-tracker's
// Client does, the most demanding honest client measured with the browser crowd
// (signaling-crowd.mjs): it announces with 5 offers when it joins and again every `interval`, and
// answers every offer it gets, here the instant it gets it (real browsers take tens of
// milliseconds or more, which only spreads the answers out). Residents join first; then the
// newcomers arrive within a few seconds. With --swarms 2 every client joins two swarms over its
// one socket at once, as Shoal and p2p-media-loader players do (two renditions).
//
//   node tracker/bench/flash-crowd.mjs [--residents 20] [--newcomers 100000] [--within-s 10]
//        [--swarms 1] [--messages-per-second N] [--message-burst N] (default: the tracker defaults)
//
// Prints the tracker's counters and, over all connections, the most messages one connection sent
// in any second and the token bucket it needed. Needs tracker/dist (npx tsc -p tracker/tsconfig.json).

import { parseArgs } from 'node:util';
import { burstNeeded, maxInWindow, REFILL_RATES } from './message-tap.mjs';

const OFFERS_PER_ANNOUNCE = 5;
const SDP = { type: 'offer', sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\n' };
const ANSWER = { type: 'answer', sdp: 'v=0\r\no=- 3 4 IN IP4 127.0.0.1\r\ns=-\r\n' };

/** A 20-char binary id from a number. */
const binaryId = (prefix, n) => `${prefix}${String(n).padStart(20 - prefix.length, '0')}`;

/**
 * Runs one crowd. `tracker` is the tracker module (src in tests, dist from the command line):
 * { MessageHandler, Connection }. Returns the handler's counters and per-connection message times.
 */
export function runFlashCrowd(tracker, { handlerOptions, residents, residentsOverS = 60, newcomers, withinS, swarms = 1, settleS = 30, seed = 1 }) {
  const { MessageHandler, Connection } = tracker;
  const handler = new MessageHandler(handlerOptions);
  const infoHashes = Array.from({ length: swarms }, (_, i) => binaryId('crowd-', i));
  let random = seed;
  const nextRandom = () => {
    // mulberry32: a seeded PRNG, so a crowd's arrival times repeat.
    random = (random + 0x6d2b79f5) | 0;
    let t = Math.imul(random ^ (random >>> 15), 1 | random);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  // Three queues, each in time order: joins (sorted up front), answers (sent when an offer
  // arrives, so in processing order) and re-announces (one interval after each announce).
  const joins = [];
  const answers = [];
  const reannounces = [];
  let answerHead = 0;
  let reannounceHead = 0;
  let nowMs = 0;
  const clients = [];

  class ModelClient extends Connection {
    times = [];
    failures = 0;
    offerCount = 0;
    constructor(index) {
      super('127.0.0.1', '');
      this.index = index;
      this.peerId = binaryId('-WW0001-', index);
    }
    send(frame) {
      const message = JSON.parse(typeof frame === 'string' ? frame : Buffer.from(frame).toString());
      if (message['failure reason'] !== undefined) this.failures++;
      else if (message.offer !== undefined) answers.push({ atMs: nowMs, client: this, infoHash: message.info_hash, to: message.peer_id, offerId: message.offer_id });
      return true;
    }
    close() {
      this.closedByTracker = true;
    }
    transmit(message) {
      this.times.push(nowMs);
      handler.handleMessage(this, Buffer.from(JSON.stringify(message)), nowMs);
    }
    announce(infoHash, event) {
      const offers = Array.from({ length: OFFERS_PER_ANNOUNCE }, () => ({ offer: SDP, offer_id: binaryId('o', this.offerCount++ * 1e6 + this.index) }));
      this.transmit({ action: 'announce', ...(event ? { event } : {}), info_hash: infoHash, peer_id: this.peerId, numwant: OFFERS_PER_ANNOUNCE, offers });
      reannounces.push({ atMs: nowMs + handlerOptions.announceIntervalSec * 1000, client: this, infoHash });
    }
  }

  for (let i = 0; i < residents; i++) joins.push(nextRandom() * residentsOverS * 1000);
  const crowdStartMs = residentsOverS * 1000 + 5000;
  for (let i = 0; i < newcomers; i++) joins.push(crowdStartMs + nextRandom() * withinS * 1000);
  joins.sort((a, b) => a - b);
  const endMs = crowdStartMs + (withinS + settleS) * 1000;

  let joinHead = 0;
  for (;;) {
    const joinAt = joinHead < joins.length ? joins[joinHead] : Infinity;
    const answerAt = answerHead < answers.length ? answers[answerHead].atMs : Infinity;
    const reannounceAt = reannounceHead < reannounces.length ? reannounces[reannounceHead].atMs : Infinity;
    nowMs = Math.min(joinAt, answerAt, reannounceAt);
    if (nowMs > endMs) break;
    if (answerAt === nowMs) {
      const { client, infoHash, to, offerId } = answers[answerHead++];
      client.transmit({ action: 'announce', info_hash: infoHash, peer_id: client.peerId, to_peer_id: to, answer: ANSWER, offer_id: offerId });
    } else if (joinAt === nowMs) {
      joinHead++;
      const client = new ModelClient(clients.length);
      clients.push(client);
      handler.handleOpen(client, nowMs);
      for (const infoHash of infoHashes) client.announce(infoHash, 'started');
    } else {
      const { client, infoHash } = reannounces[reannounceHead++];
      client.announce(infoHash);
    }
  }
  return { counters: { ...handler.counters }, clients };
}

/** The worst connection's figures. */
export function worstConnection(clients, rates = REFILL_RATES) {
  let max1s = 0;
  let max10s = 0;
  let maxMessages = 0;
  const needed = Object.fromEntries(rates.map((rate) => [rate, 0]));
  for (const client of clients) {
    maxMessages = Math.max(maxMessages, client.times.length);
    max1s = Math.max(max1s, maxInWindow(client.times, 1000));
    max10s = Math.max(max10s, maxInWindow(client.times, 10_000));
    for (const rate of rates) needed[rate] = Math.max(needed[rate], burstNeeded(client.times, rate));
  }
  return { maxMessages, max1s, max10s, burstNeeded: needed, failures: clients.reduce((sum, c) => sum + c.failures, 0) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      residents: { type: 'string', default: '20' },
      newcomers: { type: 'string', default: '100000' },
      'within-s': { type: 'string', default: '10' },
      swarms: { type: 'string', default: '1' },
      'messages-per-second': { type: 'string' },
      'message-burst': { type: 'string' },
    },
  });
  const tracker = await import('../dist/index.js');
  const handlerOptions = {
    ...tracker.DEFAULT_OPTIONS,
    messagesPerSecond: Number(values['messages-per-second'] ?? tracker.DEFAULT_OPTIONS.messagesPerSecond),
    messageBurst: Number(values['message-burst'] ?? tracker.DEFAULT_OPTIONS.messageBurst),
  };
  const started = Date.now();
  const { counters, clients } = runFlashCrowd(tracker, {
    handlerOptions,
    residents: Number(values.residents),
    newcomers: Number(values.newcomers),
    withinS: Number(values['within-s']),
    swarms: Number(values.swarms),
  });
  const worst = worstConnection(clients);
  console.log(`${values.residents} residents, ${values.newcomers} newcomers within ${values['within-s']} s, ${values.swarms} swarm(s) per socket; bucket ${handlerOptions.messagesPerSecond}/s, burst ${handlerOptions.messageBurst}`);
  console.log(`tracker: announces ${counters.announces}, answers ${counters.answers}, offers relayed ${counters.offersRelayed}, rate-limited ${counters.rateLimited}, failures ${counters.failures}`);
  console.log(`worst connection: ${worst.maxMessages} messages, ${worst.max1s} in one second, ${worst.max10s} in 10 s; burst needed at ${REFILL_RATES.join(', ')}/s: ${REFILL_RATES.map((rate) => worst.burstNeeded[rate]).join(', ')}`);
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s wall)`);
}
