// A run's faults as figures: what each fault did (report.json `faults`), beside the stalls of the
// viewers around it. Verdicts against the HTTP-only baseline are in the report's usual stall figures.
import type { CrashRecord, FaultEvent, FaultName, FaultRecord, OriginBurstRecord, TrackerOutageRecord } from './faults.js';
import type { SegmentVerification, ViewerSnapshot } from './viewer-snapshot.js';

/** Stalls of the other viewers starting this long after a crash are counted against it. */
const CRASH_WINDOW_S = 15;

export interface HostileReport {
  behaviour: string;
  peerId: string | null;
  /** Honest viewers that connected to it. */
  honestPeersMet: number;
  /** Honest viewers that banned it, and how long after it joined (s, median and slowest). */
  bannedBy: number;
  banAfterS: { median: number | null; max: number | null };
  banReasons: string[];
  /** Connections the honest side closed before the phase ended (bans, or dropped as useless). */
  closedByHonest: number;
  /** Requests it got from honest viewers, and when the last came (s after it joined): starved after that. */
  requestsReceived: number;
  lastRequestAfterS: number | null;
  phaseS: number;
  /** Payload bytes honest viewers uploaded to it, and as a share of all they uploaded in the phase. */
  honestBytesUploadedToIt: number;
  shareOfHonestUpload: number | null;
  error: string | null;
}

export interface FaultReport {
  faults: FaultName[];
  events: FaultEvent[];
  trackerOutage: TrackerOutageRecord | null;
  crashes: Array<CrashRecord & { otherViewersStallsWithin: { seconds: number; stalls: number } }>;
  originBursts: OriginBurstRecord[];
  originInjectedErrors: number | null;
  hostile: HostileReport[];
}

const median = (values: number[]) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};
const round1 = (value: number) => Math.round(value * 10) / 10;

export function summarizeFaults(
  record: FaultRecord,
  viewers: ReadonlyArray<{ id: string; final: ViewerSnapshot | null; stallTimeline: Array<{ startS: number }> }>,
): FaultReport {
  const bans = viewers.flatMap((viewer) => (viewer.final?.bans ?? []).map((ban) => ({ ...ban, viewer: viewer.id })));
  return {
    faults: record.faults,
    events: record.events,
    trackerOutage: record.trackerOutage,
    crashes: record.crashes.map((crash) => ({
      ...crash,
      otherViewersStallsWithin: {
        seconds: CRASH_WINDOW_S,
        stalls: viewers
          .filter((viewer) => viewer.id !== crash.id)
          .reduce((sum, viewer) => sum + viewer.stallTimeline.filter((stall) => stall.startS >= crash.atS && stall.startS < crash.atS + CRASH_WINDOW_S).length, 0),
      },
    })),
    originBursts: record.originBursts,
    originInjectedErrors: record.originInjectedErrors,
    hostile: record.hostile.map((hostile) => {
      const own = bans.filter((ban) => ban.peerId === hostile.peerId);
      const banAfter = own.map((ban) => (ban.atMs - hostile.startedAtMs) / 1000);
      const uploadedToIt = hostile.peers.reduce((sum, peer) => sum + peer.dataBytesReceived, 0);
      const lastRequest = Math.max(...hostile.peers.map((peer) => peer.lastRequestAtMs ?? -Infinity));
      return {
        behaviour: hostile.behaviour,
        peerId: hostile.peerId,
        honestPeersMet: hostile.peers.length,
        bannedBy: new Set(own.map((ban) => ban.viewer)).size,
        banAfterS: { median: banAfter.length ? round1(median(banAfter)!) : null, max: banAfter.length ? round1(Math.max(...banAfter)) : null },
        banReasons: [...new Set(own.map((ban) => ban.reason))].slice(0, 5),
        closedByHonest: hostile.peers.filter((peer) => peer.closedAtMs !== null).length,
        requestsReceived: hostile.peers.reduce((sum, peer) => sum + peer.requests, 0),
        lastRequestAfterS: Number.isFinite(lastRequest) ? round1((lastRequest - hostile.startedAtMs) / 1000) : null,
        phaseS: round1(hostile.phaseToS - hostile.phaseFromS),
        honestBytesUploadedToIt: uploadedToIt,
        shareOfHonestUpload: hostile.honestUploadedDuringPhase > 0 ? Math.round((uploadedToIt / hostile.honestUploadedDuringPhase) * 1000) / 1000 : null,
        error: hostile.error,
      };
    }),
  };
}

/** The viewers' own checks of every segment they handed to hls.js, summed; null when none checked. */
export function sumVerification(snapshots: ReadonlyArray<ViewerSnapshot | null>): SegmentVerification | null {
  const reported = snapshots.map((snapshot) => snapshot?.verification).filter((value): value is SegmentVerification => value !== undefined);
  if (reported.length === 0) return null;
  return {
    verified: reported.reduce((sum, value) => sum + value.verified, 0),
    mismatched: reported.reduce((sum, value) => sum + value.mismatched, 0),
    unlisted: reported.reduce((sum, value) => sum + value.unlisted, 0),
    mismatchedSegments: reported.flatMap((value) => value.mismatchedSegments).slice(0, 20),
  };
}

/** Terminal lines for the report table. */
export function renderFaultLines(engine: string, faults: FaultReport): string[] {
  const lines: string[] = [];
  const outage = faults.trackerOutage;
  if (outage && outage.activeP2pViewers === 0) {
    lines.push(`${engine}: tracker away ${outage.downAtS}-${outage.upAtS ?? '?'} s (no P2P viewer: nothing to re-meet)`);
  } else if (outage) {
    const late = outage.lateJoiner;
    lines.push(
      `${engine}: tracker away ${outage.downAtS}-${outage.upAtS ?? '?'} s: ${(outage.p2pBytesDuringOutage / 1e6).toFixed(1)} MB P2P meanwhile; ` +
        `${late ? `${late.id} (joined during it) first P2P bytes ${late.firstP2pAfterReturnS === null ? 'not within the watch' : `${late.firstP2pAfterReturnS} s`} after the return; ` : ''}` +
        `tracker counted every P2P viewer again after ${outage.trackerPeersBackS === null ? '– (not within the watch)' : `${outage.trackerPeersBackS} s`}`,
    );
  }
  for (const crash of faults.crashes) {
    lines.push(`${engine}: ${crash.id} crashed at ${crash.atS} s uploading ${Math.round(crash.uploadingBytesPerS / 1000)} kB/s; the others stalled ${crash.otherViewersStallsWithin.stalls} times in the next ${crash.otherViewersStallsWithin.seconds} s`);
  }
  if (faults.originBursts.length) lines.push(`${engine}: origin bursts ${faults.originBursts.map((burst) => `${burst.kind} ${burst.fromS}-${burst.toS} s`).join(', ')}; ${faults.originInjectedErrors ?? 0} injected 503s`);
  for (const hostile of faults.hostile) {
    lines.push(
      `${engine}: hostile ${hostile.behaviour}: met ${hostile.honestPeersMet}, banned by ${hostile.bannedBy} (median ${hostile.banAfterS.median ?? '–'} s, max ${hostile.banAfterS.max ?? '–'} s), ` +
        `closed by ${hostile.closedByHonest}, ${hostile.requestsReceived} requests (last ${hostile.lastRequestAfterS ?? '–'} s of ${hostile.phaseS} s), ` +
        `honest bytes uploaded to it ${hostile.honestBytesUploadedToIt}${hostile.shareOfHonestUpload === null ? '' : ` (${(hostile.shareOfHonestUpload * 100).toFixed(1)}% of their upload)`}${hostile.error ? `; error: ${hostile.error}` : ''}`,
    );
  }
  return lines;
}
