import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `npm run simulate` and `npm run swarm` as a fresh clone meets them: the CLIs (sim/bin, e2e/bin
// and the helper they share) copied into a folder of their own, without the builds (sim/dist,
// e2e/dist) or the install (node_modules) beside them.

const repoDir = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function clone({ withBuild }: { withBuild: boolean }): string {
  const root = mkdtempSync(join(tmpdir(), 'shoal-unbuilt-'));
  dirs.push(root);
  for (const path of ['e2e/bin', 'sim/bin', 'scripts/load-built.mjs']) cpSync(join(repoDir, path), join(root, path), { recursive: true });
  if (withBuild) cpSync(join(repoDir, 'e2e/dist'), join(root, 'e2e/dist'), { recursive: true });
  return root;
}

const run = (root: string, cli: string, args: string[]) => {
  const result = spawnSync(process.execPath, [join(root, cli), ...args], { encoding: 'utf8', cwd: root });
  return { status: result.status, stderr: result.stderr.trim(), stdout: result.stdout };
};

describe('the e2e CLIs before `npm run setup`', () => {
  it('say in one line to run `npm run setup`, without a stack, when nothing is built', () => {
    const root = clone({ withBuild: false });
    for (const [cli, args] of [['sim/bin/simulate.js', ['--peers', '2']], ['e2e/bin/swarm.js', ['--peers', '2']]] as const) {
      const result = run(root, cli, [...args]);
      expect(result.status, cli).toBe(1);
      expect(result.stderr.split('\n'), cli).toHaveLength(1);
      expect(result.stderr, cli).toMatch(/^shoal (simulate|swarm): not installed and built yet \(.+ is missing\): run `npm run setup` first/);
      expect(result.stderr, cli).not.toContain('ERR_MODULE_NOT_FOUND');
    }
  });

  it('name the missing package when the build is there but not the install', () => {
    if (!existsSync(join(repoDir, 'e2e/dist/swarm/cli-options.js'))) throw new Error('e2e is not built: run `npm run build`');
    const root = clone({ withBuild: true });
    const result = run(root, 'e2e/bin/swarm.js', ['--peers', '2']);
    expect(result.status).toBe(1);
    // A package, by name (playwright-core today), not a file of the build.
    expect(result.stderr).toMatch(/^shoal swarm: not installed and built yet \((@[a-z-]+\/)?[a-z][a-z.-]+ is missing\): run `npm run setup` first \(installs and builds, skipping what is up to date\)$/);
  });

  it('still print the swarm help before any build', () => {
    const result = run(clone({ withBuild: false }), 'e2e/bin/swarm.js', ['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('usage: npm run swarm -- [options]');
  });
});
