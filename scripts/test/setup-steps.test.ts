import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildFingerprint, buildOutputs, installFingerprint, recordStep, setupNeeds } from '../setup-steps.mjs';

// `npm run setup` skips the install and the build when nothing they depend on changed: decided
// here on a real git checkout in the temp dir, laid out like this repository.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function checkout({ git = true } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'shoal-setup-'));
  dirs.push(root);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('.gitignore', 'node_modules/\ndist/\ne2e/media/\n');
  write('package.json', '{"name":"shoal","private":true}\n');
  write('pnpm-lock.yaml', "lockfileVersion: '9.0'\n");
  write('packages/core/package.json', '{"name":"@shoal/core"}\n');
  write('packages/core/src/index.ts', 'export const a = 1;\n');
  if (git) {
    for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'start']]) {
      expect(spawnSync('git', ['-C', root, ...args]).status).toBe(0);
    }
  }
  return root;
}

/** As after `npm run setup`: installed, built, both recorded. */
function setUp(root: string): void {
  mkdirSync(join(root, 'node_modules/.bin'), { recursive: true });
  for (const path of buildOutputs) mkdirSync(join(root, path), { recursive: true });
  recordStep('install', installFingerprint(root), root);
  recordStep('build', buildFingerprint(root), root);
}

describe('npm run setup', () => {
  it('installs and builds in a fresh clone, and skips both on the next start when nothing changed', () => {
    const root = checkout();
    expect(setupNeeds(root)).toEqual({ install: 'nothing installed yet', build: 'after an install' });
    setUp(root);
    expect(setupNeeds(root)).toEqual({ install: null, build: null });
  });

  it('builds again when a source file changes or a new one appears, but not for an ignored one', () => {
    const root = checkout();
    setUp(root);
    appendFileSync(join(root, 'packages/core/src/index.ts'), 'export const b = 2;\n');
    expect(setupNeeds(root)).toEqual({ install: null, build: 'files changed since the last build' });
    recordStep('build', buildFingerprint(root), root);
    writeFileSync(join(root, 'packages/core/src/extra.ts'), 'export {};\n');
    expect(setupNeeds(root).build).toBe('files changed since the last build');
    recordStep('build', buildFingerprint(root), root);
    writeFileSync(join(root, 'packages/core/dist/index.js'), 'built\n');
    expect(setupNeeds(root)).toEqual({ install: null, build: null });
  });

  it('installs and builds again when the lockfile or a package.json changes', () => {
    const root = checkout();
    setUp(root);
    appendFileSync(join(root, 'pnpm-lock.yaml'), 'packages: {}\n');
    expect(setupNeeds(root)).toEqual({ install: 'pnpm-lock.yaml or a package.json changed since the last install', build: 'after an install' });
    setUp(root);
    writeFileSync(join(root, 'packages/core/package.json'), '{"name":"@shoal/core","version":"0.2.0"}\n');
    expect(setupNeeds(root).install).toBe('pnpm-lock.yaml or a package.json changed since the last install');
  });

  it('builds when an output is missing, whatever the record says', () => {
    const root = checkout();
    setUp(root);
    rmSync(join(root, 'e2e/dist'), { recursive: true });
    expect(setupNeeds(root)).toEqual({ install: null, build: 'e2e/dist missing' });
  });

  it('skips nothing outside a git checkout, where changes cannot be told', () => {
    const root = checkout({ git: false });
    setUp(root);
    expect(setupNeeds(root)).toEqual({ install: 'not a git checkout: changes cannot be told', build: 'after an install' });
  });
});
