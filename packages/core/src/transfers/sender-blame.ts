// Who sent a copy that failed verification. One peer sent all its P2P bytes: that peer (the origin,
// trusted, sent the rest). Several peers, each some byte ranges of one copy: the copy alone cannot
// say whose bytes are bad, so it is kept until the origin's copy of the segment arrives, and only a
// peer one of whose ranges differs from the origin's is banned. Never fetched from the origin
// (nobody waits for the segment): nobody is banned.
import type { PeerSession } from '../peers/peer.js';
import type { SenderRange } from './transfer.js';

/** The one peer that sent every P2P byte of a copy, or undefined when several did. */
export function soleSender(senders: readonly SenderRange[]): PeerSession | undefined {
  const peers = new Set(senders.filter((sender) => sender.end > sender.start).map((sender) => sender.peer));
  return peers.size === 1 ? peers.values().next().value : undefined;
}

/** The senders of `failed` one of whose ranges differs from the origin's copy. */
export function sendersOfBadBytes(failed: { bytes: Uint8Array; senders: readonly SenderRange[] }, originBytes: Uint8Array): PeerSession[] {
  const all = [...new Set(failed.senders.map((sender) => sender.peer))];
  if (failed.bytes.length !== originBytes.length) return all;
  const bad = new Set<PeerSession>();
  for (const { peer, start, end } of failed.senders) {
    if (bad.has(peer)) continue;
    for (let at = start; at < end; at++) {
      if (failed.bytes[at] !== originBytes[at]) {
        bad.add(peer);
        break;
      }
    }
  }
  return [...bad];
}
