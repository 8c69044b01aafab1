// The browser's Signaling: a WebTorrent tracker client (announce with WebRTC offers, relay of
// answers) over one WebSocket per tracker, and the RtcPeers it connects. Each joined swarm keeps
// its connections keyed by remote peer id, so two routes to the same peer (two trackers, or both
// sides offering at once) end as one connection: the one whose initiator has the smaller peer id.
import { ShoalError } from '../errors.js';
import { createLogger } from '../logger.js';
import type { Signaling, SignalingEvents, SwarmSignal } from '../types.js';
import { binaryToHex, hexToBinary, isBinaryId, randomBinaryId } from './binary-id.js';
import {
  resolveSignalingOptions,
  type ResolvedSignalingOptions,
  type WebRtcSignalingOptionsInput,
} from './signaling-options.js';
import { Swarm } from './swarm-signal.js';
import { TrackerSocket } from './tracker-socket.js';

const log = createLogger('shoal:core:signaling');

/**
 * Creates the tracker + WebRTC signaling for the browser. Throws INVALID_OPTION naming a bad field,
 * or WEBRTC_UNAVAILABLE where this environment cannot make a peer connection (no RTCPeerConnection,
 * WebRTC switched off, a constructor that throws): integrations then play over HTTP alone.
 */
export function createWebRtcSignaling(options: WebRtcSignalingOptionsInput): Signaling {
  const resolved = resolveSignalingOptions(options);
  try {
    // A privacy setting or extension may leave the class in place and make it throw.
    new resolved.RTCPeerConnection({ iceServers: [] }).close();
  } catch (error) {
    throw new ShoalError('WEBRTC_UNAVAILABLE', `RTCPeerConnection cannot be created here: ${(error as Error)?.message ?? String(error)}`);
  }
  return new WebRtcSignaling(resolved);
}

class WebRtcSignaling implements Signaling {
  readonly localPeerId: string;
  private readonly peerIdBinary: string;
  private readonly trackers: TrackerSocket[] = [];
  private readonly swarms = new Map<string, Swarm>();
  private destroyed = false;
  private readonly statusListeners: ((problem: string | undefined) => void)[] = [];
  private problem: string | undefined;
  /** Why the last tracker failed; the problem while no tracker answers. */
  private lastTrackerError: string | undefined;
  /** Set for good once RTCPeerConnection threw: no peer can connect from here. */
  private peerConnectionError: string | undefined;

  constructor(private readonly options: ResolvedSignalingOptions) {
    this.peerIdBinary = options.peerId ? hexToBinary(options.peerId) : randomBinaryId('-SH0001-');
    this.localPeerId = binaryToHex(this.peerIdBinary);
  }

  join(infoHash: string, events: SignalingEvents): SwarmSignal {
    if (this.destroyed) throw new ShoalError('DESTROYED', 'signaling was destroyed');
    const infoHashBinary = /^[0-9a-f]{40}$/i.test(infoHash) ? hexToBinary(infoHash) : infoHash;
    if (!isBinaryId(infoHashBinary)) {
      throw new ShoalError('INVALID_OPTION', `info_hash must be 20 binary characters or 40 hex, got ${JSON.stringify(infoHash)}`);
    }
    if (this.swarms.has(infoHashBinary)) {
      throw new ShoalError('INVALID_OPTION', `swarm ${binaryToHex(infoHashBinary)} is already joined`);
    }
    const swarm = new Swarm(infoHashBinary, this.peerIdBinary, this.localPeerId, this.options, events, this.peerConnectionFailed);
    this.swarms.set(infoHashBinary, swarm);
    if (this.trackers.length === 0) {
      for (const url of this.options.trackers) this.trackers.push(this.openTracker(url));
    }
    for (const tracker of this.trackers) swarm.trackerOpened(tracker);
    return {
      requestPeers: () => swarm.requestPeers(),
      leave: () => {
        if (this.swarms.get(infoHashBinary) !== swarm) return;
        this.swarms.delete(infoHashBinary);
        swarm.leave();
      },
    };
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.statusListeners.length = 0;
    for (const swarm of this.swarms.values()) swarm.leave();
    this.swarms.clear();
    for (const tracker of this.trackers.splice(0)) tracker.destroy();
  }

  watchStatus(listener: (problem: string | undefined) => void): void {
    this.statusListeners.push(listener);
  }

  /** Why no peer can be found now (RTCPeerConnection fails, or no tracker answers since one failed), told on every change. */
  private updateStatus(): void {
    const trackerProblem = this.trackers.some((tracker) => tracker.answering) ? undefined : this.lastTrackerError;
    const problem = this.peerConnectionError ?? trackerProblem;
    if (problem === this.problem) return;
    this.problem = problem;
    for (const listener of this.statusListeners) listener(problem);
  }

  private readonly peerConnectionFailed = (message: string): void => {
    this.peerConnectionError ??= `RTCPeerConnection failed: ${message}`;
    this.updateStatus();
  };

  private openTracker(url: string): TrackerSocket {
    const tracker: TrackerSocket = new TrackerSocket(url, this.options, {
      open: () => {
        log('connected to %s', url);
        for (const swarm of this.swarms.values()) swarm.trackerOpened(tracker);
      },
      message: (message) => {
        const swarm = isBinaryId(message.info_hash) ? this.swarms.get(message.info_hash) : undefined;
        // Another swarm's message, one we left, or our own offer echoed: nothing to do.
        this.updateStatus();
        if (!swarm || message.peer_id === this.peerIdBinary) return;
        swarm.trackerMessage(tracker, message);
      },
      error: (error) => {
        log('%s', error.message);
        this.lastTrackerError = error.message;
        this.updateStatus();
        for (const swarm of this.swarms.values()) swarm.trackerLost(tracker, error);
      },
      warning: (message) => {
        for (const swarm of this.swarms.values()) swarm.events.warning(message);
      },
    });
    return tracker;
  }
}
