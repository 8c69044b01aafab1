// The byte-level fast path against the reference parser: for every frame, readFrame either
// declines (null) or returns exactly what parseRequest returns, with relayed objects that are the
// sender's bytes and parse to the same values.

import { describe, expect, it } from 'vitest';
import { readFrame } from '../src/frame-reader.js';
import { FrameWriter } from '../src/frame-writer.js';
import type { JsonSlice } from '../src/json-slice.js';
import { parseRequest, type TrackerRequest } from '../src/protocol.js';
import { binaryId } from './support/ws-peer.js';

const limits = { maxOffers: 3, maxScrapeInfoHashes: 50 };
const utf8 = (text: string) => new TextEncoder().encode(text);
const decode = (slice: JsonSlice) => new TextDecoder().decode(slice.source.subarray(slice.start, slice.end));

/** Both parsers' views with JSON slices replaced by their text, so they compare by value. */
function comparable(request: TrackerRequest | null) {
  if (!request) return null;
  if (request.kind === 'announce') return { ...request, offers: request.offers.map((o) => ({ offerId: o.offerId, offer: JSON.parse(decode(o.offer)) as unknown })) };
  if (request.kind === 'answer') return { ...request, answer: JSON.parse(decode(request.answer)) as unknown };
  return request;
}

const infoHash = binaryId('swarm');
const peerId = binaryId('peer');
const nastySdp = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\na=x:"quoted" back\\slash /slash é ü ÿ € 𝄞 \u2028 \u0001 \t end';
const announce = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ action: 'announce', event: 'started', info_hash: infoHash, peer_id: peerId, left: 10, numwant: 2, offers: [{ offer: { type: 'offer', sdp: nastySdp }, offer_id: binaryId('o1') }, { offer: { type: 'offer', sdp: 'v=0 b' }, offer_id: binaryId('o2') }], ...extra });

const frames: Record<string, string> = {
  'a typical announce': announce({ offers: [{ offer: { type: 'offer', sdp: 'v=0\r\n' }, offer_id: binaryId('o1') }] }),
  'SDP with escapes and non-ASCII': announce(),
  'hand-written escapes in the offer': `{"action":"announce","info_hash":${JSON.stringify(infoHash)},"peer_id":${JSON.stringify(peerId)},"offers":[{"offer_id":${JSON.stringify(binaryId('o'))},"offer":{"type":"offer","sdp":"a\\u0041\\/\\"}\\\\{[","x":[1,{"y":"]}"}]}}]}`,
  'whitespace everywhere': ` \n{ "action" : "announce" ,\t"info_hash" :\r\n${JSON.stringify(infoHash)} , "peer_id":${JSON.stringify(peerId)},"numwant" : 1e0 , "offers" : [ { "offer" : { "sdp" : "s" , "type" : "offer" } , "offer_id" : ${JSON.stringify(binaryId('o'))} } ] } \n`,
  'ids written as \\u escapes': `{"action":"announce","info_hash":"${Array.from(infoHash, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}","peer_id":${JSON.stringify(peerId)}}`,
  'an id mixing escaped and raw non-ASCII': `{"action":"announce","info_hash":"\\u00c3\\u00a9${infoHash.slice(2)}","peer_id":"\\u00c3©${peerId.slice(2)}"}`,
  'an id with control characters': JSON.stringify({ action: 'announce', info_hash: '\u0000\u0001"\\\n' + infoHash.slice(5), peer_id: peerId }),
  'more offers than the cap, the rest malformed-ish': announce({ numwant: 9, offers: [1, 2, 3, 4].map((i) => ({ offer: { sdp: `s${i}` }, offer_id: binaryId(`o${i}`) })).concat([{ nonsense: [[[]]] } as never]) }),
  'duplicate keys (the last wins)': `{"action":"announce","info_hash":${JSON.stringify(binaryId('first'))},"peer_id":${JSON.stringify(peerId)},"info_hash":${JSON.stringify(infoHash)},"offers":[{"offer":{"sdp":"old"},"offer_id":${JSON.stringify(binaryId('o'))},"offer":{"sdp":"new"}}]}`,
  'an escaped key spelling offers': `{"action":"announce","info_hash":${JSON.stringify(infoHash)},"peer_id":${JSON.stringify(peerId)},"offers":[],"offer\\u0073":[{"offer":{"sdp":"escaped"},"offer_id":${JSON.stringify(binaryId('o'))}}]}`,
  'a raw offers string, then an escaped offers array': `{"action":"announce","info_hash":${JSON.stringify(infoHash)},"peer_id":${JSON.stringify(peerId)},"offers":"nope","offer\\u0073":[{"offer":{"sdp":"escaped"},"offer_id":${JSON.stringify(binaryId('o'))}}]}`,
  'an answer': JSON.stringify({ action: 'announce', info_hash: infoHash, peer_id: peerId, to_peer_id: binaryId('to'), offer_id: binaryId('o'), answer: { type: 'answer', sdp: nastySdp } }),
  'an answer that is not an object': JSON.stringify({ action: 'announce', info_hash: infoHash, peer_id: peerId, to_peer_id: binaryId('to'), offer_id: binaryId('o'), answer: 'x' }),
  'stopped with malformed offers': JSON.stringify({ action: 'announce', event: 'stopped', info_hash: infoHash, peer_id: peerId, offers: 'nope' }),
  'string numbers': announce({ left: '\u00a05', numwant: ' 1 ' }),
  'an id above 255': JSON.stringify({ action: 'announce', info_hash: 'ā'.repeat(20), peer_id: peerId }),
  'an id one char short': JSON.stringify({ action: 'announce', info_hash: infoHash.slice(1), peer_id: peerId }),
  'an unknown event': announce({ event: 'constructor' }),
  'a scrape': JSON.stringify({ action: 'scrape', info_hash: infoHash }),
  'a raw control character in the SDP': announce().replace('end', '\u0001end'),
  'trailing garbage': `${announce()}x`,
  'truncated': announce().slice(0, -3),
  'a lone surrogate escape in the SDP': announce().replace('end', '\\ud800end'),
  "an ASCII key (Shoal's: 40 hex digits)": announce({ key: '0123456789abcdef'.repeat(2) + '01234567' }),
  'a key of bytes above 127 and control characters': announce({ key: 'é\u0001ÿ"\\' }),
  'a key escaped to non-ASCII': announce().replace('"left"', '"key":"\\u00c3\\u00a9","left"'),
  'a key too long': announce({ key: 'k'.repeat(65) }),
  'a key above 255': announce({ key: 'ā' }),
};

describe('readFrame', () => {
  it.each(Object.entries(frames))('agrees with parseRequest on %s', (_name, text) => {
    const fast = readFrame(utf8(text), limits);
    const reference = parseRequest(text, limits);
    if (fast) expect(comparable(fast)).toEqual(comparable(reference));
  });

  it('agrees with parseRequest (and terminates) whatever type each field has', () => {
    const odd: unknown[] = ['nope', '', 5, -0.5, 1e300, null, true, {}, [], [[]], [{}], [{ offer: [] }], [{ offer: {}, offer_id: 7 }], { offer: {} }, '[{"offer":{}}]', binaryId('x')];
    const base = JSON.parse(announce()) as Record<string, unknown>;
    const answerBase = JSON.parse(frames['an answer']!) as Record<string, unknown>;
    for (const template of [base, answerBase]) {
      for (const field of [...Object.keys(template), 'offers', 'answer', 'key']) {
        for (const value of odd) {
          const text = JSON.stringify({ ...template, [field]: value });
          const fast = readFrame(utf8(text), limits);
          if (fast) expect(comparable(fast), text).toEqual(comparable(parseRequest(text, limits)));
        }
      }
    }
  });

  it('takes the fast path for the frames clients send, and relays their objects byte for byte', () => {
    const text = announce();
    const request = readFrame(utf8(text), limits);
    expect(request?.kind).toBe('announce');
    if (request?.kind !== 'announce') return;
    expect(request.offers).toHaveLength(2);
    expect(text).toContain(decode(request.offers[0]!.offer));
    expect(JSON.parse(decode(request.offers[0]!.offer))).toEqual({ type: 'offer', sdp: nastySdp });
    expect(readFrame(utf8(frames['an answer']!), limits)?.kind).toBe('answer');
    expect(readFrame(utf8(frames['whitespace everywhere']!), limits)?.kind).toBe('announce');
    expect(readFrame(utf8(frames['hand-written escapes in the offer']!), limits)?.kind).toBe('announce');
    expect(readFrame(utf8(frames["an ASCII key (Shoal's: 40 hex digits)"]!), limits)).toMatchObject({ kind: 'announce', key: '0123456789abcdef0123456789abcdef01234567' });
  });

  it('declines what it cannot vouch for, leaving the failure reason to parseRequest', () => {
    for (const name of ['an escaped key spelling offers', 'an id above 255', 'a scrape', 'a raw control character in the SDP', 'trailing garbage', 'truncated', 'an unknown event', 'string numbers', 'a key escaped to non-ASCII', 'a key too long']) {
      expect(readFrame(utf8(frames[name]!), limits), name).toBeNull();
    }
  });
});

describe('FrameWriter', () => {
  it('writes binary ids as JSON.stringify does, in UTF-8', () => {
    const ids = [infoHash, '\u0000\u0008\t\n\u000c\r\u001f"\\/\u007f\u0080\u00ff abcdefg'];
    for (const id of ids) {
      const frame = new FrameWriter().begin().binaryId(id).frame();
      expect(new TextDecoder().decode(frame)).toBe(JSON.stringify(id));
    }
  });

  it('writes integers and grows past its initial buffer', () => {
    const writer = new FrameWriter().begin();
    const big = { source: utf8(`"${'x'.repeat(40_000)}"`), start: 0, end: 40_002 };
    writer.integer(0).integer(7).integer(1234567890).slice(big);
    const text = new TextDecoder().decode(writer.frame());
    expect(text.slice(0, 12)).toBe('071234567890');
    expect(text.length).toBe(12 + 40_002);
  });
});
