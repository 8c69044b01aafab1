// `npm run size`: minified + gzip size of the shipped browser bundles, against their budgets.
// With --check, exits non-zero when a budget is exceeded (run by `npm test`); --rivals and --at REV: see below.
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

// --at REV[,REV...]: what changes cost. Each commit's @shoal/core and @shoal/hlsjs sources
// (git archive) and this tree's are bundled as the shipped bundle is (scripts/browser-bundle.mjs),
// internal property names shortened by this tree's rules over each commit's own sources; the
// figures leave out only the shipped file's source map comment.
const atIndex = process.argv.indexOf('--at');
if (atIndex > 0) {
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { buildBrowserBundle } = await import('./browser-bundle.mjs');
  const root = new URL('..', import.meta.url).pathname;
  const bundled = async (label, sourceRoot) => {
    const code = await buildBrowserBundle(sourceRoot);
    console.log(`at ${label}: ${(code.length / 1024).toFixed(1)} KiB min, ${(gzipSync(code, { level: 9 }).length / 1024).toFixed(2)} KiB min+gzip`);
  };
  for (const rev of (process.argv[atIndex + 1] ?? '').split(',').filter(Boolean)) {
    let archive;
    try {
      archive = execFileSync('git', ['-C', root, 'archive', rev, 'packages/core/src', 'packages/hlsjs/src', 'tracker/src'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      console.error(`size --at: no sources at ${rev} (${error.stderr?.toString().trim() || error.message})`);
      process.exit(2);
    }
    const dir = mkdtempSync(`${tmpdir()}/shoal-size-`);
    try {
      execFileSync('tar', ['-x', '-C', dir], { input: archive });
      await bundled(execFileSync('git', ['-C', root, 'rev-parse', '--short', rev]).toString().trim(), dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await bundled('the working tree', root.replace(/\/$/, ''));
}
