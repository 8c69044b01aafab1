// What each viewer's shaped link carried, from the kernel's byte counters sampled during the run:
// the evidence that the shaping held (no 5-second window above the cap) and how often the link
// was full. Counters are Ethernet frame bytes after shaping, as tc tbf counts them, so a full
// link reads close to 100% of its cap (of which headers are a part: it is not goodput).
import type { ViewerLink } from '../network-profiles.js';

export interface LinkSample {
  /** Seconds since the run started. */
  tS: number;
  upBytes: number;
  downBytes: number;
}

export interface ViewerLinkRecord {
  id: string;
  address: string;
  link: ViewerLink;
  samples: LinkSample[];
}

export interface DirectionReport {
  /** The cap, bits/s; null for no limit. */
  capBitsPerS: number | null;
  bytes: number;
  /** Mean over the viewer's time on the network, bits/s. */
  meanBitsPerS: number;
  /** The busiest sampling window, bits/s. */
  peakBitsPerS: number;
  /** peak / cap (null without a cap): above 1.1 the shaping did not hold. */
  peakOfCap: number | null;
  /** Seconds in windows at 90% of the cap or more (the link was full). */
  fullS: number;
}

export interface ViewerLinkReport {
  id: string;
  address: string;
  /** false: a non-uploading viewer (its uplink is only for its own requests and acks). */
  uploads: boolean;
  up: DirectionReport;
  down: DirectionReport;
}

/** What the runner collected of the viewers' links in one engine run. */
export interface NetworkRecord {
  profile: string;
  description: string;
  /** The stream bitrate the profile's uplink multiples were applied to, bits/s. */
  bitrateBitsPerS: number;
  uplinkQueueMs: number;
  downlinkQueueMs: number;
  latencyModel: string;
  /** How the viewers sit behind NATs (null: none, every viewer on the test network itself). */
  nat: string | null;
  viewers: ViewerLinkRecord[];
}

export interface NetworkReport extends Omit<NetworkRecord, 'viewers'> {
  viewers: ViewerLinkReport[];
  /** No viewer's busiest window went over 110% of its cap, either way. */
  shapingHeld: boolean;
}

/** A window shorter than this is too short to judge a rate from (tbf lets a bucket's burst through). */
const MIN_WINDOW_S = 1.5;

function direction(samples: LinkSample[], pick: (sample: LinkSample) => number, capBitsPerS: number): DirectionReport {
  const cap = Number.isFinite(capBitsPerS) ? capBitsPerS : null;
  let peak = 0;
  let fullS = 0;
  for (let index = 1; index < samples.length; index += 1) {
    const seconds = samples[index]!.tS - samples[index - 1]!.tS;
    if (seconds < MIN_WINDOW_S) continue;
    const rate = ((pick(samples[index]!) - pick(samples[index - 1]!)) * 8) / seconds;
    peak = Math.max(peak, rate);
    if (cap !== null && rate >= 0.9 * cap) fullS += seconds;
  }
  const first = samples[0];
  const last = samples.at(-1);
  const bytes = first && last ? pick(last) - pick(first) : 0;
  const spanS = first && last ? last.tS - first.tS : 0;
  return {
    capBitsPerS: cap,
    bytes,
    meanBitsPerS: spanS > 0 ? Math.round((bytes * 8) / spanS) : 0,
    peakBitsPerS: Math.round(peak),
    peakOfCap: cap === null ? null : Math.round((peak / cap) * 1000) / 1000,
    fullS: Math.round(fullS * 10) / 10,
  };
}

export function summarizeViewerLink(record: ViewerLinkRecord): ViewerLinkReport {
  return {
    id: record.id,
    address: record.address,
    uploads: record.link.uploads !== false,
    up: direction(record.samples, (sample) => sample.upBytes, record.link.upBitsPerS),
    down: direction(record.samples, (sample) => sample.downBytes, record.link.downBitsPerS),
  };
}

export function summarizeNetwork(record: NetworkRecord): NetworkReport {
  const viewers = record.viewers.map(summarizeViewerLink);
  const held = viewers.every((viewer) => [viewer.up, viewer.down].every((report) => report.peakOfCap === null || report.peakOfCap <= 1.1));
  return { ...record, viewers, shapingHeld: held };
}

const kbit = (bitsPerS: number | null) => (bitsPerS === null ? '∞' : String(Math.round(bitsPerS / 1000)));

/** A heading line and one line per viewer: cap, mean and peak each way, in kbit/s, and the time the link was full. */
export function renderNetworkLines(network: NetworkReport): string[] {
  return [
    `network ${network.profile} (uplinks x ${Math.round(network.bitrateBitsPerS / 1000)} kbit/s, uplink queue ${network.uplinkQueueMs} ms): shaping ${network.shapingHeld ? 'held' : 'DID NOT HOLD'} (busiest 5-s window per viewer vs its cap)`,
    ...(network.nat ? [`  NAT: ${network.nat}`] : []),
    ...renderLinkLines(network),
  ];
}

/** One line per viewer: cap, mean and peak each way, in kbit/s, and the time the link was full. */
export function renderLinkLines(network: NetworkReport): string[] {
  return network.viewers.map((viewer) => {
    const side = (name: string, report: DirectionReport) =>
      `${name} cap ${kbit(report.capBitsPerS)} mean ${kbit(report.meanBitsPerS)} peak ${kbit(report.peakBitsPerS)}` +
      (report.peakOfCap === null ? '' : ` (${Math.round(report.peakOfCap * 100)}%, full ${report.fullS}s)`);
    return `  ${viewer.id.padEnd(4)} ${side('up', viewer.up)} · ${side('down', viewer.down)} kbit/s${viewer.uploads ? '' : ' · does not upload'}`;
  });
}
