// `npm test` after setup: the source size limits, the bundle budgets, the tests' types, every
// unit/integration test (vitest), then the browser tests (Playwright driving real Chromium; Firefox
// and WebKitGTK launched from inside its tests) in a loopback-only network namespace. Fails on any failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertChromium } from '../e2e/dist/chromium.js';
import { assertFirefox } from '../e2e/dist/firefox.js';
import { assertFfmpeg } from '../e2e/dist/sample-media.js';
import { assertWebKit } from '../e2e/dist/webkit.js';

try {
  assertFfmpeg();
  assertChromium();
  assertFirefox();
  assertWebKit();
} catch (error) {
  console.error(`shoal: ${error.message}`);
  process.exit(1);
}

const root = new URL('..', import.meta.url);
const run = (label, command, args) => {
  console.log(`\n== ${label}`);
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root });
  return result.status === 0;
};
// The consumer check packs and npm-installs the packages (it needs the registry), so it runs
// here; the browser tests then play the pages it built (e2e/browser-test/player-consumer.spec.ts).
const consumerDir = mkdtempSync(join(tmpdir(), 'shoal-consumer-'));
// `npm test` starts with `npm run setup`: a second one, with nothing changed, must skip both steps.
console.log('\n== setup again, nothing changed');
const again = spawnSync(process.execPath, ['scripts/setup.mjs'], { cwd: root, encoding: 'utf8' });
console.log(`${again.stdout}${again.stderr}`.trim());
const results = [
  ['setup again skips the install and the build', again.status === 0 && again.stdout.includes('install skipped') && again.stdout.includes('build skipped')],
  ['source sizes (files, classes, functions)', run('source sizes (files, classes, functions)', process.execPath, ['scripts/check-sizes.mjs'])],
  ['bundle size budgets', run('bundle size budgets', process.execPath, ['scripts/size.mjs', '--check'])],
  ['types of the tests (tsc)', run('types of the tests (tsc)', 'node_modules/.bin/tsc', ['-p', 'tsconfig.tests.json'])],
  ['unit and integration (vitest)', run('unit and integration (vitest)', 'node_modules/.bin/vitest', ['run'])],
  ['consumer packages (pack, npm install, esbuild, Vite, tsc)', run('consumer packages (pack, npm install, esbuild, Vite, tsc)', process.execPath, ['e2e/consumer/prepare.mjs', consumerDir])],
];
process.env.SHOAL_CONSUMER_DIR = consumerDir;
results.push(['browser (Chromium, Firefox, WebKitGTK)', run('browser (Chromium, Firefox, WebKitGTK)', process.execPath, ['scripts/netns.mjs', 'playwright', 'test'])]);
rmSync(consumerDir, { recursive: true, force: true });
console.log('\n== summary');
for (const [label, ok] of results) console.log(`${ok ? 'ok  ' : 'FAIL'}  ${label}`);
process.exit(results.every(([, ok]) => ok) ? 0 : 1);
