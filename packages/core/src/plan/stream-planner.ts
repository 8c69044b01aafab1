// Planning one stream: builds the scheduler's snapshot from the stream's parts (its loads and
// transfers, seeding, peers and the store), calls plan(), and hands each action to the part that
// carries it out. Returns when to plan the stream again.
import { createLogger } from '../logger.js';
import type { EngineOptions } from '../options.js';
import type { RelayProgress } from '../peers/peer-availability.js';
import type { Stream } from '../stream.js';
import type { Transfer } from '../transfers/transfer.js';
import type { PlaybackReport, SegmentRef, SegmentStore } from '../types.js';
import { seedScore } from './live-edge-seeding.js';
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
  type PeerPlan,
  type SegmentPlan,
} from './scheduler.js';

const log = createLogger('shoal:core:engine');

export interface PlanContext {
  store: SegmentStore;
  /** The playback of the stream planned (the active one), else undefined. */
  playback: PlaybackReport | undefined;
  playbackAtMs: number;
  windows: ModeWindows;
  httpThroughputBytesPerS: number;
  /** Bytes every download under way on the viewer's downlink (every stream's) is still to receive. */
  downlinkLeftBytes: number[];
  options: Pick<EngineOptions, 'p2pDownload' | 'maxP2PDownloads' | 'tickIntervalMs'>;
  /** This viewer's peer id: each requester ranks peers about as fast in its own order (SchedulerInput.spread). */
  localPeerId: string;
}

/** Plans one stream at `now`; returns when to plan it again (or Infinity). */
export function planStream(stream: Stream, now: number, context: PlanContext): number {
  const { store, playback, windows, options } = context;
  const { transfers } = stream;
  const candidates = new Map<number, SegmentRef>();
  for (const sequence of transfers.waiters.keys()) candidates.set(sequence, stream.refs.get(sequence)!);
  for (const sequence of transfers.running.keys()) candidates.set(sequence, stream.refs.get(sequence)!);
  for (const sequence of stream.seeding.seedAt.keys()) candidates.set(sequence, stream.refs.get(sequence)!);
  if (playback && options.p2pDownload && stream.pool.peers.size > 0) {
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
      transfers.settleFromStore(sequence);
      continue;
    }
    const transfer = transfers.running.get(sequence);
    if (transfer?.state === 'verifying') continue;
    const sizeBytes = transfer?.totalBytes ?? estimatedSegmentBytes(ref, stream.bytesPerS);
    const deadlineMs = segmentDeadlineMs(now, playback, ref.startS, context.playbackAtMs);
    const requested = transfers.waiters.has(sequence);
    if (transfer?.state === 'parked') {
      const step = parkedStep({ nowMs: now, recheckAtMs: transfer.recheckAtMs, requested, deadlineMs, sizeBytes, httpThroughputBytesPerS: context.httpThroughputBytesPerS, windows });
      if (step === 'recheck') transfers.recheckParked(transfer);
      else if (step === 'give-up') transfers.giveUpParked(transfer);
      else parkedWakeMs = Math.min(parkedWakeMs, transfer.recheckAtMs);
      continue;
    }
    const comingFromPeer = stream.pool.any((peer) => !peer.download.failing && peer.isFetching(sequence));
    segments.push({
      sequence, sizeBytes, sizeKnown: transfer?.totalBytes !== undefined || ref.byteRange !== undefined, deadlineMs, requested,
      httpInFlight: transfer !== undefined && wholeFromOrigin(transfer),
      legs: transfer && [...transfer.legs],
      seedAtMs: stream.seeding.seedAt.get(sequence),
      comingFromPeer,
      seedSatisfied: stream.seeding.satisfied(sequence, comingFromPeer, () => stream.pool.any((peer) => !peer.download.failing && peer.availability.has(sequence))),
      wastedP2PTransfers: transfers.waste.of(sequence),
    });
  }
  if (segments.length === 0) return parkedWakeMs;
  const actions = plan({
    nowMs: now, isLive: stream.isLive, segments, peers: peerPlans(stream, segments, now), httpThroughputBytesPerS: context.httpThroughputBytesPerS,
    downlinkLeftBytes: context.downlinkLeftBytes, windows, p2pDownload: options.p2pDownload, maxP2PDownloads: options.maxP2PDownloads,
    spread: (peerId, sequence) => seedScore(`${context.localPeerId}${peerId}`, String(sequence)),
  });
  let wakeMs = Infinity;
  for (const action of actions) {
    if (action.type === 'wake') wakeMs = action.atMs;
    else carryOut(stream, action);
  }
  return nextPlanMs(now, wakeMs, parkedWakeMs, transfers.anyLegFrom('peer'), transfers.waiters.size > 0, options.tickIntervalMs);
}

/** One action of the plan, to the part that carries it out. */
function carryOut(stream: Stream, action: Exclude<ReturnType<typeof plan>[number], { type: 'wake' }>): void {
  const { transfers, pool } = stream;
  const ref = stream.refs.get(action.sequence)!;
  switch (action.type) {
    case 'http':
      log(`#${action.sequence} over HTTP (${action.reason})`, stream.key);
      stream.seeding.started(action.sequence);
      return transfers.startOrigin(ref, action.reason === 'seed' ? 'seed' : 'urgent');
    case 'p2p':
      log(`#${action.sequence} from ${action.parts.map((part) => `${part.peerId.slice(0, 8)} [${part.start}, ${part.end})`).join(', ')}`, stream.key);
      return transfers.startPeers(ref, action.parts.map((part) => ({ peer: pool.peers.get(part.peerId)!, start: part.start, end: part.end })), action.withinMs);
    case 'move': {
      const transfer = transfers.running.get(action.sequence);
      const leg = transfer && [...transfer.legs].find((candidate) => candidate.id === action.legId);
      if (transfer && leg) transfers.moveLeg(transfer, leg, action.toPeerId === undefined ? undefined : pool.peers.get(action.toPeerId), action.withinMs);
      return;
    }
    case 'drop': {
      const transfer = transfers.running.get(action.sequence);
      if (transfer) transfers.drop(transfer);
    }
  }
}

/** Whether the transfer's bytes come from one origin request for the whole segment (nothing of it to plan). */
function wholeFromOrigin(transfer: Transfer): boolean {
  for (const leg of transfer.legs) if (leg.source.kind === 'origin' && leg.start === 0 && leg.end === (transfer.totalBytes ?? Infinity)) return true;
  return false;
}

/** The peers that upload, as the plan sees them: what they offer of these segments, their rates, and what they relay. */
function peerPlans(stream: Stream, segments: readonly SegmentPlan[], now: number): PeerPlan[] {
  const plans: PeerPlan[] = [];
  for (const peer of stream.pool.peers.values()) {
    if (!peer.handshaken || !peer.remoteUploads) continue;
    const rate = peer.expectedRate;
    const offers = new Set<number>();
    let relays: Map<number, RelayProgress> | undefined;
    // A peer that failed us lately offers nothing: waiting for it would only delay the HTTP fallback.
    if (!peer.download.failing) {
      for (const { sequence } of segments) {
        if (!peer.mayRequest(sequence)) continue;
        offers.add(sequence);
        const relay = peer.availability.relay(sequence);
        if (relay) (relays ??= new Map()).set(sequence, relay);
      }
    }
    plans.push({
      id: peer.id, offers, throughputBytesPerS: rate.bytesPerS, waitMs: rate.waitMs,
      busy: peer.download.busyUntilMs > now || peer.download.leg !== undefined || rate.bytesPerS <= 0,
      relays,
    });
  }
  return plans;
}

/** Bytes each of the stream's downloads under way is still to receive (segments of unknown size at their estimated size). */
export function downloadsLeftBytes(stream: Stream): number[] {
  return stream.transfers.downloadsLeftBytes((sequence) => {
    const ref = stream.refs.get(sequence);
    return ref ? estimatedSegmentBytes(ref, stream.bytesPerS) : 0;
  });
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
): { guess: number; floor: number } {
  if (!context.playback) return { guess: 0, floor: 0 };
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
