// How shoal-hlsjs.browser.js is built from source: by scripts/build.mjs, after rollup has built the
// packages' types, and alike by `npm run size -- --at`, which builds other commits' sources.
import { build } from 'esbuild';
import { internalPropertyPattern } from './internal-properties.mjs';

/** @shoal/core from its source (not its es2020 dist), so that one minification covers both packages. */
const CORE_SOURCE_ENTRIES = { '@shoal/core': 'packages/core/src/index.ts', '@shoal/core/webrtc': 'packages/core/src/webrtc.ts' };

/**
 * Class fields become assignments in the constructor (TypeScript's useDefineForClassFields
 * false: `this.x=v`, which the minifier renames, where defined fields lower to a helper call with
 * the name as a string: 0.5 KiB gzip). Our classes define no accessors a field could shadow, so
 * both mean the same here.
 */
const CLASS_FIELDS_AS_ASSIGNMENTS = { compilerOptions: { useDefineForClassFields: false } };

/**
 * @shoal/hlsjs with @shoal/core and their dependencies, hls.js left out: one minified ES module for
 * pages without a bundler, the internal property names shortened (scripts/internal-properties.mjs).
 * One esbuild bundle of the sources under `sourceRoot`: the minifier sees all the code at once, so
 * each internal property gets one short name everywhere and `const` may become `let`. With
 * `outfile`, writes it and its source map there; else returns the code.
 */
export async function buildBrowserBundle(sourceRoot, outfile) {
  const result = await build({
    entryPoints: [`${sourceRoot}/packages/hlsjs/src/index.ts`],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    external: ['hls.js'],
    define: { 'process.env.NODE_ENV': '"production"' },
    mangleProps: internalPropertyPattern(sourceRoot),
    tsconfigRaw: CLASS_FIELDS_AS_ASSIGNMENTS,
    plugins: [{ name: 'core-source', setup: (b) => b.onResolve({ filter: /^@shoal\/core(\/webrtc)?$/ }, ({ path }) => ({ path: `${sourceRoot}/${CORE_SOURCE_ENTRIES[path]}` })) }],
    ...(outfile ? { outfile, sourcemap: 'linked' } : { outfile: 'shoal-hlsjs.browser.js' }),
    write: outfile !== undefined,
    logLevel: 'error',
  });
  return outfile ? undefined : result.outputFiles[0].contents;
}
