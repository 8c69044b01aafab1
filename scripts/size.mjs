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

// --rivals: p2p-media-loader-hlsjs 2.3.1 with its core, bundled the same way (esbuild, minified
// ESM for the browser, hls.js left out), for the comparison in BENCHMARKS.md.
if (process.argv.includes('--rivals')) {
  const { build } = await import('esbuild');
  const result = await build({
    stdin: { contents: "export { HlsJsP2PEngine } from 'p2p-media-loader-hlsjs';", resolveDir: new URL('../e2e', import.meta.url).pathname },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['hls.js'],
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  const gzipped = gzipSync(code, { level: 9 }).length;
  console.log(`rival  p2p-media-loader-hlsjs + core 2.3.1 (esbuild, no hls.js): ${(code.length / 1024).toFixed(1)} KiB min, ${(gzipped / 1024).toFixed(1)} KiB min+gzip`);
}
