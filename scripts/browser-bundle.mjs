// How shoal-hlsjs.browser.js is built from source, shared by rollup.config.js and by
// `npm run size -- --at`, which builds other commits' sources the same way.

/** @shoal/core from its source (not its es2020 dist), so that one minification covers both packages. */
export const CORE_SOURCE_ENTRIES = { '@shoal/core': 'packages/core/src/index.ts', '@shoal/core/webrtc': 'packages/core/src/webrtc.ts' };

/**
 * Class fields become assignments in the constructor (TypeScript's useDefineForClassFields
 * false: `this.x=v`, which the minifier renames, where defined fields lower to a helper call with
 * the name as a string: 0.5 KiB gzip). Our classes define no accessors a field could shadow, so
 * both mean the same here.
 */
export const CLASS_FIELDS_AS_ASSIGNMENTS = { compilerOptions: { useDefineForClassFields: false } };
