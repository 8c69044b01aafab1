// Builds everything: browser packages with rollup (and @shoal/hlsjs's one-file browser bundle with
// esbuild), Node packages (tracker, e2e, sim) with tsc, and the sample stream (ffmpeg) when it is missing.
//
// `node scripts/build.mjs <package dir>` builds one publishable package from scratch, as its
// `prepack` script does before `npm pack` / `pnpm publish`: a clean dist (after building the
// workspace packages it depends on, where theirs is missing) and the repository's LICENSE beside it.
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildFingerprint, recordStep } from './setup-steps.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (command, args, env = {}) => {
  const bin = command === 'node' ? process.execPath : `${root}node_modules/.bin/${command}`;
  const result = spawnSync(bin, args, { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } });
  if (result.status !== 0) {
    console.error(`shoal: build step failed: ${command} ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
};

/** @shoal/hlsjs's shoal-hlsjs.browser.js (scripts/browser-bundle.mjs): after rollup, which builds the types it reads. */
async function hlsjsBrowserBundle() {
  try {
    const { buildBrowserBundle } = await import('./browser-bundle.mjs');
    await buildBrowserBundle(root.replace(/\/$/, ''), `${root}packages/hlsjs/dist/shoal-hlsjs.browser.js`);
  } catch (error) {
    console.error(`shoal: build step failed: packages/hlsjs/dist/shoal-hlsjs.browser.js (${error.message})`);
    process.exit(1);
  }
}

/** Publishable packages, each after the workspace packages it depends on. */
const publishable = {
  'packages/core': { needs: [], build: () => run('rollup', ['-c', 'rollup.config.js', '--silent'], { SHOAL_BUILD_PACKAGES: 'packages/core' }) },
  'packages/hlsjs': {
    needs: ['packages/core'],
    build: async () => {
      run('rollup', ['-c', 'rollup.config.js', '--silent'], { SHOAL_BUILD_PACKAGES: 'packages/hlsjs' });
      await hlsjsBrowserBundle();
    },
  },
  'packages/player': { needs: ['packages/core', 'packages/hlsjs'], build: () => run('rollup', ['-c', 'rollup.config.js', '--silent'], { SHOAL_BUILD_PACKAGES: 'packages/player' }) },
  tracker: { needs: [], build: () => run('tsc', ['-b', 'tracker']) },
};

const target = process.argv[2]?.replace(/\/+$/, '');
if (target === undefined) {
  // Taken before building: a file changed meanwhile makes the next `npm run setup` build again.
  const sources = buildFingerprint();
  // Rollup writes over what it builds and leaves the rest: a module that moved away (core's testing
  // kit went to @shoal/sim) would linger in dist and be packed.
  for (const dir of Object.keys(publishable)) if (dir !== 'tracker') rmSync(`${root}${dir}/dist`, { recursive: true, force: true });
  run('rollup', ['-c', 'rollup.config.js', '--silent']);
  await hlsjsBrowserBundle();
  run('tsc', ['-b', 'tracker', 'e2e', 'sim']);
  run('node', ['e2e/bin/make-sample-media.js']);
  recordStep('build', sources);
} else {
  const pkg = publishable[target];
  if (!pkg) {
    console.error(`shoal: ${target} is not a publishable package (one of ${Object.keys(publishable).join(', ')})`);
    process.exit(2);
  }
  for (const dependency of pkg.needs) {
    if (!existsSync(`${root}${dependency}/dist/index.d.ts`)) await publishable[dependency].build();
  }
  rmSync(`${root}${target}/dist`, { recursive: true, force: true });
  rmSync(`${root}${target}/tsconfig.tsbuildinfo`, { force: true });
  await pkg.build();
  copyFileSync(`${root}LICENSE`, `${root}${target}/LICENSE`);
}
