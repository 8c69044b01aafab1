import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('the published @shoal/core', () => {
  it.runIf(existsSync(`${packageDir}dist/index.js`))('holds the engine and its WebRTC entry, and no simulator or testing kit', () => {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir, encoding: 'utf8' }));
    const files: string[] = packed.files.map((file: { path: string }) => file.path);
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/webrtc.js', 'bin/shoal-manifest.js', 'README.md', 'PROTOCOL.md']));
    expect(files.filter((path) => /testing|sim|kit|virtual-clock|flow-network|player-model/i.test(path))).toEqual([]);
  });
});
