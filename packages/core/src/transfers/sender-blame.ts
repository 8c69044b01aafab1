// Who sent a copy that failed verification. One sender: that peer (and the origin, which is
// trusted, for any Range remainder). Several peers, each a byte range of one copy: the copy alone
// cannot say whose bytes are bad, so the failed copy is kept until the origin's copy of the segment
// arrives, and only a peer whose range differs from the origin's is banned. Never fetched from the
// origin (nobody waits for the segment): nobody is banned.
import type { PeerSession } from '../peers/peer.js';

/** A peer that sent part of a transfer's bytes: those from `fromByte` to the next sender's. */
export interface Sender {
  peer: PeerSession;
  fromByte: number;
}

/** A copy from several peers that failed verification, kept to be compared with the origin's copy. */
export interface FailedMixedCopy {
  bytes: Uint8Array;
  senders: readonly Sender[];
  /** Where the peers' bytes end: an HTTP Range request brought the rest. */
  endByte: number;
}

/** The senders of `failed` whose bytes differ from the origin's copy (bytes not sent by a peer are the origin's own). */
export function sendersOfBadBytes(failed: FailedMixedCopy, originBytes: Uint8Array): PeerSession[] {
  if (failed.bytes.length !== originBytes.length) return failed.senders.map((sender) => sender.peer);
  const bad: PeerSession[] = [];
  failed.senders.forEach((sender, index) => {
    const end = failed.senders[index + 1]?.fromByte ?? failed.endByte;
    for (let at = sender.fromByte; at < end; at++) {
      if (failed.bytes[at] !== originBytes[at]) {
        bad.push(sender.peer);
        break;
      }
    }
  });
  return bad;
}
