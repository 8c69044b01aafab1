// What the engine tells its integrator: the typed event map with its emitter, and the stats shapes.
import type { EffectiveLatencyMode } from './plan/scheduler.js';
import type { Verification } from './store/integrity.js';
import type { LoadTiming } from './transfers/pending-loads.js';
import type { SegmentRef, SegmentSource } from './types.js';
import type { UploadGovernorStats } from './upload/upload-governor.js';

/** `off`: not asked for (no tracker, or both directions switched off); `unavailable`: asked for, but it cannot run now. */
export type P2pState = 'on' | 'off' | 'unavailable';

export interface EngineEventMap {
  'segment-loaded': { ref: SegmentRef; source: SegmentSource; bytes: number; timing: LoadTiming };
  'bytes-down': { streamKey: string; source: 'http' | 'p2p'; bytes: number };
  'bytes-up': { streamKey: string; bytes: number };
  'peer-connect': { streamKey: string; peerId: string };
  'peer-close': { streamKey: string; peerId: string; reason: string | undefined };
  'peer-banned': { streamKey: string; peerId: string; reason: string };
  'tracker-error': { streamKey: string; error: Error };
  'tracker-warning': { streamKey: string; message: string };
  /** P2P's state changed (and once after start when it is not on): `unavailable` says why, playback goes on over HTTP. */
  p2p: { state: P2pState; reason: string; verification: Verification };
  /** Something the integrator may want to know that is not an error of a single load. */
  warning: { message: string };
}
export type EngineEventName = keyof EngineEventMap;
export type EngineListener<Name extends EngineEventName> = (event: EngineEventMap[Name]) => void;
export type EngineEmit = <Name extends EngineEventName>(name: Name, event: EngineEventMap[Name]) => void;

/**
 * What an origin request was for: `seed`, an elected live-edge fetch at publication; `urgent`, the
 * whole segment for the player (no peer could bring it in time); `range`, the rest of a segment
 * after a peer's part; `refetch`, the whole segment again after P2P bytes were thrown away.
 */
export type OriginKind = 'seed' | 'urgent' | 'range' | 'refetch';
export const ORIGIN_KINDS: readonly OriginKind[] = ['seed', 'urgent', 'range', 'refetch'];

export interface StreamStats {
  httpBytes: number;
  /** httpBytes by what the requests were for. */
  originBytes: Record<OriginKind, number>;
  p2pBytes: number;
  uploadBytes: number;
  /** Bytes of the peer protocol's messages other than data (pings, pongs, availability, requests, busy...) sent to peers. */
  controlBytes: number;
  peers: number;
  /** Segments fetched from the origin (including live-edge seeding), and the segments P2P delivered in full. */
  httpSegments: number;
  p2pSegments: number;
}

export interface EngineStats {
  /** Whether P2P runs: `off` (not configured), `unavailable` (configured, but it cannot run now; see p2pReason). */
  p2p: P2pState;
  /** Why P2P is off or unavailable, in words; empty when on. */
  p2pReason: string;
  /** What checks bytes from peers: `validator`, `manifest`, `digest` (the origin's Repr-Digest), or `none` (unverified). */
  p2pVerification: Verification;
  httpBytes: number;
  /** httpBytes by what the requests were for (every stream's). */
  originBytes: Record<OriginKind, number>;
  p2pBytes: number;
  /** Segment payload bytes sent to peers (data messages' 13-byte headers not included). */
  uploadBytes: number;
  /** Bytes of the peer protocol's messages other than data sent to peers: its control traffic. */
  controlBytes: number;
  /** Distinct remote peers connected, over all renditions (a peer in two rendition swarms counts once). */
  peers: number;
  bannedPeers: number;
  storeBytes: number;
  latencyMode: EffectiveLatencyMode;
  /** The upload governor: its pace, the uplink's measured queueing delay, and whether uploads yield to playback. */
  upload: UploadGovernorStats;
  streams: Record<string, StreamStats>;
}

type AnyListener = (event: unknown) => void;

export class EngineEvents {
  private readonly listeners = new Map<EngineEventName, Set<AnyListener>>();

  on<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as AnyListener);
  }

  off<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): void {
    this.listeners.get(name)?.delete(listener as AnyListener);
  }

  readonly emit: EngineEmit = (name, event) => {
    const listeners = this.listeners.get(name);
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        // A throwing listener must not break the engine; it is reported, not swallowed.
        if (name !== 'warning') this.emit('warning', { message: `a '${name}' listener threw: ${String(error)}` });
      }
    }
  };

  clear(): void {
    this.listeners.clear();
  }
}
