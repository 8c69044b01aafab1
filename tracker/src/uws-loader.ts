// uWebSockets.js is not on the npm registry under its own name: try the builds an operator may
// have, in order, and say exactly which one runs. The trufflesuite package silently falls back
// to a slow pure-JS server when its binary does not load; we load its binary directly instead.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UwsTypes;

export interface UwsBuild {
  uws: Uws;
  /** npm package the build came from. */
  packageName: string;
  packageVersion: string;
  /** The native file, e.g. uws_linux_x64_115.node. */
  binary: string;
}

/** Official install first (`npm i uNetworking/uWebSockets.js#v20.x`), then registry builds. */
export const UWS_CANDIDATES: readonly string[] = ['uWebSockets.js', '@trufflesuite/uws-js-unofficial', '@btc-vision/uwebsockets.js'];

export class UwsLoadError extends Error {
  readonly code = 'TRACKER_NO_UWS';
  constructor(
    message: string,
    /** What to do, in one sentence (also part of the message). */
    readonly advice: string,
  ) {
    super(message);
    this.name = 'UwsLoadError';
  }
}

const require = createRequire(import.meta.url);
const binaryName = () => `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;

function packageRoot(packageName: string): string {
  // Walk up from the resolved main file to the package.json naming this package.
  let dir = dirname(require.resolve(packageName));
  for (;;) {
    try {
      const manifest = require(join(dir, 'package.json')) as { name?: string };
      if (manifest.name === packageName) return dir;
    } catch {
      // not here, keep walking
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json for ${packageName}`);
    dir = parent;
  }
}

function loadCandidate(packageName: string): UwsBuild {
  const root = packageRoot(packageName);
  const manifest = require(join(root, 'package.json')) as { version?: string };
  const binary = binaryName();
  const uws = (packageName === '@trufflesuite/uws-js-unofficial'
    ? require(join(root, 'binaries', binary))
    : require(packageName)) as Uws;
  if (typeof uws.App !== 'function') throw new Error('module has no App()');
  return { uws, packageName, packageVersion: manifest.version ?? 'unknown', binary };
}

/**
 * Node majors some registry build serves (trufflesuite: 20; btc-vision: 20, 22, 24, 25); the
 * package's `engines` says the same (tested).
 */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [20, 22, 24, 25];
/** The highest GLIBC_ symbol version each registry build's Linux binaries need (`readelf -V`). */
export const GLIBC_NEEDED = { trufflesuite: '2.27', btcVision: '2.38' } as const;

/** The most telling line of a load failure: btc-vision puts the loader's own error after its notice. */
function failureLine(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error)).split('\n').filter((line) => line.trim() !== '');
  return lines.find((line) => /GLIBC_|not found|invalid ELF|wrong ELF/.test(line)) ?? lines[0] ?? 'failed to load';
}

function glibcRuntime(): string | null {
  if (process.platform !== 'linux') return null;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime ?? null;
}

const olderThan = (version: string, than: string) => {
  const [a = 0, b = 0] = version.split('.').map(Number);
  const [c = 0, d = 0] = than.split('.').map(Number);
  return a < c || (a === c && b < d);
};

/** What to do, for this Node major and C library: the sentence an operator acts on. */
export function uwsAdvice(nodeMajor: number, glibc: string | null): string {
  if (!SUPPORTED_NODE_MAJORS.includes(nodeMajor)) {
    return `Node ${nodeMajor} is not supported: run the tracker on Node ${SUPPORTED_NODE_MAJORS.join(', ')}.`;
  }
  if (nodeMajor !== 20 && glibc !== null && olderThan(glibc, GLIBC_NEEDED.btcVision)) {
    return (
      `This system's glibc is ${glibc}; the registry build for Node ${nodeMajor} (@btc-vision/uwebsockets.js) needs glibc ${GLIBC_NEEDED.btcVision}+. ` +
      `Run the tracker on Node 20 (its build needs glibc ${GLIBC_NEEDED.trufflesuite}+), or on glibc ${GLIBC_NEEDED.btcVision}+ (Debian 13, Ubuntu 24.04), or install the official build.`
    );
  }
  return 'Install one that matches this platform.';
}

export function loadUws(candidates: readonly string[] = UWS_CANDIDATES): UwsBuild {
  const failures: string[] = [];
  for (const name of candidates) {
    try {
      return loadCandidate(name);
    } catch (error) {
      failures.push(`  ${name}: ${failureLine(error)}`);
    }
  }
  const glibc = glibcRuntime();
  const advice = uwsAdvice(Number(process.versions.node.split('.')[0]), glibc);
  throw new UwsLoadError(
    [
      `no uWebSockets.js build loads on ${process.platform}-${process.arch}${glibc ? ` (glibc ${glibc})` : ''}, Node ${process.versions.node} (ABI ${process.versions.modules}).`,
      ...failures,
      advice,
      'The builds:',
      '  npm install uNetworking/uWebSockets.js#v20.52.0      (official build, from GitHub)',
      `  npm install @trufflesuite/uws-js-unofficial          (Node 20; Linux: glibc ${GLIBC_NEEDED.trufflesuite}+)`,
      `  npm install @btc-vision/uwebsockets.js               (Node 20, 22, 24, 25; Linux: glibc ${GLIBC_NEEDED.btcVision}+)`,
    ].join('\n'),
    advice,
  );
}
