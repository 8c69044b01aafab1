import type { EngineStats } from '@shoal/core';
import { describe, expect, it } from 'vitest';
import { simRunReport } from '../src/sim-report.js';
import { runSimulation, Simulation, DEFAULT_SIMULATION, type SimulationResult } from '../src/simulation.js';

/** The report without what depends on the machine (wall time). */
const comparable = (result: SimulationResult) => {
  const report = simRunReport(result);
  return JSON.stringify({ ...report, simulator: { ...report.simulator, wallMs: 0 } });
};

describe('swarm simulator', () => {
  it('gives the same report for the same seed, and a different one for another seed', async () => {
    const config = { scenario: 'churn', peers: 12, durationS: 90, network: 'mixed', seed: 42 } as const;
    const first = comparable(await runSimulation(config));
    const second = comparable(await runSimulation(config));
    const otherSeed = comparable(await runSimulation({ ...config, seed: 43 }));
    expect(second).toBe(first);
    expect(otherSeed).not.toBe(first);
  });

  /** A churn run on 300 kbit/s uplinks (channels close mid-transfer, slow transfers get cancelled), then everyone leaves. */
  const churnRun = async () => {
    const simulation = new Simulation({ ...DEFAULT_SIMULATION, scenario: 'churn', peers: 16, durationS: 120, network: 'realistic', seed: 3 });
    let bans = 0;
    simulation.config.setup = (sim) => {
      const spawn = sim.spawn.bind(sim);
      sim.spawn = (p2p) => {
        const viewer = spawn(p2p);
        viewer.engine.on('peer-banned', () => bans++);
        return viewer;
      };
    };
    await simulation.run();
    // What was in flight when everyone left lands on closed channels: dropped.
    simulation.dispose();
    await simulation.clock.runUntil(simulation.clock.now() + 10_000);
    const sum = (pick: (stats: EngineStats) => number) => simulation.viewers.reduce((total, viewer) => total + pick(viewer.stats!), 0);
    return { ledger: simulation.ledger, uploaded: sum((stats) => stats.uploadBytes), received: sum((stats) => stats.p2pBytes), bans: () => bans };
  };

  it('conserves bytes: every byte peers sent was received, received after its cancel, or lost with a closed channel', async () => {
    const { ledger, uploaded } = await churnRun();
    expect(ledger.sent).toBeGreaterThan(0);
    expect(ledger.cancelled).toBeGreaterThan(0); // the run exercises both loss paths
    expect(ledger.dropped).toBeGreaterThan(0);
    expect(ledger.sent).toBe(ledger.received + ledger.cancelled + ledger.dropped);
    expect(uploaded).toBe(ledger.sent); // the engines' upload counters agree with the network
  });

  // Was a known engine bug: after cancelling a P2P transfer the engine asked the same peer for the
  // same segment again at once, and chunks of the cancelled transfer still in the channel were
  // taken for the new one's (counted, or an honest peer banned). The engine no longer asks a peer
  // again for a segment it recently cancelled there.
  it('counts as P2P only the bytes of transfers it did not cancel, and bans no honest peer', async () => {
    const { ledger, received, bans } = await churnRun();
    expect(received).toBe(ledger.received);
    expect(bans()).toBe(0);
  });

  it('stalls a P2P-only viewer when its only source loses its uplink mid-transfer and the origin refuses it', async () => {
    // Viewer 0 plays from the origin. Viewer 1 joins 30 s later; once it has started (segments the
    // player needs now always go to HTTP), the origin refuses it, so it can only get segments from
    // viewer 0, which holds them (VOD). At 60 s, while 0 is uploading to 1, 0's uplink goes.
    const run = async (cutUplink: boolean) => {
      let cutAtMs: number | undefined;
      const simulation = new Simulation({
        ...DEFAULT_SIMULATION,
        scenario: 'vod',
        peers: 2,
        durationS: 120,
        seed: 5,
        linkOverride: (index, drawn) => ({ ...drawn, upBytesPerS: index === 0 ? 1_000_000 : drawn.upBytesPerS }),
        // The source's uplink is known to be fast: its upload pace starts there rather than at the
        // conservative default, which a viewer with no other source cannot wait out at start.
        engineOptions: { initialUploadPaceBytesPerS: 500_000 },
        setup: (sim) => {
          const { clock, network, origin } = sim;
          const check = () => {
            const [source, viewer] = sim.viewers;
            if (viewer && viewer.player.record.firstFrameMs !== null) origin.refusing.add(viewer.host.id);
            if (cutUplink && source && clock.now() >= 60_000 && source.host.uplink.size > 0) {
              cutAtMs = clock.now();
              source.host.capacity.upBytesPerS = 0;
              network.capacityChanged(source.host);
              return;
            }
            clock.setTimeout(check, 5);
          };
          check();
        },
      });
      const result = await simulation.run();
      simulation.dispose();
      return { viewer: result.viewers[1]!, cutAtMs, refused: result.origin.counters.refusedRequests };
    };

    const control = await run(false);
    expect(control.viewer.firstFrameMs).not.toBeNull();
    expect(control.viewer.stalls).toHaveLength(0);
    expect(control.viewer.deliveredBySource.p2p + control.viewer.deliveredBySource.store).toBeGreaterThan(0.9 * control.viewer.deliveredBytes);

    const cut = await run(true);
    expect(cut.cutAtMs).toBeGreaterThanOrEqual(60_000);
    expect(cut.refused).toBeGreaterThan(0);
    const stallsAfterCut = cut.viewer.stalls.filter((stall) => stall.startMs >= cut.cutAtMs!);
    expect(stallsAfterCut.length).toBeGreaterThan(0);
  });

  it('offloads at least half the ideal with 4 viewers live-normal (the browser swarm\'s floor)', async () => {
    const report = simRunReport(await runSimulation({ scenario: 'live-normal', peers: 4, durationS: 120, network: 'unlimited', seed: 1 }));
    expect(report.ideal).toBeCloseTo(0.75, 6);
    // Unlimited uplinks: the viewers' links allow the ideal.
    expect(report).toMatchObject({ capacityBound: report.ideal, uplinkBound: null });
    expect(report.offload!).toBeGreaterThanOrEqual(0.5 * report.ideal);
    expect(report.stalls.count).toBe(0);
    expect(report.countersAgree).toBe(true);
  });

  it('reports the capacity bound of 300 kbit/s uplinks: the uplink / the bitrate, a little less for the buffer filled at the start', async () => {
    const report = simRunReport(await runSimulation({ scenario: 'live-normal', peers: 4, durationS: 60, network: 'realistic', seed: 1 }));
    expect(report.ideal).toBe(0.75);
    // 0.44 of the bitrate over each viewer's time in the swarm, per byte delivered: delivered bytes
    // run ahead of the time watched by the buffer each player fills when it joins.
    expect(report.uplinkBound!).toBeGreaterThan(0.35);
    expect(report.uplinkBound!).toBeLessThan(0.44);
    expect(report.capacityBound).toBe(report.uplinkBound);
    expect(report.shareOfBound).toBeCloseTo(report.offload! / report.capacityBound, 3);
    expect(report.simulator.p2pGroup.capacityBound).toBe(report.capacityBound);
  });

  it('finishes a run whose peer-request timer falls due a rounding error early (seed 5)', async () => {
    // The pool asked for more peers when `now - last >= 5000` and called the tick back at
    // `last + 5000`; in floating point the first can be false at the second, and the engine's tick
    // rescheduled itself at the same virtual instant forever (this run never ended).
    const report = simRunReport(await runSimulation({ scenario: 'live-low', peers: 6, durationS: 90, network: 'unlimited', seed: 5 }));
    expect(report.stalls.count).toBe(0);
  }, 20_000);

  it('shares segments that do not fit the deadline at an uploader\'s start pace (live-low)', async () => {
    // A 171 kB segment at the governor's 16 KiB/s start pace takes 10 s, past live-low's P2P
    // deadline: requesters must judge an unmeasured uploader by their own measurement, or P2P is
    // never tried, so the pace never grows (0% when the start pace was advertised). One run's
    // offload varies a lot with the seed (seeds 1-10: 10-32%, mean 21%), so the floor is on the
    // mean of three: 17%; 2% when every resumed upload restarted the
    // controller's clock (f5658a3, undone: slow start then grew too slowly for live-low's deadlines).
    let offload = 0;
    for (const seed of [1, 2, 3]) {
      const report = simRunReport(await runSimulation({ scenario: 'live-low', peers: 6, durationS: 90, network: 'unlimited', seed }));
      offload += report.offload! / 3;
      expect(report.stalls.count).toBe(0);
    }
    expect(offload).toBeGreaterThanOrEqual(0.1);
  });

  it('stalls no more than HTTP alone on home-sized uplinks, and still offloads there (8 viewers, live-normal)', async () => {
    // critical, seed 1, stalled 0.3 s where HTTP alone did not before an HTTP fallback counted the
    // downloads sharing the viewer's downlink with it (it took 2.2 s instead of 0.75 s and came late).
    for (const [network, floor] of [['critical', 0.3], ['realistic', 0.05]] as const) {
      const config = { scenario: 'live-normal', peers: 8, durationS: 180, network, seed: 1 } as const;
      const shoal = simRunReport(await runSimulation(config));
      const http = simRunReport(await runSimulation({ ...config, httpOnly: true }));
      expect.soft(shoal.stalls.count, network).toBeLessThanOrEqual(http.stalls.count);
      expect.soft(shoal.stalls.seconds, network).toBeLessThanOrEqual(http.stalls.seconds);
      expect.soft(shoal.offload!, network).toBeGreaterThanOrEqual(floor);
      expect.soft(shoal.offload!, network).toBeLessThanOrEqual(shoal.capacityBound);
      // Where the uplinks went after the joins: the engines' own account adds up to what the links could carry.
      const account = shoal.uplinkAccount!;
      expect.soft(account.uploaders, network).toBe(8);
      expect.soft(account.utilisation!, network).toBeGreaterThan(0);
      expect.soft(account.utilisation!, network).toBeLessThanOrEqual(1.01);
      const shares = Object.values(account.unusedByCause!);
      expect.soft(shares.reduce((sum, share) => sum + share, 0), network).toBeCloseTo(1, 6);
      // The origin's own count of the period is what the engines' origin copies add up to, within the buffer at the edges.
      expect.soft(account.originCopiesPerSegment.total, network).toBeGreaterThan(0);
      expect.soft(account.hopDepth!.copies, network).toBeGreaterThan(0);
      expect.soft(account.hopDepth!.byDepth[0] ?? 0, network).toBe(0);
      expect.soft(http.uplinkAccount!.originCopiesPerSegment.urgent, network).toBeGreaterThan(7);
      expect.soft(http.uplinkAccount!.originCopiesPerSegment.seed, network).toBe(0);
    }
  });
});
