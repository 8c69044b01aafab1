// Every tracker setting in one table: its type, default, and the sentence an operator reads.
// Sources, lowest precedence first: defaults < JSON config file < SHOAL_TRACKER_* env < flags.

import { readFileSync } from 'node:fs';
import type { AnnounceFilter, MessageHandlerOptions } from './message-handler.js';

type Kind = 'string' | 'number' | 'boolean' | 'list' | 'hops';

interface Setting {
  kind: Kind;
  doc: string;
  min?: number;
}

export const SETTINGS = {
  host: { kind: 'string', doc: 'Address to listen on.' },
  port: { kind: 'number', min: 0, doc: 'Port to listen on (0 picks a free one; the bound port is printed).' },
  cert: { kind: 'string', doc: 'TLS certificate (PEM file). With `key`, serves wss:// and https://.' },
  key: { kind: 'string', doc: 'TLS private key (PEM file).' },
  announceIntervalSec: { kind: 'number', min: 1, doc: 'Announce interval told to clients, seconds.' },
  peerTimeoutSec: { kind: 'number', min: 1, doc: 'A peer that has not announced for this long leaves its swarm.' },
  maxOffersPerAnnounce: { kind: 'number', min: 0, doc: 'Offers relayed per announce at most (extra offers are ignored).' },
  maxSwarmsPerConnection: { kind: 'number', min: 1, doc: 'Swarms one WebSocket may join.' },
  maxScrapeInfoHashes: { kind: 'number', min: 1, doc: 'info_hashes one scrape request may name.' },
  fullScrape: { kind: 'boolean', doc: 'Answer a scrape without info_hash with every swarm (off: a failure reason).' },
  maxConnections: { kind: 'number', min: 0, doc: 'Concurrent WebSockets (0: no limit but the open-files limit).' },
  maxConnectionsPerIp: { kind: 'number', min: 0, doc: 'Concurrent WebSockets from one IP address, per thread (0: no limit). Behind a proxy, set trustProxy, or every client is the proxy.' },
  messagesPerSecond: { kind: 'number', min: 0, doc: 'Sustained messages per second per connection (0: no limit).' },
  messageBurst: { kind: 'number', min: 1, doc: 'Messages a connection may send at once before the rate applies.' },
  maxPayloadBytes: { kind: 'number', min: 512, doc: 'Largest incoming frame; larger ones close the socket.' },
  maxBackpressureBytes: { kind: 'number', min: 1024, doc: 'Unsent bytes queued to one socket before it is closed as too slow.' },
  idleTimeoutSec: { kind: 'number', min: 0, doc: 'Close a socket silent this long; pings are sent automatically (0: never).' },
  trustProxy: {
    kind: 'hops',
    doc: 'Proxy hops in front of the tracker whose X-Forwarded-For entries are trusted: the client IP is the entry this many from the right (true: 1; false/0: the socket address).',
  },
  allowedOrigins: { kind: 'list', doc: 'Origins allowed to connect (Origin header); empty allows all.' },
  infoHashAllowList: { kind: 'string', doc: 'File of allowed info_hashes, 40 hex digits per line; reloaded on SIGHUP.' },
  statsRoutes: { kind: 'boolean', doc: 'Serve /stats.json and /metrics.' },
  metricsHost: { kind: 'string', doc: 'Serve /stats.json and /metrics on this separate address instead of the tracker port (with metricsPort).' },
  metricsPort: { kind: 'number', min: 0, doc: 'Port of the separate stats listener (with metricsHost; 0 picks one).' },
  drainSec: { kind: 'number', min: 0, doc: 'On SIGTERM, answer /health with 503 for this long while still serving, then close every socket.' },
  logLevel: { kind: 'string', doc: 'silent | error | warn | info | debug.' },
  workers: { kind: 'number', min: 0, doc: 'Threads serving the port (the CLI; 0: one per core). Swarms span all threads.' },
  redis: { kind: 'string', doc: 'redis://[[user]:password@]host:port[/db] (rediss:// for TLS) of a Redis or Valkey: join the cluster of tracker nodes that share it.' },
  clusterLeaseSec: { kind: 'number', min: 2, doc: 'A cluster node silent this long is gone: the others drop its peers.' },
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** The swarm logic's settings (announce interval, limits per message, rate) plus the server's. */
export interface TrackerOptions extends MessageHandlerOptions {
  host: string;
  port: number;
  cert: string | null;
  key: string | null;
  maxConnections: number;
  maxConnectionsPerIp: number;
  maxPayloadBytes: number;
  maxBackpressureBytes: number;
  idleTimeoutSec: number;
  /** Trusted proxy hops (0: ignore X-Forwarded-For). */
  trustProxy: number;
  allowedOrigins: string[];
  infoHashAllowList: string | null;
  statsRoutes: boolean;
  metricsHost: string | null;
  metricsPort: number | null;
  drainSec: number;
  logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  /** Worker threads (CLI and startWorkers; startTracker itself runs on the calling thread); 0: one per core. */
  workers: number;
  redis: string | null;
  clusterLeaseSec: number;
  /** Programmatic only: decides each join (see AnnounceFilter). */
  filter?: AnnounceFilter | undefined;
  /** Programmatic only: uWebSockets.js builds to try, in order (defaults to UWS_CANDIDATES). */
  uwsCandidates?: readonly string[];
}

export const DEFAULT_OPTIONS: Readonly<TrackerOptions> = {
  host: '0.0.0.0',
  port: 8000,
  cert: null,
  key: null,
  announceIntervalSec: 120,
  peerTimeoutSec: 300,
  maxOffersPerAnnounce: 10,
  maxSwarmsPerConnection: 100,
  maxScrapeInfoHashes: 50,
  fullScrape: false,
  maxConnections: 0,
  // One viewer holds one socket per tracker; 256 leaves room for a large office or campus NAT and
  // stops one address from taking the whole open-files limit.
  maxConnectionsPerIp: 256,
  messagesPerSecond: 20,
  messageBurst: 200,
  maxPayloadBytes: 64 * 1024,
  maxBackpressureBytes: 256 * 1024,
  idleTimeoutSec: 60,
  trustProxy: 0,
  allowedOrigins: [],
  infoHashAllowList: null,
  statsRoutes: true,
  metricsHost: null,
  metricsPort: null,
  drainSec: 5,
  logLevel: 'info',
  workers: 0,
  redis: null,
  clusterLeaseSec: 10,
};

export class ConfigError extends Error {
  readonly code = 'TRACKER_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'];
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (name: string) => `SHOAL_TRACKER_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

export const flagName = kebab;
export const envVarName = envName;

/** Converts one raw value (from a file, env or flag) to the setting's type, or throws naming the field. */
function coerce(name: SettingName, raw: unknown, source: string): unknown {
  const setting: Setting = SETTINGS[name];
  const bad = (expected: string) => new ConfigError(`${source}: \`${name}\` must be ${expected}, got ${JSON.stringify(raw)}`);
  switch (setting.kind) {
    case 'string':
      if (raw === null) return null;
      if (typeof raw !== 'string' || raw === '') throw bad('a non-empty string');
      if (name === 'logLevel' && !LOG_LEVELS.includes(raw)) throw bad(LOG_LEVELS.join(' | '));
      if (name === 'redis' && !/^rediss?:\/\/[^/]/.test(raw)) throw bad('a redis://host:port (or rediss://) URL');
      return raw;
    case 'number': {
      if (raw === null && (DEFAULT_OPTIONS as unknown as Record<string, unknown>)[name] === null) return null;
      const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('a number');
      if (setting.min !== undefined && value < setting.min) throw bad(`at least ${setting.min}`);
      if ((name === 'port' || name === 'metricsPort') && (value > 65535 || !Number.isInteger(value))) throw bad('an integer port 0-65535');
      if (name === 'workers' && (value > 256 || !Number.isInteger(value))) throw bad('a whole number of threads, 0-256');
      return value;
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'yes') return true;
      if (raw === 'false' || raw === '0' || raw === 'no') return false;
      throw bad('true or false');
    case 'hops': {
      if (raw === true || raw === 'true' || raw === 'yes') return 1;
      if (raw === false || raw === 'false' || raw === 'no') return 0;
      const hops = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof hops !== 'number' || !Number.isInteger(hops) || hops < 0) throw bad('a number of proxy hops (0, 1, 2...) or true/false');
      return hops;
    }
    case 'list':
      if (Array.isArray(raw) && raw.every((entry) => typeof entry === 'string')) return raw;
      if (typeof raw === 'string') return raw.split(',').map((entry) => entry.trim()).filter(Boolean);
      throw bad('a list of strings (comma-separated in env and flags)');
  }
}

function isSettingName(name: string): name is SettingName {
  return Object.hasOwn(SETTINGS, name);
}

/** Validates a partial options object given in code (startTracker), naming the bad field. */
export function resolveOptions(partial: Partial<TrackerOptions> = {}): TrackerOptions {
  const options: TrackerOptions = { ...DEFAULT_OPTIONS, allowedOrigins: [...DEFAULT_OPTIONS.allowedOrigins] };
  for (const [name, value] of Object.entries(partial)) {
    if (value === undefined) continue;
    if (name === 'filter') {
      if (typeof value !== 'function') throw new ConfigError('options: `filter` must be a function');
      options.filter = value as AnnounceFilter;
    } else if (name === 'uwsCandidates') {
      options.uwsCandidates = value as string[];
    } else if (isSettingName(name)) {
      (options as unknown as Record<string, unknown>)[name] = coerce(name, value, 'options');
    } else {
      throw new ConfigError(`options: unknown setting \`${name}\``);
    }
  }
  if ((options.cert === null) !== (options.key === null)) throw new ConfigError('options: `cert` and `key` go together');
  if ((options.metricsHost === null) !== (options.metricsPort === null)) throw new ConfigError('options: `metricsHost` and `metricsPort` go together');
  return options;
}

export interface CliArguments {
  options: Partial<TrackerOptions>;
  help: boolean;
  version: boolean;
  configFile: string | null;
}

/** Reads flags (`--max-connections 100`, `--full-scrape`, `--no-stats-routes`), env and an optional config file. */
export function loadCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CliArguments {
  const byFlag = new Map<string, SettingName>(Object.keys(SETTINGS).map((name) => [kebab(name), name as SettingName]));
  const fromFlags: Record<string, unknown> = {};
  let configFile: string | null = env.SHOAL_TRACKER_CONFIG ?? null;
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--version' || arg === '-v') {
      version = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument ${JSON.stringify(arg)} (see --help)`);
    let [flag, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === 'config') {
      configFile = inline ?? argv[++i] ?? null;
      if (!configFile) throw new ConfigError('--config needs a file path');
      continue;
    }
    let negated = false;
    if (!byFlag.has(flag) && flag.startsWith('no-') && byFlag.has(flag.slice(3))) {
      flag = flag.slice(3);
      negated = true;
    }
    const name = byFlag.get(flag);
    if (!name) throw new ConfigError(`unknown flag --${flag} (see --help)`);
    const kind: Kind = SETTINGS[name].kind;
    // `--trust-proxy` alone means one hop; `--trust-proxy 2` names the count.
    if (inline === undefined && (kind === 'boolean' || (kind === 'hops' && (negated || !/^\d+$/.test(argv[i + 1] ?? ''))))) {
      fromFlags[name] = kind === 'hops' ? (negated ? 0 : 1) : !negated;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`--${flag} needs a value`);
    fromFlags[name] = coerce(name, value, `--${flag}`);
  }

  const merged: Record<string, unknown> = {};
  if (configFile) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(configFile, 'utf8'));
    } catch (error) {
      throw new ConfigError(`config file ${configFile}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`config file ${configFile}: must hold a JSON object`);
    }
    for (const [name, value] of Object.entries(parsed)) {
      if (!isSettingName(name)) throw new ConfigError(`config file ${configFile}: unknown setting \`${name}\``);
      merged[name] = coerce(name, value, `config file ${configFile}`);
    }
  }
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const raw = env[envName(name)];
    if (raw !== undefined && raw !== '') merged[name] = coerce(name, raw, envName(name));
  }
  Object.assign(merged, fromFlags);
  return { options: merged as Partial<TrackerOptions>, help, version, configFile };
}

export function usage(): string {
  const lines = [
    'usage: shoal-tracker [--config file.json] [--flag value ...] | --version | --help',
    '',
    'Every setting can come from the JSON config file (key as shown), an environment variable,',
    'or a flag; flags win over env, env over the file. Booleans: --flag / --no-flag.',
    '',
  ];
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, Setting][]) {
    const fallback = DEFAULT_OPTIONS[name];
    const shown = Array.isArray(fallback) ? (fallback.length ? fallback.join(',') : '(none)') : fallback === null ? '(none)' : String(fallback);
    lines.push(`  --${kebab(name)}  ${setting.doc}`);
    lines.push(`      config: ${name}   env: ${envName(name)}   default: ${shown}`);
  }
  lines.push(
    '',
    'Signals: SIGHUP reloads the info_hash allow-list and the TLS certificate; SIGTERM drains for drainSec, then shuts down; SIGINT shuts down at once.',
    'Under npx or an npm script, npm passes on SIGINT and SIGTERM only: send SIGHUP to the pid the tracker logs at start; the tracker stops when npm exits.',
  );
  return lines.join('\n');
}
