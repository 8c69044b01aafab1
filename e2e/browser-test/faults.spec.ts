import { expect, test } from '@playwright/test';
import { runTestSwarm } from './swarm-run.js';

// One short Shoal swarm (3 viewers, real Chromium, origin and tracker process) through faults one
// after another: the tracker killed for 8 s and restarted with a viewer joining meanwhile, the
// viewer uploading most crashing, then a silent and a trickling peer joining. The player keeps
// playing through all of them, and every segment it got matches the origin's SHA-256 manifest.
// Ceilings with margin for a busy 2-core machine; the figures are benchmarks (npm run swarm -- --fault).
test('a 3-viewer Shoal swarm plays through a tracker outage, a crashing uploader, and silent and trickling peers', async () => {
  test.setTimeout(240_000);
  const report = await runTestSwarm({
    name: 'faults',
    scenario: 'live-normal',
    peers: 3,
    durationS: 83,
    engines: ['shoal'],
    faults: { faults: ['tracker-outage', 'peer-crash', 'hostile-peers'], outageS: 8, crashes: 1, hostile: ['silent', 'trickle'], hostileS: 18 },
  });
  const faults = report.faults!;
  const events = faults.events.map((event) => `${event.tS} s ${event.what}`).join('\n');
  // Every segment handed to a player was the origin's.
  expect(report.verification!.mismatched).toBe(0);
  expect(report.verification!.verified).toBeGreaterThan(20);

  // Tracker away: connected peers kept sharing; the viewer that joined meanwhile met the swarm once it was back.
  const outage = faults.trackerOutage!;
  expect(outage.upAtS, events).not.toBeNull();
  expect(outage.p2pBytesDuringOutage, events).toBeGreaterThan(0);
  expect(outage.lateJoiner?.firstP2pAfterReturnS, events).not.toBeNull();
  expect(outage.trackerPeersBackS, events).not.toBeNull();

  // A crashed uploader: at most one short stall among the others.
  expect(faults.crashes, events).toHaveLength(1);
  expect(faults.crashes[0]!.otherViewersStallsWithin.stalls, events).toBeLessThanOrEqual(1);

  // Silent and trickling peers met the viewers and were starved: a handful of requests each, none served by them.
  for (const hostile of faults.hostile) {
    expect(hostile.error, hostile.behaviour).toBeNull();
    expect(hostile.honestPeersMet, hostile.behaviour).toBeGreaterThan(0);
    // Asked at all: it speaks the viewers' protocol version (another version's channel is closed at the handshake).
    expect(hostile.requestsReceived, hostile.behaviour).toBeGreaterThan(0);
    expect(hostile.requestsReceived, `${hostile.behaviour}: requests from ${hostile.honestPeersMet} viewers in ${hostile.phaseS} s`).toBeLessThanOrEqual(6 * hostile.honestPeersMet);
  }
  expect(faults.hostile.map((hostile) => hostile.behaviour)).toEqual(['silent', 'trickle']);
  // Through all of it, about as smooth as HTTP alone (npm test's swarm spec holds Shoal to the baseline + 1).
  expect(report.stalls.count, events).toBeLessThanOrEqual(2);
});
