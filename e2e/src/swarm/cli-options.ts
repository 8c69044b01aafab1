// The swarm CLI's arguments, parsed and validated into SwarmOptions. The help text is
// e2e/bin/swarm-usage.js (plain JavaScript: it prints before any build).
import { parseArgs } from 'node:util';
import { networkProfiles } from '../network-profiles.js';
import type { SwarmOptions } from './swarm-options.js';
import { scenarios } from './scenarios.js';
import { faultNames, hostileBehaviours, type FaultName, type HostileBehaviour } from './faults.js';
import { natModes, type NatMode } from './stage.js';
import { parseThreshold } from './thresholds.js';
import { mixSize, parseBrowserMix } from './viewer-browsers.js';
import { engineNames, type EngineName } from './viewer-snapshot.js';


export interface CliOptions extends SwarmOptions {
  outDir: string;
}

const positiveNumber = (name: string, text: string | undefined, fallback: number) => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got "${text}"`);
  return value;
};

const engineName = (text: string): EngineName => {
  if (!(engineNames as readonly string[]).includes(text)) throw new Error(`unknown engine "${text}"; one of: ${engineNames.join(', ')}`);
  return text as EngineName;
};

/** Every option the CLI accepts (parseArgs' table). */
export const swarmCliOptions = {
  scenario: { type: 'string' },
  peers: { type: 'string' },
  browsers: { type: 'string' },
  duration: { type: 'string' },
  engine: { type: 'string' },
  compare: { type: 'string' },
  out: { type: 'string' },
  stream: { type: 'string' },
  tracker: { type: 'string' },
  level: { type: 'string' },
  'sample-interval': { type: 'string' },
  network: { type: 'string' },
  nat: { type: 'string' },
  assert: { type: 'string', multiple: true },
  fault: { type: 'string' },
  outage: { type: 'string' },
  hostile: { type: 'string' },
  'no-baseline': { type: 'boolean', default: false },
  'no-integrity': { type: 'boolean', default: false },
  trace: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export function parseSwarmArgs(argv: string[], now = new Date()): CliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: swarmCliOptions,
    strict: true,
  });
  if (values.help) return 'help';
  const scenario = values.scenario;
  if (scenario !== undefined && !scenarios[scenario]) throw new Error(`unknown scenario "${scenario}"; one of: ${Object.keys(scenarios).join(', ')}`);
  const browsers = values.browsers === undefined ? undefined : parseBrowserMix(values.browsers);
  const peers = positiveNumber('peers', values.peers, browsers ? mixSize(browsers) : 4);
  if (!Number.isInteger(peers)) throw new Error(`--peers must be a whole number, got "${values.peers}"`);
  if (browsers && mixSize(browsers) !== peers) throw new Error(`--browsers ${values.browsers} names ${mixSize(browsers)} viewers but --peers is ${peers}: give one, or make them agree`);
  if (values.engine && values.compare) throw new Error('give either --engine or --compare, not both');
  let engines: EngineName[];
  if (values.compare) {
    engines = [...new Set(values.compare.split(',').map((name) => engineName(name.trim())))];
    // The baseline first: if hls.js alone cannot play smoothly here, that is known before the rest.
    engines.sort((a, b) => Number(b === 'http') - Number(a === 'http'));
  } else {
    const engine = engineName(values.engine ?? 'shoal');
    engines = engine === 'http' || values['no-baseline'] ? [engine] : ['http', engine];
  }
  if (values.stream && !/^https?:\/\//.test(values.stream)) throw new Error(`--stream must be an http(s) URL, got "${values.stream}"`);
  if (values.tracker && !/^wss?:\/\//.test(values.tracker)) throw new Error(`--tracker must be a ws:// or wss:// URL, got "${values.tracker}"`);
  if (values.network !== undefined && !networkProfiles[values.network]) {
    throw new Error(`unknown network "${values.network}"; one of: ${Object.keys(networkProfiles).join(', ')}`);
  }
  if (values.nat !== undefined && !(natModes as readonly string[]).includes(values.nat)) {
    throw new Error(`unknown --nat "${values.nat}"; one of: ${natModes.join(', ')}`);
  }
  if ((values.network !== undefined || values.nat !== undefined) && (values.stream || values.tracker)) {
    throw new Error('--network runs the viewers on a test network of their own, with the run\'s own origin and tracker: drop --stream/--tracker');
  }
  const level = values.level === undefined ? undefined : Number(values.level);
  if (level !== undefined && !Number.isInteger(level)) throw new Error(`--level must be a rendition index, got "${values.level}"`);
  const listOf = <T extends string>(option: string, text: string, allowed: readonly T[]): T[] =>
    text.split(',').map((name) => {
      if (!(allowed as readonly string[]).includes(name.trim())) throw new Error(`unknown --${option} "${name.trim()}"; one of: ${allowed.join(', ')}`);
      return name.trim() as T;
    });
  const faults = values.fault === undefined ? [] : listOf<FaultName>('fault', values.fault, faultNames);
  if ((values.outage !== undefined || values.hostile !== undefined) && faults.length === 0) throw new Error('--outage and --hostile go with --fault');
  const stamp = now.toISOString().replace(/[:.]/g, '-').slice(0, 19);
  return {
    scenario,
    peers,
    browsers,
    durationS: positiveNumber('duration', values.duration, 60),
    engines,
    outDir: values.out ?? `out/swarm-${scenario ?? (values.stream ? 'stream' : 'live-normal')}-${stamp}`,
    streamUrl: values.stream,
    trackerUrl: values.tracker,
    level,
    sampleIntervalS: values['sample-interval'] === undefined ? undefined : positiveNumber('sample-interval', values['sample-interval'], 5),
    network: values.network,
    nat: values.nat as NatMode | undefined,
    integrity: !values['no-integrity'],
    trace: values.trace,
    thresholds: (values.assert ?? []).map(parseThreshold),
    faults: faults.length
      ? {
          faults,
          outageS: values.outage === undefined ? undefined : positiveNumber('outage', values.outage, 30),
          hostile: values.hostile === undefined ? undefined : listOf<HostileBehaviour>('hostile', values.hostile, hostileBehaviours),
        }
      : undefined,
  };
}

/** Upper bound on a whole CLI run: each engine's duration plus start-up and collection. */
export function runTimeLimitMs(options: Pick<SwarmOptions, 'engines' | 'durationS' | 'peers' | 'network' | 'nat' | 'browsers'>): number {
  // A browser per viewer (--network, and each Firefox viewer) starts in a few seconds each on a busy machine.
  const perViewerMs = options.network === undefined && options.nat === undefined && !options.browsers?.some((entry) => entry.browser !== 'chromium') ? 5_000 : 12_000;
  return options.engines.length * (options.durationS * 1000 + 60_000 + options.peers * perViewerMs) + 30_000;
}
