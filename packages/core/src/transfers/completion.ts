// A transfer's copy is whole: verify what came from peers, store it, announce it, hand it to the
// loads waiting for it. A copy that fails verification bans its one sender, or, sent by several,
// is kept until the origin's copy arrives and says whose ranges were bad (sender-blame.ts). A copy
// a live manifest does not list yet is parked until the manifest can be fetched again.
import { createLogger } from '../logger.js';
import type { SegmentSource } from '../types.js';
import { SegmentState } from '../wire/peer-protocol.js';
import type { P2PWaste } from './p2p-waste.js';
import type { PendingLoads, LoadTiming } from './pending-loads.js';
import { sendersOfBadBytes, soleSender } from './sender-blame.js';
import type { Transfer, TransfersContext, TransferStream } from './transfer.js';

const log = createLogger('shoal:core:transfers');

/** Checks of P2P bytes the integrity manifest does not list yet, before they are given up (a live manifest lags its playlist). */
const MAX_INTEGRITY_CHECKS = 3;

/** What completion needs of the Transfers host. */
export interface CompletionHost {
  stream: TransferStream;
  context: TransfersContext;
  waiters: PendingLoads;
  isCurrent(transfer: Transfer): boolean;
  remove(transfer: Transfer): void;
  /** Its P2P waste counts: bad or unverifiable P2P bytes exhaust a segment's (it comes over HTTP only from now on). */
  waste: Pick<P2PWaste, 'exhaust' | 'clear'>;
  /** The whole segment again from the origin; returns its new transfer. */
  refetch(transfer: Transfer): Transfer;
}

export async function settleCompleted(transfer: Transfer, host: CompletionHost): Promise<void> {
  const { stream, context } = host;
  const { verifier, clock } = context;
  const sequence = transfer.sequence;
  const bytes = transfer.buffer!;
  if (transfer.p2pBytes > 0 && verifier.enabled) {
    transfer.state = 'verifying';
    const verdict = await verifier.verify(transfer.ref, bytes);
    if (!host.isCurrent(transfer)) return;
    log(`#${sequence} P2P bytes ${verdict}`, stream.key);
    if (verdict === 'unverifiable' && ++transfer.checks < MAX_INTEGRITY_CHECKS) {
      // A live manifest lags the playlist: keep the bytes until it can be fetched again, rather
      // than drop them and download the same segment again (and again) from peers.
      transfer.state = 'parked';
      transfer.recheckAtMs = Math.max(verifier.nextRefreshMs, clock.now() + 1);
      context.replan();
      return;
    }
    if (verdict !== 'valid') return failVerification(transfer, verdict, host);
  }
  host.remove(transfer);
  host.waste.clear(sequence);
  if (transfer.failedMixedCopy) for (const peer of sendersOfBadBytes(transfer.failedMixedCopy, bytes)) ban(peer, sequence, stream);
  if (transfer.p2pBytes > 0 && transfer.httpBytes === 0) stream.stats.p2pSegments++;
  if (transfer.ref.durationS > 0) stream.learnBitrate(bytes.length / transfer.ref.durationS);
  const stored = context.store.put(transfer.ref, bytes);
  // e2e/browser-test/multi-sender.spec.ts reads "from N peers" in this line.
  log(`#${sequence} complete: ${transfer.p2pBytes} bytes P2P from ${new Set(transfer.senders.filter((sender) => sender.end > sender.start).map((sender) => sender.peer)).size} peers, ${transfer.httpBytes} HTTP`, stream.key);
  stream.pool.announce(sequence, stored ? SegmentState.has : SegmentState.none);
  const source: SegmentSource = transfer.p2pBytes > transfer.httpBytes ? 'p2p' : 'http';
  let first = true;
  host.waiters.settle(sequence, (waiter) => {
    const now = clock.now();
    const origin = transfer.origin && transfer.p2pBytes === 0 ? { requestMs: transfer.origin.requestMs, firstByteMs: transfer.origin.firstByteMs ?? now } : undefined;
    const timing: LoadTiming = { requestMs: waiter.requestMs, firstByteMs: Math.max(transfer.firstByteMs ?? now, waiter.requestMs), doneMs: now, ...(origin ? { origin } : {}) };
    // The store copied the bytes: the first load may take this buffer, the others get copies.
    const own = first ? bytes : bytes.slice();
    first = false;
    context.emit('segment-loaded', { ref: waiter.ref, source, bytes: own.length, timing });
    waiter.resolve({ bytes: own, source, timing });
  });
  context.replan();
}

/** The player gets only bytes that pass: the senders are blamed as far as the copy can tell, and the segment starts over from the origin. */
function failVerification(transfer: Transfer, verdict: 'invalid' | 'unverifiable', host: CompletionHost): void {
  const { stream, context } = host;
  const sequence = transfer.sequence;
  stream.pool.abandonRelayedUploads(sequence);
  host.waste.exhaust(sequence);
  const sole = verdict === 'invalid' ? soleSender(transfer.senders) : undefined;
  if (sole) ban(sole, sequence, stream);
  if (host.waiters.has(sequence)) {
    const again = host.refetch(transfer);
    // Several peers sent parts: the origin's copy will tell whose were bad.
    if (verdict === 'invalid' && !sole) again.failedMixedCopy = { bytes: transfer.buffer!, senders: transfer.senders };
  } else {
    host.remove(transfer);
    stream.pool.announce(sequence, SegmentState.none);
  }
  context.replan();
}

function ban(peer: Parameters<TransferStream['pool']['ban']>[0], sequence: number, stream: TransferStream): void {
  stream.pool.ban(peer, `segment ${sequence} failed verification`);
  peer.close('sent a segment that failed verification');
}
