#!/usr/bin/env node
// Size of the script-tag bundle (dist/shoal-player.min.js), minified + gzip, split into hls.js,
// video.js (with its CSS) and Shoal (player UI + @shoal/hlsjs + @shoal/core). Each part is built
// alone with esbuild, minified, and gzipped; the parts' sum is printed beside the real bundle.
// Usage: node packages/player/scripts/size.mjs [--json]   (after `npx rollup -c`)
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';

const packageDir = new URL('..', import.meta.url);
const require = createRequire(new URL('package.json', packageDir));
const gzip = (bytes) => gzipSync(bytes, { level: 9 }).length;

async function bundle(entry, { external = [], stdin } = {}) {
  const result = await build({
    ...(stdin ? { stdin: { contents: stdin, resolveDir: packageDir.pathname, loader: 'js' } } : { entryPoints: [new URL(entry, packageDir).pathname] }),
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    write: false,
    external,
    loader: { '.css': 'text' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'error',
  });
  const bytes = result.outputFiles[0].contents;
  return { minBytes: bytes.length, gzipBytes: gzip(bytes) };
}

const hlsUmd = readFileSync(require.resolve('hls.js/dist/hls.min.js'));
const parts = {
  'hls.js': { minBytes: hlsUmd.length, gzipBytes: gzip(hlsUmd) },
  'video.js': await bundle(null, {
    stdin: "import videojs from 'video.js/core.es.js'; import css from 'video.js/dist/video-js.min.css'; globalThis.v = [videojs, css];",
  }),
  'Shoal (player UI + engine)': await bundle('src/browser.ts', { external: ['hls.js', 'video.js/*'] }),
  '  of which @shoal/hlsjs + @shoal/core': await bundle(null, { stdin: "import * as shoal from '@shoal/hlsjs'; globalThis.s = shoal;", external: ['hls.js'] }),
};
const bundleBytes = readFileSync(new URL('dist/shoal-player.min.js', packageDir));
const total = { minBytes: bundleBytes.length, gzipBytes: gzip(bundleBytes) };

if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ parts, bundle: total }, null, 2));
} else {
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`.padStart(10);
  console.log(`${'part'.padEnd(40)}${'min'.padStart(10)}${'min+gzip'.padStart(12)}`);
  for (const [name, size] of Object.entries(parts)) console.log(`${name.padEnd(40)}${kib(size.minBytes)}  ${kib(size.gzipBytes)}`);
  console.log(`${'dist/shoal-player.min.js (whole file)'.padEnd(40)}${kib(total.minBytes)}  ${kib(total.gzipBytes)}`);
}
