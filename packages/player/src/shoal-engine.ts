// Shoal (@shoal/hlsjs) as the player's P2P engine, through its public API only.
import { attachShoal, type ShoalHls, type ShoalHlsOptions } from '@shoal/hlsjs';
import type Hls from 'hls.js';
import type { P2pEngineSettings } from './options.js';
import type { P2pCounters, P2pEngine, P2pState } from './types.js';

export class ShoalP2pEngine implements P2pEngine {
  /** The attached Shoal instance (events, full stats), once hls.js exists. */
  shoal: ShoalHls | null = null;

  constructor(private readonly options: ShoalHlsOptions) {}

  hlsConfig(): Record<string, unknown> {
    // attachShoal installs its fragment loader on the hls.js instance itself.
    return {};
  }

  attach(hls: unknown): void {
    this.shoal = attachShoal(hls as Hls, this.options);
  }

  counters(): P2pCounters {
    const stats = this.shoal?.getStats();
    if (!stats) return { httpBytes: 0, p2pBytes: 0, uploadedBytes: 0, peers: 0 };
    return { httpBytes: stats.httpBytes, p2pBytes: stats.p2pBytes, uploadedBytes: stats.uploadBytes, peers: stats.peers };
  }

  status(): { state: P2pState; reason: string } {
    const stats = this.shoal?.getStats();
    return stats ? { state: stats.p2p, reason: stats.p2pReason } : { state: 'on', reason: '' };
  }

  destroy(): void {
    this.shoal?.destroy();
    this.shoal = null;
  }
}

export function createShoalEngine(settings: P2pEngineSettings): ShoalP2pEngine {
  const { trackers, iceServers, integrity, requireVerifiedP2P } = settings;
  return new ShoalP2pEngine({
    ...(settings.engineOptions as ShoalHlsOptions),
    trackers,
    ...(iceServers ? { iceServers } : {}),
    // The player's own options win over the same fields in engineOptions.
    ...(integrity ? { integrityManifestUrl: new URL(integrity, globalThis.location?.href).href } : {}),
    ...(requireVerifiedP2P !== undefined ? { requireVerifiedP2P } : {}),
  });
}
