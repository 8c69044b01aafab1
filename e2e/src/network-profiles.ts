// The viewers' access networks, by name: one table for the simulator (sim/sim-scenarios.ts) and
// the browser swarm (swarm/viewer-networks.ts), so that `--network realistic` means the same links
// in both. Uplinks are multiples of the stream's bitrate (what matters for P2P is whether a viewer
// can upload what it plays); downlinks are absolute. A leaf module: it imports nothing of ours.

export interface NetworkProfile {
  name: string;
  description: string;
  /**
   * Uplinks as multiples of the stream's bitrate, taken in turn by viewer index (viewer i gets
   * uplinkMultiples[i % length], counting uploading viewers only); empty for no limit.
   */
  uplinkMultiples: readonly number[];
  /**
   * Share of the viewers that carry no P2P upload (cellular, upload-capped): spread evenly over the
   * viewer indices (see viewerUploads). Their engine runs with upload off, and their uplink is
   * NON_UPLOADING_UP_BITS_PER_S, what their own requests and acknowledgements need. 0: none.
   */
  nonUploadingShare: number;
  /** Downlink, bits/s; Infinity for no limit. */
  downBitsPerS: number;
  /** One-way access latency range, ms (the simulator draws within it; see viewerLink). */
  latencyMs: readonly [number, number];
  /**
   * The home router's uplink buffer, as ms of uplink time when full: the most queueing delay a
   * saturated uplink adds to everything else the viewer sends. The simulator models it; the
   * browser swarm gives its tc tbf uplink the same `latency`. 0: no bloat modelled.
   */
  uplinkQueueMs: number;
}

/**
 * A home router's uplink buffer. Calibrated against issue 17's browser measurement (8 viewers,
 * tc tbf uplinks at 0.44x and 1.2x the stream): with 600 ms the simulator's pre-fix engine stalls
 * about as long as real Chromium did there.
 */
export const HOME_UPLINK_QUEUE_MS = 600;

/**
 * A non-uploading viewer's uplink: its HTTP requests, TCP and SCTP acknowledgements, ICE and DTLS
 * upkeep and the peer protocol's small messages, with no room to pass segments on. A fixed rate,
 * not a multiple of the stream: it carries no media. In the browser such viewers sent 43-66
 * kbit/s on average, and filled this 256 kbit/s in one 5-s window of a 3.6 Mbit/s download burst
 * (BENCHMARKS.md, mixed-nonuploading); 128 kbit/s filled more often.
 */
export const NON_UPLOADING_UP_BITS_PER_S = 256_000;

const MBIT = 1_000_000;

export const networkProfiles: Record<string, NetworkProfile> = {
  unlimited: {
    name: 'unlimited',
    description: 'no bandwidth limit (as in PeerTube 2023, where WebRTC was not throttled); 5-40 ms access latency',
    uplinkMultiples: [],
    downBitsPerS: Infinity,
    latencyMs: [5, 40],
    nonUploadingShare: 0,
    uplinkQueueMs: 0,
  },
  realistic: {
    name: 'realistic',
    description: "2 Mbit/s down, uplink 0.44x the stream (300 kbit/s at 684 kbit/s: PeerTube's HTTP throttle); 10-60 ms",
    uplinkMultiples: [0.44],
    downBitsPerS: 2 * MBIT,
    latencyMs: [10, 60],
    nonUploadingShare: 0,
    uplinkQueueMs: HOME_UPLINK_QUEUE_MS,
  },
  critical: {
    name: 'critical',
    description: '2 Mbit/s down, every uplink 1.2x the stream: just enough to pass on what one plays; 10-60 ms',
    uplinkMultiples: [1.2],
    downBitsPerS: 2 * MBIT,
    latencyMs: [10, 60],
    nonUploadingShare: 0,
    uplinkQueueMs: HOME_UPLINK_QUEUE_MS,
  },
  mixed: {
    name: 'mixed',
    description: '20 Mbit/s down; uplinks a quarter each of 0.44x, 1.46x, 4.39x and 14.6x the stream (0.3/1/3/10 Mbit/s at 684 kbit/s); 10-80 ms',
    uplinkMultiples: [0.44, 1.46, 4.39, 14.6],
    downBitsPerS: 20 * MBIT,
    latencyMs: [10, 80],
    nonUploadingShare: 0,
    uplinkQueueMs: HOME_UPLINK_QUEUE_MS,
  },
  'mixed-nonuploading': {
    name: 'mixed-nonuploading',
    description:
      'mixed, and a quarter of the viewers do not upload (cellular, upload-capped: engine upload off, 256 kbit/s uplink for their own requests and acks); the others take mixed\'s uplinks in turn',
    uplinkMultiples: [0.44, 1.46, 4.39, 14.6],
    downBitsPerS: 20 * MBIT,
    latencyMs: [10, 80],
    nonUploadingShare: 0.25,
    uplinkQueueMs: HOME_UPLINK_QUEUE_MS,
  },
};

export function networkProfile(name: string): NetworkProfile {
  const profile = networkProfiles[name];
  if (!profile) throw new Error(`unknown network profile "${name}"; one of: ${Object.keys(networkProfiles).join(', ')}`);
  return profile;
}

/** One viewer's access link. */
export interface ViewerLink {
  /** bits/s; Infinity for no limit. */
  upBitsPerS: number;
  downBitsPerS: number;
  uplinkQueueMs: number;
  /** false: the viewer carries no P2P upload (its engine runs with upload off). */
  uploads: boolean;
}

/** Non-uploading viewers among indices 0 .. index-1 (an even spread: floor(index × share)). */
const nonUploadingBefore = (profile: NetworkProfile, index: number) => Math.floor(index * profile.nonUploadingShare + 1e-9);

/** Whether viewer `index` uploads under `profile`: with share s, viewer i does not when ⌊(i+1)s⌋ > ⌊is⌋. */
export function viewerUploads(profile: NetworkProfile, index: number): boolean {
  return nonUploadingBefore(profile, index + 1) === nonUploadingBefore(profile, index);
}

/** Viewer `index`'s link under `profile`, for a stream of `bitrateBitsPerS`. */
export function viewerLink(profile: NetworkProfile, index: number, bitrateBitsPerS: number): ViewerLink {
  const { downBitsPerS, uplinkQueueMs } = profile;
  if (!viewerUploads(profile, index)) return { upBitsPerS: NON_UPLOADING_UP_BITS_PER_S, downBitsPerS, uplinkQueueMs, uploads: false };
  // The uploading viewers take the uplinks in turn among themselves: the profile's mix holds for them.
  const multiples = profile.uplinkMultiples;
  const slot = index - nonUploadingBefore(profile, index);
  const upBitsPerS = multiples.length === 0 ? Infinity : Math.round(multiples[slot % multiples.length]! * bitrateBitsPerS);
  return { upBitsPerS, downBitsPerS, uplinkQueueMs, uploads: true };
}

/** "300 kbit/s", "2 Mbit/s", "unlimited". */
export function formatBitsPerS(bitsPerS: number): string {
  if (bitsPerS === Infinity) return 'unlimited';
  return bitsPerS >= MBIT ? `${Number((bitsPerS / MBIT).toFixed(2))} Mbit/s` : `${Math.round(bitsPerS / 1000)} kbit/s`;
}
