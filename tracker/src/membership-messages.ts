// The messages between cluster nodes, byte by byte (cluster-membership.ts says what they do):
//
//   JOIN        1, entry with key          a peer joined here, completed, or moved to a socket here
//   LEAVE       2, entry                   a peer here left
//   RELAY       3, u32 connection, frame   a frame for a socket of the receiver
//   SYNC        4, entries with keys       the first part of all the sender's peers: forget what you held of mine
//   HELLO       5                          send me your peers
//   BYE         6                          I am leaving: drop my peers
//   RELAY_OFFER 7, u32 connection, info_hash, offerer's peer_id, offer_id, frame
//   SYNC_MORE   8, entries with keys       a further part of a SYNC
//
// An entry: u32 connection id, u8 complete, info_hash (20), peer_id (20); with key: u8 key length,
// the key's bytes. Ids and keys are binary strings, one byte per code point (0-255). Integers
// are big-endian.

import type { Connection } from './connection.js';
import type { PeerEntry } from './swarm-registry.js';

export const JOIN = 1;
export const LEAVE = 2;
export const RELAY = 3;
export const SYNC = 4;
export const HELLO = 5;
export const BYE = 6;
export const RELAY_OFFER = 7;
export const SYNC_MORE = 8;

export const ID_BYTES = 20;
/** An entry without its key: connection id, complete, info_hash, peer_id. */
export const ENTRY_BYTES = 4 + 1 + ID_BYTES * 2;
/** RELAY_OFFER's header after its type: connection id, info_hash, offerer's peer_id, offer_id. */
export const OFFER_HEADER_BYTES = 4 + ID_BYTES * 3;

export const entryBytes = (peer: PeerEntry<Connection>, withKey: boolean) => ENTRY_BYTES + (withKey ? 1 + (peer.key?.length ?? 0) : 0);

export function writeId(target: Uint8Array, offset: number, id: string): void {
  for (let i = 0; i < id.length; i++) target[offset + i] = id.charCodeAt(i);
}

export function readId(bytes: Uint8Array, offset: number, length = ID_BYTES): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/** Writes `peer`'s entry as owned by socket `connectionId`; returns the offset after it. */
export function writeEntry(target: Uint8Array, offset: number, peer: PeerEntry<Connection>, connectionId: number, withKey: boolean): number {
  new DataView(target.buffer, target.byteOffset).setUint32(offset, connectionId);
  target[offset + 4] = peer.complete ? 1 : 0;
  writeId(target, offset + 5, peer.swarm.infoHash);
  writeId(target, offset + 5 + ID_BYTES, peer.peerId);
  if (!withKey) return offset + ENTRY_BYTES;
  const key = peer.key ?? '';
  target[offset + ENTRY_BYTES] = key.length;
  writeId(target, offset + ENTRY_BYTES + 1, key);
  return offset + ENTRY_BYTES + 1 + key.length;
}

/** A message of `type` holding one entry. */
export function encodeEntry(type: number, peer: PeerEntry<Connection>, connectionId: number): Uint8Array {
  const withKey = type !== LEAVE;
  const payload = new Uint8Array(1 + entryBytes(peer, withKey));
  payload[0] = type;
  writeEntry(payload, 1, peer, connectionId, withKey);
  return payload;
}

/** A LEAVE's entry (`key` null), or a JOIN's with its key; `end` is the offset after it. Throws on a short one. */
export function decodeEntry(view: DataView, offset: number, withKey = true) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let end = offset + ENTRY_BYTES;
  let key: string | null = null;
  if (withKey) {
    if (end >= bytes.length) throw new RangeError('entry length');
    const keyLength = bytes[end]!;
    if (keyLength > 0) key = readId(bytes, end + 1, keyLength);
    end += 1 + keyLength;
  }
  if (end > bytes.length) throw new RangeError('entry length');
  return {
    connectionId: view.getUint32(offset),
    complete: bytes[offset + 4] === 1,
    infoHash: readId(bytes, offset + 5),
    peerId: readId(bytes, offset + 5 + ID_BYTES),
    key,
    end,
  };
}
