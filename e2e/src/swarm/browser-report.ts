// A run's figures by browser (--browsers chromium:4,firefox:4): each browser's viewers, their
// stalls, startup and bytes, and the peer connections between browsers (chromium↔firefox, …).
import type { PeerReport } from './report-schema.js';
import type { BrowserName } from './viewer-browsers.js';
import type { ViewerSnapshot } from './viewer-snapshot.js';

export interface BrowserSummary {
  browser: BrowserName;
  viewers: number;
  notStarted: number;
  stalls: { count: number; seconds: number };
  startupMsP50: number | null;
  httpBytes: number;
  p2pBytes: number;
  uploadedBytes: number;
}

/**
 * Peer connections between two browsers, counted at both ends (a Chromium↔Firefox connection is
 * one at the Chromium viewer and one at the Firefox viewer), as the run's `connections` are.
 */
export interface BrowserPairConnections {
  /** 'chromium↔chromium', 'chromium↔firefox', 'firefox↔firefox'. */
  pair: string;
  connected: number;
  failed: number;
}

export interface BrowsersReport {
  byBrowser: BrowserSummary[];
  pairs: BrowserPairConnections[];
}

const median = (values: number[]) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** By browser, in the order the browsers first appear among the viewers. */
export function summarizeBrowsers(perPeer: PeerReport[], finals: Array<ViewerSnapshot | null>): BrowsersReport {
  const names = [...new Set(perPeer.map((peer) => peer.browser))];
  const byBrowser = names.map((browser): BrowserSummary => {
    const peers = perPeer.filter((peer) => peer.browser === browser);
    const sum = (pick: (peer: PeerReport) => number) => peers.reduce((total, peer) => total + pick(peer), 0);
    const startups = peers.map((peer) => peer.startupMs).filter((value): value is number => value !== null);
    return {
      browser,
      viewers: peers.length,
      notStarted: peers.length - startups.length,
      stalls: { count: sum((peer) => peer.stalls.count), seconds: Math.round(sum((peer) => peer.stalls.seconds) * 100) / 100 },
      startupMsP50: median(startups),
      httpBytes: sum((peer) => peer.httpBytes),
      p2pBytes: sum((peer) => peer.p2pBytes),
      uploadedBytes: sum((peer) => peer.uploadedBytes),
    };
  });
  const pairs = new Map<string, BrowserPairConnections>();
  perPeer.forEach((peer, index) => {
    for (const [remote, counts] of Object.entries(finals[index]?.connectionsByRemote ?? {})) {
      const pair = [peer.browser, remote].sort().join('↔');
      const entry = pairs.get(pair) ?? { pair, connected: 0, failed: 0 };
      entry.connected += counts.connected;
      entry.failed += counts.failed;
      pairs.set(pair, entry);
    }
  });
  return { byBrowser, pairs: [...pairs.values()].sort((a, b) => a.pair.localeCompare(b.pair)) };
}

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Terminal lines: one per browser, one for the connections between browsers. */
export function renderBrowserLines(engine: string, browsers: BrowsersReport): string[] {
  const lines = browsers.byBrowser.map(
    (entry) =>
      `${engine}: ${entry.browser} ×${entry.viewers}: stalls ${entry.stalls.count}/${entry.stalls.seconds.toFixed(1)}s, ` +
      `startup p50 ${entry.startupMsP50 === null ? '–' : `${(entry.startupMsP50 / 1000).toFixed(1)}s`}${entry.notStarted ? `, ${entry.notStarted} never started` : ''}, ` +
      `HTTP ${megabytes(entry.httpBytes)} MB, from peers ${megabytes(entry.p2pBytes)} MB, to peers ${megabytes(entry.uploadedBytes)} MB`,
  );
  if (browsers.pairs.length > 0) {
    lines.push(`${engine}: connections between browsers (counted at both ends): ${browsers.pairs.map((entry) => `${entry.pair} ${entry.connected}${entry.failed ? ` (${entry.failed} failed)` : ''}`).join(', ')}`);
  }
  return lines;
}
