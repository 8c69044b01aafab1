// What a frame the tracker will not parse is about: its `action` and `info_hash`, so that the
// refusal can name them. bittorrent-tracker's client (WebTorrent, p2p-media-loader) routes every
// message by `action` first (a message without one makes it destroy the socket that all its
// torrents share, and reconnect) and then by `info_hash` (the torrent a failure is a warning for).
//
// Cheap on purpose: a rate-limited frame must cost far less than a parsed one. The keys are
// searched as JSON.stringify writes them (no spaces), which every client does; a 5 KB offer is
// never decoded. In valid JSON `"info_hash":"` can only be a key, since a quote inside a string
// is always escaped; in a nested object or a broken frame it is the sender's own bytes that come
// back, which names nothing of anyone else's.

import { isBinaryId } from './protocol.js';

export interface RequestRouting {
  action?: 'announce' | 'scrape';
  /** A valid 20-character binary info_hash, or absent. */
  infoHash?: string;
}

const ANNOUNCE_KEY = '"action":"announce"';
const SCRAPE_KEY = '"action":"scrape"';
const INFO_HASH_KEY = '"info_hash":"';
const ANNOUNCE_KEY_BYTES = Buffer.from(ANNOUNCE_KEY);
const SCRAPE_KEY_BYTES = Buffer.from(SCRAPE_KEY);
const INFO_HASH_KEY_BYTES = Buffer.from(INFO_HASH_KEY);
/** The longest a 20-byte id can be written: every char as a six-character \u00XX escape. */
const MAX_ID_TEXT = 20 * 6;

/** The frame's action and info_hash where they can be read without parsing it. */
export function routingOf(frame: string | Uint8Array): RequestRouting {
  const routing: RequestRouting = {};
  // The text after the info_hash key's opening quote, long enough for any written id.
  let infoHashText: string | undefined;
  if (typeof frame === 'string') {
    if (frame.includes(ANNOUNCE_KEY)) routing.action = 'announce';
    else if (frame.includes(SCRAPE_KEY)) routing.action = 'scrape';
    const at = frame.indexOf(INFO_HASH_KEY);
    if (at >= 0) infoHashText = frame.slice(at + INFO_HASH_KEY.length, at + INFO_HASH_KEY.length + MAX_ID_TEXT + 1);
  } else {
    const bytes = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
    if (bytes.includes(ANNOUNCE_KEY_BYTES)) routing.action = 'announce';
    else if (bytes.includes(SCRAPE_KEY_BYTES)) routing.action = 'scrape';
    const at = bytes.indexOf(INFO_HASH_KEY_BYTES);
    // UTF-8 takes two bytes for each char 0x80-0xff.
    const start = at + INFO_HASH_KEY_BYTES.length;
    if (at >= 0) infoHashText = bytes.toString('utf8', start, Math.min(bytes.length, start + 2 * MAX_ID_TEXT + 1));
  }
  if (infoHashText !== undefined) {
    const infoHash = stringValue(infoHashText);
    if (isBinaryId(infoHash)) routing.infoHash = infoHash;
  }
  return routing;
}

/** The JSON string whose body (after the opening quote) `text` starts with, or undefined. */
function stringValue(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') i++;
    else if (char === '"') {
      try {
        return JSON.parse(`"${text.slice(0, i)}"`) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
