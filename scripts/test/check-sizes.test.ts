import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowed, checkSizes, measure } from '../check-sizes.mjs';

// The size check (`npm test`'s "source sizes" step) on small trees laid out like this repository,
// and on the repository itself.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const script = join(repoRoot, 'scripts/check-sizes.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'shoal-sizes-'));
  dirs.push(root);
  mkdirSync(join(root, 'packages'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A function `name` whose declaration spans `lines` lines. */
const functionOf = (name: string, lines: number) => `export function ${name}() {\n${'  work();\n'.repeat(lines - 2)}}\n`;

describe('check-sizes', () => {
  it('fails on a function over 100 lines, naming its file, line and size', () => {
    const root = tree({ 'tracker/src/server.ts': `// a server\n\n${functionOf('small', 100)}${functionOf('startServer', 101)}` });
    const run = spawnSync(process.execPath, [script, '--root', root], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('tracker/src/server.ts:103: function startServer is 101 lines (limit 100)');
    expect(run.stderr).not.toContain('small');
  });

  it('passes a tree within the limits', () => {
    const root = tree({ 'packages/hlsjs/src/loader.ts': functionOf('load', 100) });
    const run = spawnSync(process.execPath, [script, '--root', root], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('measures files, classes, methods and functions assigned to a name, not callbacks passed as arguments', () => {
    const body = (lines: number) => '  step();\n'.repeat(lines);
    const text = [
      'class Session {',
      `  receive() {\n${body(101)}  }`,
      `  onClose = () => {\n${body(101)}  };`,
      '}',
      `const build = async () => {\n${body(101)}};`,
      `handlers.stop = function () {\n${body(101)}};`,
      `test('plays', async () => {\n${body(150)}});`,
    ].join('\n');
    const over = measure('e2e/src/x.ts', text).filter((item) => item.lines > 100).map((item) => `${item.kind} ${item.name}`);
    expect(over).toEqual(['file ', 'class Session', 'function Session.receive', 'function Session.onClose', 'function build', 'function handlers.stop']);
  });

  it('lets an allowlisted offender stay at its size, and fails when it grows or is gone', () => {
    const root = tree({ 'packages/core/src/plan.ts': functionOf('plan', 120) });
    const entry = { file: 'packages/core/src/plan.ts', kind: 'function', name: 'plan' };
    expect(checkSizes(root, [{ ...entry, lines: 120 }])).toEqual({
      failures: [],
      tolerated: ['packages/core/src/plan.ts:1: function plan is 120 lines (limit 100), allowed up to 120 for now'],
    });
    expect(checkSizes(root, [{ ...entry, lines: 110 }]).failures).toEqual([
      'packages/core/src/plan.ts:1: function plan is 120 lines (limit 100), grown from the 110 it is allowed: split it by job',
    ]);
    expect(checkSizes(root, [{ ...entry, lines: 120 }, { file: 'packages/core/src/gone.ts', kind: 'file', name: '', lines: 450 }]).failures).toEqual([
      'packages/core/src/gone.ts: file is no longer over its limit (or gone): remove it from the allowlist in scripts/check-sizes.mjs',
    ]);
  });

  it('passes on this repository, with only the allowlisted offenders tolerated', () => {
    const { failures, tolerated } = checkSizes(repoRoot);
    expect(failures).toEqual([]);
    expect(tolerated).toHaveLength(allowed.length);
  });
});
