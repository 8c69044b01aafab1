import { describe, expect, it } from 'vitest';
import { summarizeBrowsers } from '../src/swarm/browser-report.js';
import { parseSwarmArgs, runTimeLimitMs } from '../src/swarm/cli-options.js';
import type { PeerReport } from '../src/swarm/report-schema.js';
import { browserOfViewer, parseBrowserMix } from '../src/swarm/viewer-browsers.js';
import type { ViewerSnapshot } from '../src/swarm/viewer-snapshot.js';

describe('the browser mix of a swarm', () => {
  it('parses chromium:N,firefox:M, and names what it does not take', () => {
    expect(parseBrowserMix('chromium:4,firefox:4')).toEqual([
      { browser: 'chromium', count: 4 },
      { browser: 'firefox', count: 4 },
    ]);
    expect(parseBrowserMix('firefox')).toEqual([{ browser: 'firefox', count: 1 }]);
    expect(() => parseBrowserMix('chromium:4,safari:2')).toThrow('unknown browser "safari" in --browsers; one of: chromium, firefox');
    expect(() => parseBrowserMix('firefox:0')).toThrow('"firefox:0" needs a whole number of viewers');
    expect(() => parseBrowserMix('firefox:2,firefox:1')).toThrow('--browsers names firefox twice');
    expect(() => parseBrowserMix(',')).toThrow('--browsers names no browser');
  });

  it('interleaves the browsers in proportion as viewers join, and gives churn\'s newcomers the browser of the one they replace', () => {
    const even = parseBrowserMix('chromium:4,firefox:4');
    expect([...Array(8).keys()].map((index) => browserOfViewer(even, index))).toEqual(['chromium', 'firefox', 'chromium', 'firefox', 'chromium', 'firefox', 'chromium', 'firefox']);
    const uneven = parseBrowserMix('chromium:2,firefox:4');
    const six = [...Array(6).keys()].map((index) => browserOfViewer(uneven, index));
    expect(six.filter((name) => name === 'firefox')).toHaveLength(4);
    expect(six.slice(0, 3).filter((name) => name === 'chromium')).toHaveLength(1);
    expect(browserOfViewer(uneven, 6 + 2)).toBe(six[2]);
  });

  it('takes --browsers on the command line: the viewers add up to --peers, or --peers follows', () => {
    expect(parseSwarmArgs(['--browsers', 'chromium:2,firefox:3'])).toMatchObject({ peers: 5, browsers: [{ browser: 'chromium', count: 2 }, { browser: 'firefox', count: 3 }] });
    expect(parseSwarmArgs(['--browsers', 'firefox:4', '--peers', '4'])).toMatchObject({ peers: 4 });
    expect(() => parseSwarmArgs(['--browsers', 'firefox:4', '--peers', '6'])).toThrow('--browsers firefox:4 names 4 viewers but --peers is 6');
    expect(parseSwarmArgs([])).toMatchObject({ browsers: undefined });
    // A Firefox per Firefox viewer starts slowly: the watchdog allows it as it does a shaped run's browsers.
    const base = { engines: ['http', 'shoal'] as const, durationS: 60, peers: 8, network: undefined, nat: undefined };
    expect(runTimeLimitMs({ ...base, engines: [...base.engines], browsers: parseBrowserMix('chromium:4,firefox:4') })).toBeGreaterThan(runTimeLimitMs({ ...base, engines: [...base.engines] }));
  });
});

describe('the report by browser', () => {
  const peer = (id: string, browser: PeerReport['browser'], stalls: number, p2pBytes: number, startupMs: number | null): PeerReport =>
    ({ id, browser, stalls: { count: stalls, seconds: stalls * 1.5 }, startupMs, httpBytes: 1000, p2pBytes, uploadedBytes: 10 }) as PeerReport;
  const final = (connectionsByRemote: ViewerSnapshot['connectionsByRemote']) => ({ connectionsByRemote }) as ViewerSnapshot;

  it('sums each browser\'s viewers, and counts connections between browsers at both ends', () => {
    const perPeer = [peer('v0', 'chromium', 1, 500, 1200), peer('v1', 'firefox', 0, 700, 2000), peer('v2', 'chromium', 0, 0, null), peer('v3', 'firefox', 2, 100, 2400)];
    const finals = [
      final({ chromium: { connected: 1, failed: 0 }, firefox: { connected: 2, failed: 0 } }),
      final({ chromium: { connected: 1, failed: 1 }, firefox: { connected: 1, failed: 0 } }),
      final({ chromium: { connected: 1, failed: 0 } }),
      null,
    ];
    const { byBrowser, pairs } = summarizeBrowsers(perPeer, finals);
    expect(byBrowser).toEqual([
      { browser: 'chromium', viewers: 2, notStarted: 1, stalls: { count: 1, seconds: 1.5 }, startupMsP50: 1200, httpBytes: 2000, p2pBytes: 500, uploadedBytes: 20 },
      { browser: 'firefox', viewers: 2, notStarted: 0, stalls: { count: 2, seconds: 3 }, startupMsP50: 2000, httpBytes: 2000, p2pBytes: 800, uploadedBytes: 20 },
    ]);
    expect(pairs).toEqual([
      { pair: 'chromium↔chromium', connected: 2, failed: 0 },
      { pair: 'chromium↔firefox', connected: 3, failed: 1 },
      { pair: 'firefox↔firefox', connected: 1, failed: 0 },
    ]);
  });
});
