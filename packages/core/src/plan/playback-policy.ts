// What the player's reports decide around the plan: when they ask for a new plan, and when the
// viewer's own playback needs its whole uplink (uploads yield, meeting peers waits). Pure
// functions of the playback state, like the scheduler's.
import type { PlaybackReport } from '../types.js';

/** A playback report this far from where the previous one extrapolates to is a jump (seek, stall): plan at once. */
const PLAYBACK_DRIFT_S = 0.2;
/** Otherwise, playback reports ask for a plan at most this often. */
const PLAYBACK_REPLAN_MS = 1000;
/** Uploads pause while the player has less than this ahead of it (seconds of media; live: at most half the target latency). */
const LOW_BUFFER_S = 2;

/**
 * Whether a playback report asks for a plan now. Playback that went on as extrapolated changes no
 * deadline: plan again at once only when something the plan reads changed (a seek, pause, rate,
 * live edge or latency target), else at most every PLAYBACK_REPLAN_MS, for segments entering the
 * prefetch window.
 */
export function playbackWantsPlan(
  previous: PlaybackReport | undefined, previousAtMs: number, state: PlaybackReport, nowMs: number, lastPlanMs: number,
): boolean {
  const expectedS = previous ? previous.positionS + ((nowMs - previousAtMs) / 1000) * previous.rate : 0;
  const changed =
    !previous || previous.rate !== state.rate || previous.isLive !== state.isLive || previous.liveEdgeS !== state.liveEdgeS ||
    previous.targetLatencyS !== state.targetLatencyS || Math.abs(state.positionS - expectedS) > PLAYBACK_DRIFT_S;
  return changed || nowMs - lastPlanMs >= PLAYBACK_REPLAN_MS;
}

/**
 * The viewer's own playback needs every bit of its uplink: before it plays, and while it has less
 * than LOW_BUFFER_S buffered (at most half its live target latency). A paused player has time.
 */
export function playbackAtRisk(state: PlaybackReport): boolean {
  return state.rate !== 0 && bufferLow(state);
}

function bufferLow(state: PlaybackReport): boolean {
  const lowS = state.isLive && state.targetLatencyS !== undefined ? Math.min(LOW_BUFFER_S, state.targetLatencyS / 2) : LOW_BUFFER_S;
  return state.bufferedUntilS - state.positionS < lowS;
}

/** Longest that meeting peers waits for the player: past it, what holds the player up may be the origin, and peers could help. */
export const MAX_MEETING_WAIT_MS = 10_000;

/**
 * Whether asking the tracker for more peers waits: the offers, answers and handshakes take a home
 * uplink for a second or two, and the viewer's own requests and the acknowledgements of its
 * downloads queue behind them (browser swarm, 125 kbit/s uplinks: a newcomer's second segment took
 * 2.7 s instead of 0.35 s while it met four peers, and it stalled). The swarm itself is joined at
 * once, with a first announce of few offers (signaling's JOIN_OFFERS), so that a newcomer's first
 * segments may come from peers. It waits while the player has less than the low mark buffered (its
 * start, a seek, a stall; paused or not), for at most MAX_MEETING_WAIT_MS. Without a player's
 * reports it does not wait.
 */
export function meetingPeersWaits(state: PlaybackReport | undefined, waitedMs: number): boolean {
  return state !== undefined && waitedMs < MAX_MEETING_WAIT_MS && bufferLow(state);
}
