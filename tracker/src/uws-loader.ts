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
  constructor(message: string) {
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

export function loadUws(candidates: readonly string[] = UWS_CANDIDATES): UwsBuild {
  const failures: string[] = [];
  for (const name of candidates) {
    try {
      return loadCandidate(name);
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      failures.push(`  ${name}: ${message}`);
    }
  }
  throw new UwsLoadError(
    [
      `no uWebSockets.js build loads on ${process.platform}-${process.arch}, Node ${process.versions.node} (ABI ${process.versions.modules}).`,
      ...failures,
      'Install one that matches this platform, e.g.:',
      '  npm install uNetworking/uWebSockets.js#v20.52.0      (official build, from GitHub)',
      '  npm install @trufflesuite/uws-js-unofficial          (glibc 2.34+, Node 16-20)',
      '  npm install @btc-vision/uwebsockets.js               (glibc 2.38+, Node 20-25)',
    ].join('\n'),
  );
}
