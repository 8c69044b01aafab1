// The WebTorrent tracker protocol over WebSocket, as bittorrent-tracker's client speaks it:
// JSON text frames; `info_hash`, `peer_id`, `to_peer_id` and `offer_id` are 20-character
// "binary strings" (one char per byte, code points 0-255). This module turns one received
// frame into a validated request, or into the failure reason to send back. No I/O here.
// (Announces and answers arriving as text frames take the byte-level fast path in
// frame-reader.ts first; this parser decides everything else.)
//
// Values the tracker relays (offers, answers, ids) are kept as JSON slices, so relaying them
// never re-serializes them.

import { jsonSliceOf, type JsonSlice } from './json-slice.js';
import type { AnnounceEvent } from './swarm-registry.js';

export interface RelayOffer {
  /** The `offer` object (an SDP description), as JSON. */
  offer: JsonSlice;
  offerId: string;
}

export interface AnnounceRequest {
  kind: 'announce';
  infoHash: string;
  peerId: string;
  event: AnnounceEvent;
  left: number;
  /** BitTorrent's `key`: a secret of the client's that lets it take its peer_id over from another socket. */
  key: string | null;
  /** How many peers the client wants offers sent to (min of numwant and offers.length). */
  numwant: number;
  offers: RelayOffer[];
}

export interface AnswerRequest {
  kind: 'answer';
  infoHash: string;
  peerId: string;
  toPeerId: string;
  offerId: string;
  /** The `answer` object (an SDP description), as JSON. */
  answer: JsonSlice;
}

export interface ScrapeRequest {
  kind: 'scrape';
  /** null: a full scrape (every swarm), which the server may refuse. */
  infoHashes: string[] | null;
}

export interface InvalidRequest {
  kind: 'invalid';
  reason: string;
  /** Echoed so bittorrent-tracker's client can route the failure to the right torrent. */
  action?: 'announce' | 'scrape';
  infoHash?: string;
}

export type TrackerRequest = AnnounceRequest | AnswerRequest | ScrapeRequest | InvalidRequest;

export interface ParseLimits {
  maxOffers: number;
  maxScrapeInfoHashes: number;
}

/** True for a 20-character string whose characters are all bytes (code points 0-255). */
export function isBinaryId(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 20) return false;
  for (let i = 0; i < 20; i++) if (value.charCodeAt(i) > 0xff) return false;
  return true;
}

/** The longest `key` accepted (BitTorrent clients send 8 hex digits; Shoal's client 20 random bytes). */
export const MAX_KEY_LENGTH = 64;

/** True for a `key`: 1 to MAX_KEY_LENGTH characters, all bytes (code points 0-255), as the ids. */
export function isAnnounceKey(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_KEY_LENGTH) return false;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0xff) return false;
  return true;
}

/** 40 lowercase hex digits for a binary id, as operators and allow-lists write info_hashes. */
export function binaryIdToHex(id: string): string {
  let hex = '';
  for (let i = 0; i < id.length; i++) hex += id.charCodeAt(i).toString(16).padStart(2, '0');
  return hex;
}

/** The binary id for 40 hex digits, or null when the text is not exactly that. */
export function hexToBinaryId(hex: string): string | null {
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) return null;
  let id = '';
  for (let i = 0; i < 40; i += 2) id += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return id;
}

/** Announce events by name; a null prototype, so `constructor` and the like are not events. */
export const EVENTS: Record<string, AnnounceEvent | undefined> = Object.assign(Object.create(null) as Record<string, AnnounceEvent>, {
  started: 'started',
  update: 'update',
  completed: 'completed',
  stopped: 'stopped',
  paused: 'paused',
  // bittorrent-tracker treats a missing or "empty" event as a plain update.
  empty: 'update',
  '': 'update',
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseRequest(text: string, limits: ParseLimits): TrackerRequest {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'invalid JSON' };
  }
  if (!isObject(message)) return { kind: 'invalid', reason: 'request must be a JSON object' };
  if (message.action === 'announce') return parseAnnounce(message, limits);
  if (message.action === 'scrape') return parseScrape(message, limits);
  return { kind: 'invalid', reason: `invalid action in WS request: ${String(message.action).slice(0, 32)}` };
}

function parseAnnounce(message: Record<string, unknown>, limits: ParseLimits): TrackerRequest {
  const infoHash = message.info_hash;
  if (!isBinaryId(infoHash)) return { kind: 'invalid', action: 'announce', reason: 'invalid info_hash' };
  const fail = (reason: string): InvalidRequest => ({ kind: 'invalid', action: 'announce', reason, infoHash });
  const peerId = message.peer_id;
  if (!isBinaryId(peerId)) return fail('invalid peer_id');

  if (message.answer !== undefined) {
    if (!isBinaryId(message.to_peer_id)) return fail('invalid `to_peer_id` (required with `answer`)');
    if (!isBinaryId(message.offer_id)) return fail('invalid `offer_id` (required with `answer`)');
    if (!isObject(message.answer)) return fail('invalid `answer`');
    return { kind: 'answer', infoHash, peerId, toPeerId: message.to_peer_id, offerId: message.offer_id, answer: jsonSliceOf(message.answer) };
  }

  const eventName = message.event === undefined ? 'update' : message.event;
  const event = typeof eventName === 'string' ? EVENTS[eventName] : undefined;
  if (!event) return fail('invalid event');

  // bittorrent-tracker: a non-numeric `left` counts as "unknown", i.e. not a seeder.
  let left = message.left === undefined ? Infinity : Number(message.left);
  if (Number.isNaN(left)) left = Infinity;
  if (message.key !== undefined && !isAnnounceKey(message.key)) return fail(`invalid \`key\` (1-${MAX_KEY_LENGTH} characters, code points 0-255)`);
  const key = message.key ?? null;

  const offers: RelayOffer[] = [];
  if (message.offers !== undefined && event !== 'stopped') {
    if (!Array.isArray(message.offers)) return fail('invalid `offers`');
    const usable = Math.min(message.offers.length, limits.maxOffers);
    for (let i = 0; i < usable; i++) {
      const entry: unknown = message.offers[i];
      if (!isObject(entry) || !isObject(entry.offer) || !isBinaryId(entry.offer_id)) return fail('invalid `offers`');
      offers.push({ offer: jsonSliceOf(entry.offer), offerId: entry.offer_id });
    }
  }
  let numwant = offers.length;
  if (message.numwant !== undefined) {
    const wanted = Number(message.numwant);
    if (Number.isFinite(wanted) && wanted >= 0) numwant = Math.min(numwant, Math.floor(wanted));
  }
  return { kind: 'announce', infoHash, peerId, event, left, key, numwant, offers };
}

function parseScrape(message: Record<string, unknown>, limits: ParseLimits): TrackerRequest {
  const value = message.info_hash;
  if (value === undefined || value === null) return { kind: 'scrape', infoHashes: null };
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) return { kind: 'invalid', action: 'scrape', reason: 'invalid info_hash' };
  if (list.length > limits.maxScrapeInfoHashes) {
    return { kind: 'invalid', action: 'scrape', reason: `too many info_hashes (at most ${limits.maxScrapeInfoHashes} per scrape)` };
  }
  for (const infoHash of list) {
    if (!isBinaryId(infoHash)) return { kind: 'invalid', action: 'scrape', reason: 'invalid info_hash' };
  }
  return { kind: 'scrape', infoHashes: list as string[] };
}
