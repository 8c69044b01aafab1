// Bundles main.js with esbuild, as an app's build would: `node examples/bundler/build.mjs`,
// then open /bundler/ on the demo server. hls.js comes from npm, Shoal from the workspace.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const outfile = new URL('dist/bundle.js', here).pathname;
await build({
  entryPoints: [new URL('main.js', here).pathname],
  bundle: true,
  format: 'esm',
  minify: true,
  sourcemap: true,
  target: 'es2022',
  outfile,
  logLevel: 'warning',
});
const bytes = readFileSync(outfile);
console.log(`examples/bundler/dist/bundle.js: ${(bytes.length / 1024).toFixed(0)} KiB minified, ${(gzipSync(bytes).length / 1024).toFixed(0)} KiB gzip`);
