// 20-byte ids (info_hash, peer_id, offer_id) in their two spellings: the WebTorrent tracker
// protocol's 20-character binary strings (one char per byte) and our 40-character hex.
import { toHex } from '../identity.js';

/** A binary id (one char per byte, each below 256) as hex. */
export const binaryToHex = (binary: string): string => toHex(Uint8Array.from(binary, (char) => char.charCodeAt(0)));

export function hexToBinary(hex: string): string {
  let binary = '';
  for (let i = 0; i < hex.length; i += 2) binary += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return binary;
}

export const isBinaryId = (value: unknown): value is string =>
  typeof value === 'string' && value.length === 20 && !/[^\0-\xff]/.test(value);

/** 20 random bytes as a binary string; `prefix` (ASCII) replaces the first bytes. */
export function randomBinaryId(prefix = ''): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20 - prefix.length));
  return prefix + String.fromCharCode(...bytes);
}
