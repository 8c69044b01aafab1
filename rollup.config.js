// Builds the browser packages: ESM + .d.ts for bundlers (dependencies stay external), and one
// self-contained minified ESM file per package for pages without a build step (hls.js stays
// external there: pages load it once, beside Shoal). Node packages (tracker, e2e) build with tsc.
import { existsSync } from 'node:fs';
import commonjs from '@rollup/plugin-commonjs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import dts from 'rollup-plugin-dts';
import esbuild from 'rollup-plugin-esbuild';

const packages = [
  { dir: 'packages/core', entries: { index: 'src/index.ts', webrtc: 'src/webrtc.ts' } },
  { dir: 'packages/hlsjs', entries: { index: 'src/index.ts' }, browserBundle: 'shoal-hlsjs.browser.js' },
  { dir: 'packages/player', entries: { index: 'src/index.ts' } },
];

const isExternal = (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');
const onwarn = (warning, warn) => {
  if (warning.code === 'CIRCULAR_DEPENDENCY') throw new Error(`import cycle: ${warning.message}`);
  warn(warning);
};
const input = (pkg) => Object.fromEntries(Object.entries(pkg.entries).map(([name, path]) => [name, `${pkg.dir}/${path}`]));

const configs = [];
for (const pkg of packages) {
  // A package whose source has not landed yet is simply not built.
  if (!Object.values(pkg.entries).every((path) => existsSync(`${pkg.dir}/${path}`))) continue;
  configs.push({
    input: input(pkg),
    external: isExternal,
    onwarn,
    plugins: [esbuild({ target: 'es2020', tsconfig: `${pkg.dir}/tsconfig.json` })],
    output: { dir: `${pkg.dir}/dist`, format: 'es', sourcemap: true, entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
  });
  configs.push({
    input: input(pkg),
    external: isExternal,
    plugins: [dts({ tsconfig: `${pkg.dir}/tsconfig.json` })],
    output: { dir: `${pkg.dir}/dist`, format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: '[name]-[hash].d.ts' },
  });
  if (pkg.browserBundle) {
    configs.push({
      input: `${pkg.dir}/${pkg.entries.index}`,
      external: ['hls.js'],
      onwarn,
      plugins: [
        nodeResolve({ browser: true, preferBuiltins: false, extensions: ['.ts', '.js', '.mjs'] }),
        commonjs(),
        esbuild({ target: 'es2020', minify: true, tsconfig: `${pkg.dir}/tsconfig.json`, define: { 'process.env.NODE_ENV': '"production"' } }),
      ],
      output: { file: `${pkg.dir}/dist/${pkg.browserBundle}`, format: 'es', sourcemap: true },
    });
  }
}

export default configs;
