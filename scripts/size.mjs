// `npm run size`: minified + gzip size of the shipped browser bundles, against their budgets.
// With --check, exits non-zero when a budget is exceeded (run by `npm test`).
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const budgets = [
  {
    name: '@shoal/hlsjs + @shoal/core + dependencies (no hls.js)',
    file: 'packages/hlsjs/dist/shoal-hlsjs.browser.js',
    budgetBytes: 30 * 1024,
  },
  {
    name: '@shoal/player frame client (all an iframe host page loads)',
    file: 'packages/player/dist/shoal-frame-client.min.js',
    budgetBytes: 10 * 1024,
  },
];

let failed = false;
for (const { name, file, budgetBytes } of budgets) {
  if (!existsSync(file)) {
    console.error(`size: ${file} is missing: run \`npm run build\` first`);
    failed = true;
    continue;
  }
  const minified = readFileSync(file);
  const gzipped = gzipSync(minified, { level: 9 }).length;
  const ok = gzipped <= budgetBytes;
  failed ||= !ok;
  console.log(`${ok ? 'ok  ' : 'OVER'}  ${name}: ${(minified.length / 1024).toFixed(1)} KiB min, ${(gzipped / 1024).toFixed(1)} KiB min+gzip (budget ${(budgetBytes / 1024).toFixed(0)} KiB)`);
}
if (failed && process.argv.includes('--check')) process.exit(1);
