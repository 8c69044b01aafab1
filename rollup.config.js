// Builds the browser packages: ESM + .d.ts for bundlers (dependencies stay external). The one
// self-contained minified ESM file for pages without a build step, @shoal/hlsjs's
// shoal-hlsjs.browser.js, is esbuild's (scripts/browser-bundle.mjs, run by scripts/build.mjs after
// this). Node packages (tracker, e2e) build with tsc.
import { existsSync, readFileSync } from 'node:fs';
import commonjs from '@rollup/plugin-commonjs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import dts from 'rollup-plugin-dts';
import esbuild from 'rollup-plugin-esbuild';

const packages = [
  { dir: 'packages/core', entries: { index: 'src/index.ts', webrtc: 'src/webrtc.ts' } },
  { dir: 'packages/hlsjs', entries: { index: 'src/index.ts' } },
  {
    dir: 'packages/player',
    entries: { index: 'src/index.ts', 'frame-client': 'src/frame-client-entry.ts', videojs: 'src/videojs-entry.ts' },
    // The CSS is a file of its own for bundlers (`@shoal/player/styles.css`), never an import.
    plugins: () => [emitFile('styles.css', 'packages/player/src/styles.css')],
    // One file per module, so that a bundler honouring `sideEffects: false` leaves out what an app
    // does not import (the frame client alone must not bring video.js).
    preserveModules: true,
  },
];

// SHOAL_BUILD_PACKAGES=packages/core,packages/hlsjs builds only those (what `npm pack` of one package needs).
const only = process.env.SHOAL_BUILD_PACKAGES?.split(',');
const selected = (dir) => !only || only.includes(dir);

const isExternal = (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');
const onwarn = (warning, warn) => {
  if (warning.code === 'CIRCULAR_DEPENDENCY') throw new Error(`import cycle: ${warning.message}`);
  warn(warning);
};
const input = (pkg) => Object.fromEntries(Object.entries(pkg.entries).map(([name, path]) => [name, `${pkg.dir}/${path}`]));

const configs = [];
for (const pkg of packages) {
  // A package whose source has not landed yet is simply not built.
  if (!selected(pkg.dir) || !Object.values(pkg.entries).every((path) => existsSync(`${pkg.dir}/${path}`))) continue;
  configs.push({
    input: input(pkg),
    external: isExternal,
    onwarn,
    plugins: [...(pkg.plugins?.() ?? []), esbuild({ target: 'es2020', tsconfig: `${pkg.dir}/tsconfig.json` })],
    output: {
      dir: `${pkg.dir}/dist`,
      format: 'es',
      sourcemap: true,
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
      ...(pkg.preserveModules ? { preserveModules: true, preserveModulesRoot: `${pkg.dir}/src` } : {}),
    },
  });
  configs.push({
    input: input(pkg),
    external: isExternal,
    plugins: [dts({ tsconfig: `${pkg.dir}/tsconfig.json` })],
    output: { dir: `${pkg.dir}/dist`, format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: '[name]-[hash].d.ts' },
  });
}

// packages/player: the script-tag bundle (video.js + hls.js + Shoal + CSS in one file, global
// `ShoalPlayer`), the video.js plugin for pages that load video.js themselves (hls.js + Shoal,
// global `ShoalVideojs`), the host page's frame client (global `ShoalFrameClient`), and embed.html.
function cssAsText() {
  return {
    name: 'shoal-css-as-text',
    load(id) {
      return id.endsWith('.css') ? `export default ${JSON.stringify(readFileSync(id, 'utf8'))};` : null;
    },
  };
}
// hls.js's UMD build carries its transmuxing worker inline (it re-runs its own function source
// in a Blob worker); its ESM build would need a separate worker file beside the bundle.
function hlsUmd() {
  const virtualId = '\0shoal:hls.js-umd';
  return {
    name: 'shoal-hls-umd',
    resolveId(id) {
      return id === 'hls.js' ? virtualId : null;
    },
    load(id) {
      if (id !== virtualId) return null;
      const umd = readFileSync(new URL('./packages/player/node_modules/hls.js/dist/hls.min.js', import.meta.url), 'utf8').replace(/\/\/# sourceMappingURL=.*$/m, '');
      return `var module = { exports: {} }, exports = module.exports;\n${umd}\nexport default module.exports;`;
    },
  };
}
function emitFile(fileName, source) {
  return { name: `shoal-emit-${fileName}`, generateBundle() { this.emitFile({ type: 'asset', fileName, source: readFileSync(source, 'utf8') }); } };
}
if (selected('packages/player') && existsSync('packages/player/src/browser.ts')) {
  const browserPlugins = (extra = []) => [
    ...extra,
    cssAsText(),
    nodeResolve({ browser: true, preferBuiltins: false, extensions: ['.ts', '.js', '.mjs'] }),
    commonjs(),
    esbuild({ target: 'es2020', minify: true, tsconfig: 'packages/player/tsconfig.json', define: { 'process.env.NODE_ENV': '"production"' } }),
  ];
  configs.push({
    input: 'packages/player/src/browser.ts',
    onwarn,
    plugins: browserPlugins([hlsUmd(), emitFile('embed.html', 'packages/player/src/embed.html')]),
    output: { file: 'packages/player/dist/shoal-player.min.js', format: 'iife', name: 'ShoalPlayer', sourcemap: true },
  });
  configs.push({
    input: 'packages/player/src/videojs-global.ts',
    onwarn,
    plugins: browserPlugins([hlsUmd()]),
    output: { file: 'packages/player/dist/shoal-videojs.min.js', format: 'iife', name: 'ShoalVideojs', sourcemap: true },
  });
  configs.push({
    input: 'packages/player/src/frame-client-global.ts',
    onwarn,
    plugins: browserPlugins(),
    output: { file: 'packages/player/dist/shoal-frame-client.min.js', format: 'iife', name: 'ShoalFrameClient', exports: 'default', sourcemap: true },
  });
}

export default configs;
