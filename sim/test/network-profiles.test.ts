import { describe, expect, it } from 'vitest';
import { NON_UPLOADING_UP_BITS_PER_S, networkProfile, networkProfiles, viewerLink, viewerUploads } from '@shoal/e2e/network-profiles';
import { simRunReport } from '../src/sim-report.js';
import { runSimulation } from '../src/simulation.js';
import { simLink } from '../src/sim-scenarios.js';
import { Prng } from '../src/kit.js';

describe('network profiles', () => {
  it('give uplinks as multiples of the stream bitrate, taken in turn by viewer index', () => {
    const mixed = networkProfile('mixed');
    const uplinks = [0, 1, 2, 3, 4].map((index) => viewerLink(mixed, index, 684_000).upBitsPerS);
    expect(uplinks).toEqual([300_960, 998_640, 3_002_760, 9_986_400, 300_960]);
    expect(viewerLink(networkProfile('realistic'), 7, 284_000)).toEqual({ upBitsPerS: 124_960, downBitsPerS: 2_000_000, uplinkQueueMs: 600, uploads: true });
    expect(viewerLink(networkProfile('unlimited'), 0, 684_000).upBitsPerS).toBe(Infinity);
  });

  it('are the simulator\'s links, in bytes, with a latency drawn in the profile\'s range', () => {
    for (const profile of Object.values(networkProfiles)) {
      const link = simLink(profile, 1, 684_000, new Prng(1));
      expect(link.upBytesPerS).toBe(viewerLink(profile, 1, 684_000).upBitsPerS / 8);
      expect(link.downBytesPerS).toBe(profile.downBitsPerS / 8);
      expect(link.latencyMs).toBeGreaterThanOrEqual(profile.latencyMs[0]);
      expect(link.latencyMs).toBeLessThanOrEqual(profile.latencyMs[1]);
      expect(link.uplinkQueueMs).toBe(profile.uplinkQueueMs);
    }
  });

  it('make a quarter of the viewers non-uploaders, spread evenly; the others keep the profile\'s uplinks in turn', () => {
    const profile = networkProfile('mixed-nonuploading');
    const links = Array.from({ length: 8 }, (_, index) => viewerLink(profile, index, 684_000));
    expect(links.map((link) => link.uploads)).toEqual([true, true, true, false, true, true, true, false]);
    expect(links.map((link) => link.upBitsPerS)).toEqual([300_960, 998_640, 3_002_760, NON_UPLOADING_UP_BITS_PER_S, 9_986_400, 300_960, 998_640, NON_UPLOADING_UP_BITS_PER_S]);
    const first100 = Array.from({ length: 100 }, (_, index) => viewerUploads(profile, index));
    expect(first100.filter((uploads) => !uploads)).toHaveLength(25);
    for (const other of ['unlimited', 'realistic', 'critical', 'mixed']) expect(viewerUploads(networkProfile(other), 3)).toBe(true);
  });

  it('run the simulator\'s non-uploaders with upload off: they upload nothing and still get segments from peers', async () => {
    const result = await runSimulation({ scenario: 'live-normal', peers: 8, durationS: 60, network: 'mixed-nonuploading', seed: 1 });
    const report = simRunReport(result);
    const nonUploading = report.perPeer.filter((peer) => peer.nonUploading);
    expect(nonUploading.map((peer) => peer.id)).toEqual(['sim-3', 'sim-7']);
    for (const peer of nonUploading) expect(peer.uploadedBytes).toBe(0);
    expect(nonUploading.reduce((sum, peer) => sum + peer.p2pBytes, 0)).toBeGreaterThan(0);
    expect(report.perPeer.filter((peer) => !peer.nonUploading).reduce((sum, peer) => sum + peer.uploadedBytes, 0)).toBeGreaterThan(0);
  });

  it('name the unknown profile and list the known ones', () => {
    expect(() => networkProfile('dsl')).toThrow('unknown network profile "dsl"; one of: unlimited, realistic, critical, mixed, mixed-nonuploading');
  });
});
