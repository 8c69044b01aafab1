// Planning one stream: builds the scheduler's snapshot from the stream's rooms (its loads,
// transfers, seeding, peers and the store), calls plan(), and hands each action to the room that
// carries it out. Returns when to plan the stream again.
import type { EngineEmit } from '../engine-events.js';
import { createLogger } from '../logger.js';
import type { EngineOptions } from '../options.js';
import { deficitSeedShare, type NeighbourRate } from './seed-share.js';
import {
  P2P_RATE_SLACK,
  PREFETCH_STORE_SHARE,
  estimatedSegmentBytes,
  httpBudgetMs,
  nextPlanMs,
  parkedStep,
  plan,
  prefetchWindow,
  segmentDeadlineMs,
  type ModeWindows,
  type SegmentPlan,
} from './scheduler.js';
import type { Stream } from '../stream.js';
import type { Transfer } from '../transfers/transfer.js';
import type { Clock, PlaybackState, SegmentRef, SegmentStore } from '../types.js';

const log = createLogger('shoal:core:engine');

export interface PlanContext {
  clock: Clock;
  store: SegmentStore;
  emit: EngineEmit;
  /** The playback of the stream planned (the active one), else undefined. */
  playback: PlaybackState | undefined;
  playbackAtMs: number;
  windows: ModeWindows;
  httpThroughputBytesPerS: number;
  /** Bytes every download under way on the viewer's downlink (every stream's) is still to receive. */
  downlinkLeftBytes: number[];
  options: Pick<EngineOptions, 'p2pDownload' | 'maxP2PDownloads' | 'tickIntervalMs'>;
}

/** Plans one stream at `now`; returns when to plan it again (or Infinity). */
export function planStream(stream: Stream, now: number, context: PlanContext): number {
  const { store, playback, windows, httpThroughputBytesPerS, options } = context;
  const candidates = new Map<number, SegmentRef>();
  for (const sequence of stream.waiters.sequences()) candidates.set(sequence, stream.refs.get(sequence)!);
  for (const sequence of stream.transfers.sequences()) candidates.set(sequence, stream.refs.get(sequence)!);
  for (const sequence of stream.seeding.elected()) candidates.set(sequence, stream.refs.get(sequence)!);
  if (playback && options.p2pDownload && stream.pool.size > 0) {
    const sizeBytes = (ref: SegmentRef) => store.sizeOf(stream.key, ref.sequence) ?? estimatedSegmentBytes(ref, stream.bytesPerS);
    const budgetBytes = store.bytesLimit * PREFETCH_STORE_SHARE;
    for (const ref of prefetchWindow(stream.ordered, playback.positionS, windows.prefetchAheadS, budgetBytes, sizeBytes)) candidates.set(ref.sequence, ref);
  }
  const segments: SegmentPlan[] = [];
  let parkedWakeMs = Infinity;
  for (const [sequence, ref] of candidates) {
    if (!ref) continue;
    if (store.has(stream.key, sequence)) {
      stream.seeding.started(sequence);
      serveFromStore(stream, sequence, context);
      continue;
    }
    const transfer = stream.transfers.get(sequence);
    const sizeBytes = estimatedSegmentBytes(ref, stream.bytesPerS);
    const deadlineMs = segmentDeadlineMs(now, playback, ref.startS, context.playbackAtMs);
    if (transfer?.state === 'parked') {
      const { recheckAtMs } = transfer.parked!;
      const step = parkedStep({ nowMs: now, recheckAtMs, requested: stream.waiters.has(sequence), deadlineMs, sizeBytes, httpThroughputBytesPerS, windows });
      if (step === 'recheck') stream.transfers.recheckParked(transfer);
      else if (step === 'give-up') stream.transfers.giveUpParked(transfer);
      else parkedWakeMs = Math.min(parkedWakeMs, recheckAtMs);
      continue;
    }
    const orphan = transfer?.state === 'p2p' ? transfer.orphan : undefined;
    const progress = transfer?.state === 'p2p' ? transfer.peer?.downloadProgress ?? (orphan && { startedMs: now, receivedBytes: orphan.prefix.length, totalBytes: orphan.totalBytes }) : undefined;
    const comingFromPeer = stream.pool.any((peer) => !peer.failing && peer.isFetching(sequence));
    segments.push({
      sequence,
      sizeBytes,
      deadlineMs,
      requested: stream.waiters.has(sequence),
      httpInFlight: transfer !== undefined && transfer.state !== 'p2p',
      p2p: transfer?.state === 'p2p' && progress ? { peerId: transfer.senders.at(-1)!.peer.id, peerGone: !transfer.peer, ...progress } : undefined,
      resumableAt: progress && resumableAt(stream, transfer!),
      seedAtMs: stream.seeding.startAtMs(sequence),
      comingFromPeer,
      seedSatisfied: stream.seeding.satisfied(sequence, comingFromPeer, () => stream.pool.any((peer) => !peer.failing && peer.has(sequence))),
      wastedP2PTransfers: stream.transfers.wastedP2PTransfers(sequence),
    });
  }
  if (segments.length === 0) return parkedWakeMs;
  const peers = [...stream.pool.peers.values()]
    .filter((peer) => peer.handshaken && peer.remoteUploads)
    .map((peer) => {
      const rate = peer.expectedRate;
      return {
        id: peer.id, throughputBytesPerS: rate.bytesPerS, waitMs: rate.waitMs,
        // A peer that failed us lately offers nothing: waiting for it would only delay the HTTP fallback.
        offers: new Set(peer.failing ? [] : segments.filter(({ sequence }) => peer.mayRequest(sequence)).map(({ sequence }) => sequence)),
        busy: peer.busyUntilMs > now || peer.downloading !== undefined || rate.bytesPerS <= 0,
      };
    });
  const actions = plan({
    nowMs: now, isLive: stream.isLive, segments, peers, httpThroughputBytesPerS, downlinkLeftBytes: context.downlinkLeftBytes,
    windows, p2pDownload: options.p2pDownload, maxP2PDownloads: options.maxP2PDownloads,
  });
  let wakeMs = Infinity;
  for (const action of actions) {
    if (action.type === 'wake') wakeMs = action.atMs;
    else if (action.type === 'http') {
      log(`#${action.sequence} over HTTP (${action.reason})`, stream.key);
      stream.seeding.started(action.sequence);
      stream.transfers.startHttp(action.sequence, action.reason === 'seed' ? 'seed' : 'urgent');
    } else if (action.type === 'p2p') {
      const peer = stream.pool.peers.get(action.peerId)!;
      log(`#${action.sequence} requested from peer ${peer.id.slice(0, 8)}`, stream.key);
      stream.transfers.startP2P(action.sequence, peer);
    } else stream.transfers.cancelP2P(action.sequence, action.resumeOverHttp, action.resumeAtPeer === undefined ? undefined : stream.pool.peers.get(action.resumeAtPeer));
  }
  return nextPlanMs(now, wakeMs, parkedWakeMs, stream.transfers.anyOverP2P(), stream.waiters.size > 0, options.tickIntervalMs);
}

/**
 * The share of the swarm to fetch the new segment `ref` at publication (seed-share.ts), from this
 * viewer's view: the neighbours whose delivered rates are known (those that do not upload count
 * as demand only), itself (`ownUploadBytesPerS`, undefined while unmeasured), and the time the
 * segment's P2P copies have before HTTP must start for it here.
 */
export function seedShareFor(
  stream: Stream, ref: SegmentRef, now: number,
  context: Pick<PlanContext, 'playback' | 'playbackAtMs' | 'windows' | 'httpThroughputBytesPerS'> & { ownUploadBytesPerS: number | undefined },
): number {
  if (!context.playback) return 0;
  const neighbourhood: NeighbourRate[] = context.ownUploadBytesPerS === undefined ? [] : [{ uploadBytesPerS: context.ownUploadBytesPerS }];
  for (const peer of stream.pool.peers.values()) {
    if (!peer.handshaken) continue;
    const rate = peer.remoteUploads ? peer.advertisedRate : 0;
    if (rate !== undefined) neighbourhood.push({ uploadBytesPerS: rate });
  }
  const segmentBytes = estimatedSegmentBytes(ref, stream.bytesPerS);
  const deadlineMs = segmentDeadlineMs(now, context.playback, ref.startS, context.playbackAtMs);
  const windowMs = deadlineMs - now - httpBudgetMs(segmentBytes, context.httpThroughputBytesPerS, context.windows);
  return deficitSeedShare({ neighbourhood, streamBytesPerS: stream.bytesPerS, segmentBytes, windowMs, rateSlack: P2P_RATE_SLACK });
}

/** Bytes each of the stream's downloads under way is still to receive (segments of unknown size at their estimated size). */
export function downloadsLeftBytes(stream: Stream): number[] {
  return stream.transfers.downloadsLeftBytes((sequence) => {
    const ref = stream.refs.get(sequence);
    return ref ? estimatedSegmentBytes(ref, stream.bytesPerS) : 0;
  });
}

/**
 * Peers a P2P transfer may go on at if its peer leaves or is too slow: they have the whole segment
 * (a relay's copy may still fail), did not fail us lately, and were not asked for this transfer
 * before (it never goes back and forth between two peers).
 */
function resumableAt(stream: Stream, transfer: Transfer): Set<string> {
  const { sequence, senders } = transfer;
  const peers = [...stream.pool.peers.values()].filter(
    (peer) => !peer.failing && peer.has(sequence) && peer.mayRequest(sequence) && !senders.some((sender) => sender.peer === peer),
  );
  return new Set(peers.map((peer) => peer.id));
}

/** The segment is in the store: every load waiting for it gets it from there. */
function serveFromStore(stream: Stream, sequence: number, { store, clock, emit }: PlanContext): void {
  stream.waiters.settle(sequence, (waiter) => {
    const bytes = store.get(stream.key, sequence)!;
    const now = clock.now();
    const timing = { requestMs: waiter.requestMs, firstByteMs: now, doneMs: now };
    emit('segment-loaded', { ref: waiter.ref, source: 'store', bytes: bytes.length, timing });
    waiter.resolve({ bytes, source: 'store', timing });
  });
}
