// The frames the tracker writes on every announce (its response, the offers it relays) and
// answer, assembled from byte parts in bittorrent-tracker's key order without serializing a
// value; and failures, in bittorrent-tracker's shape.

import { FrameWriter, framePart } from './frame-writer.js';
import type { JsonSlice } from './json-slice.js';

const RESPONSE_START = framePart('{"action":"announce","interval":');
const RESPONSE_INFO_HASH = framePart(',"info_hash":');
const RESPONSE_COMPLETE = framePart(',"complete":');
const RESPONSE_INCOMPLETE = framePart(',"incomplete":');
const OFFER_START = framePart('{"action":"announce","offer":');
const ANSWER_START = framePart('{"action":"announce","answer":');
const RELAY_OFFER_ID = framePart(',"offer_id":');
const RELAY_PEER_ID = framePart(',"peer_id":');
const RELAY_INFO_HASH = framePart(',"info_hash":');
const FRAME_END = framePart('}');

/**
 * Each frame is valid until the next one is made. A relayed offer or answer carries the
 * sender's SDP as received, the offer id, the sender's peer id and the swarm's info_hash.
 */
export class OutgoingFrames {
  private readonly writer = new FrameWriter();

  announceResponse(intervalSec: number, infoHash: string, complete: number, incomplete: number): Uint8Array {
    return this.writer
      .begin()
      .part(RESPONSE_START)
      .integer(intervalSec)
      .part(RESPONSE_INFO_HASH)
      .binaryId(infoHash)
      .part(RESPONSE_COMPLETE)
      .integer(complete)
      .part(RESPONSE_INCOMPLETE)
      .integer(incomplete)
      .part(FRAME_END)
      .frame();
  }

  offer(sdp: JsonSlice, offerId: string, peerId: string, infoHash: string): Uint8Array {
    return this.relay(OFFER_START, sdp, offerId, peerId, infoHash);
  }

  answer(sdp: JsonSlice, offerId: string, peerId: string, infoHash: string): Uint8Array {
    return this.relay(ANSWER_START, sdp, offerId, peerId, infoHash);
  }

  private relay(start: Uint8Array, sdp: JsonSlice, offerId: string, peerId: string, infoHash: string): Uint8Array {
    return this.writer
      .begin()
      .part(start)
      .slice(sdp)
      .part(RELAY_OFFER_ID)
      .binaryId(offerId)
      .part(RELAY_PEER_ID)
      .binaryId(peerId)
      .part(RELAY_INFO_HASH)
      .binaryId(infoHash)
      .part(FRAME_END)
      .frame();
  }
}

/**
 * A failure in bittorrent-tracker's shape (action, failure reason, info_hash), plus `min
 * interval` when the client should wait that many seconds before its next announce.
 */
export function failureFrame(reason: string, action?: 'announce' | 'scrape', infoHash?: string, minIntervalSec?: number): string {
  const response: Record<string, string | number> = {};
  if (action) response.action = action;
  response['failure reason'] = reason;
  if (infoHash !== undefined) response.info_hash = infoHash;
  if (minIntervalSec !== undefined) response['min interval'] = minIntervalSec;
  return JSON.stringify(response);
}
