#!/usr/bin/env node
// The consumer check, as a user outside this repository meets Shoal: pack @shoal/core, hlsjs,
// player and tracker (their prepack builds them), check what each tarball holds, install the
// tarballs with plain npm into a fresh project in the system's temp dir, bundle one page with
// esbuild and one with Vite, measure the frame client alone, and type-check a consumer file under
// moduleResolution bundler, node16 and node10. e2e/browser-test/player-consumer.spec.ts then plays the two
// pages in Chromium. This half needs the npm registry, so `npm test` runs it before the browser
// tests (which run without a network).
//
//   node e2e/consumer/prepare.mjs [out dir]   (default: a new dir in the system's temp dir)
//
// Prints one line per check and the out dir; exits 1 if any check failed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'shoal-consumer-'));
const packs = join(out, 'packs');
const app = join(out, 'app');
/** The frame client is all a host page of the iframe embed loads. */
const frameClientBudgetBytes = 10 * 1024;
const packages = [
  { dir: 'packages/core', name: '@shoal/core' },
  { dir: 'packages/hlsjs', name: '@shoal/hlsjs' },
  { dir: 'packages/player', name: '@shoal/player' },
  { dir: 'tracker', name: '@shoal/tracker' },
];

let failures = 0;
const report = (ok, what, detail = '') => {
  if (!ok) failures += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'}  ${what}${detail ? `: ${detail}` : ''}`);
};
const run = (command, args, options = {}) => {
  const started = Date.now();
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  return { ok: result.status === 0, output, seconds: ((Date.now() - started) / 1000).toFixed(1) };
};
const step = (what, command, args, options) => {
  const result = run(command, args, options);
  report(result.ok, what, result.ok ? `${result.seconds} s` : `\n${result.output.split('\n').slice(-40).join('\n')}`);
  if (!result.ok) finish();
  return result;
};
function finish() {
  console.log(`consumer project: ${out}`);
  process.exit(failures === 0 ? 0 : 1);
}

// 1. Pack, as `pnpm publish` would (it turns workspace:^ into versions).
mkdirSync(packs, { recursive: true });
for (const pkg of packages) {
  step(`pack ${pkg.name}`, process.execPath, [join(root, 'scripts/pnpm.mjs'), '-C', pkg.dir, 'pack', '--pack-destination', packs]);
}
const tarballs = Object.fromEntries(
  packages.map((pkg) => {
    const prefix = `${pkg.name.replace('@', '').replace('/', '-')}-`;
    return [pkg.name, join(packs, readdirSync(packs).find((file) => file.startsWith(prefix) && file.endsWith('.tgz')))];
  }),
);

// 2. What each tarball holds.
for (const pkg of packages) {
  const tarball = tarballs[pkg.name];
  const files = new Set(run('tar', ['-tzf', tarball]).output.split('\n').map((path) => path.replace(/^package\//, '')));
  const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json']).output);
  const missing = ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json'].filter((file) => !files.has(file));
  const targets = [];
  const collect = (value) => {
    if (typeof value === 'string') targets.push(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect([manifest.exports, manifest.main, manifest.types, manifest.bin, manifest.typesVersions]);
  missing.push(...targets.filter((path) => path !== 'package.json' && !files.has(path)));
  const jsEntries = targets.filter((path) => /^dist\/[^/]+\.js$/.test(path) && !path.endsWith('.min.js') && !path.endsWith('.browser.js'));
  missing.push(...jsEntries.map((path) => path.replace(/\.js$/, '.d.ts')).filter((path) => !files.has(path)));
  const workspaceRanges = Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies }).filter(([, range]) => String(range).startsWith('workspace:'));
  const absentFields = ['version', 'license', 'repository', 'engines', 'publishConfig'].filter((field) => manifest[field] === undefined);
  const strays = [...files].filter((path) => /(^|\/)(src|test|tsc)\/|\.tsbuildinfo$/.test(path));
  report(
    missing.length + workspaceRanges.length + absentFields.length + strays.length === 0,
    `${pkg.name} tarball holds built JS, .d.ts, README, LICENSE, CHANGELOG; versions instead of workspace: ranges`,
    [
      missing.length ? `missing ${missing.join(', ')}` : '',
      workspaceRanges.length ? `unresolved ${workspaceRanges.map(([name, range]) => `${name}@${range}`).join(', ')}` : '',
      absentFields.length ? `package.json lacks ${absentFields.join(', ')}` : '',
      strays.length ? `should not ship ${strays.slice(0, 5).join(', ')}` : '',
    ].filter(Boolean).join('; ') || `${files.size} files`,
  );
}

// 3. A fresh project outside the workspace, installed with plain npm from the tarballs; hls.js,
// video.js, Vite and @types/node from the registry (the versions this repository tests with).
const playerManifest = JSON.parse(readFileSync(join(root, 'packages/player/package.json'), 'utf8'));
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
cpSync(join(here, 'app'), app, { recursive: true });
writeFileSync(
  join(app, 'package.json'),
  `${JSON.stringify(
    {
      name: 'shoal-consumer',
      private: true,
      type: 'module',
      dependencies: {
        ...Object.fromEntries(packages.map((pkg) => [pkg.name, `file:${tarballs[pkg.name]}`])),
        'hls.js': playerManifest.devDependencies['hls.js'],
        'video.js': playerManifest.devDependencies['video.js'],
      },
      devDependencies: { vite: '^8.0.0', '@types/node': rootManifest.devDependencies['@types/node'] },
    },
    null,
    2,
  )}\n`,
);
step('npm install the tarballs into a fresh project', 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
const installed = (name) => JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8'));
const nested = run('find', [join(app, 'node_modules'), '-path', '*/node_modules/@shoal/*/node_modules/@shoal', '-maxdepth', '6']).output;
report(
  packages.every((pkg) => installed(pkg.name).version === JSON.parse(run('tar', ['-xzOf', tarballs[pkg.name], 'package/package.json']).output).version) && nested === '',
  'npm resolved @shoal/* from the tarballs alone (one copy each, none from the registry)',
  nested,
);

// 4. Bundles. The page's Content-Security-Policy is the strict one the player README documents for bundled apps.
const csp = readFileSync(join(here, 'bundled-app.csp'), 'utf8').trim().replaceAll(/\s*\n\s*/g, ' ');
const esbuildDir = join(app, 'public/esbuild');
mkdirSync(esbuildDir, { recursive: true });
try {
  const started = Date.now();
  await build({
    entryPoints: [join(app, 'src/esbuild-page.ts')],
    bundle: true,
    format: 'esm',
    minify: true,
    target: 'es2022',
    outdir: esbuildDir,
    entryNames: 'bundle',
    absWorkingDir: app,
    logLevel: 'error',
  });
  writeFileSync(join(esbuildDir, 'index.html'), readFileSync(join(app, 'esbuild.html'), 'utf8').replace('__CSP__', csp));
  report(existsSync(join(esbuildDir, 'bundle.css')), 'esbuild bundles the player page (JS + the CSS it imports)', `${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  report(false, 'esbuild bundles the player page', error.message);
}
const viteHtml = join(app, 'vite-page/index.html');
writeFileSync(viteHtml, readFileSync(viteHtml, 'utf8').replace('__CSP__', csp));
step('Vite bundles the plugin page (own video.js + @shoal/player/videojs)', process.execPath, [
  join(app, 'node_modules/vite/bin/vite.js'), 'build', 'vite-page', '--base', './', '--outDir', '../public/vite', '--emptyOutDir', '--logLevel', 'warn',
], { cwd: app });
const videojsVersion = installed('video.js').version;
const viteJs = readdirSync(join(app, 'public/vite/assets')).filter((file) => file.endsWith('.js')).map((file) => readFileSync(join(app, 'public/vite/assets', file), 'utf8')).join('\n');
// Each copy of video.js carries its version as a string literal (minifiers may change its quotes).
const videojsCopies = viteJs.match(new RegExp(`["'\`]${videojsVersion.replaceAll('.', '\\.')}["'\`]`, 'g'))?.length ?? 0;
report(videojsCopies === 1, 'the plugin page bundles one video.js (the app’s own)', `${videojsCopies} copies of video.js ${videojsVersion}`);

// 5. The frame client alone, from its subpath and from the main entry (sideEffects lets the bundler drop the player).
for (const entry of ['src/frame-client-only.ts', 'src/frame-client-from-main.ts']) {
  const result = await build({ entryPoints: [join(app, entry)], bundle: true, format: 'esm', minify: true, target: 'es2022', write: false, absWorkingDir: app, logLevel: 'error' });
  const gzipBytes = gzipSync(result.outputFiles[0].contents, { level: 9 }).length;
  report(gzipBytes < frameClientBudgetBytes, `${entry.replace('src/', '')}: ShoalFrameClient alone stays under ${frameClientBudgetBytes / 1024} KiB gzip`, `${(gzipBytes / 1024).toFixed(1)} KiB min+gzip`);
}

// 6. Types, as a consumer's TypeScript resolves them.
const tsc = join(root, 'node_modules/typescript/bin/tsc');
step('tsc: consumer files type-check under moduleResolution bundler', process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], { cwd: app });
step('tsc: consumer file type-checks under moduleResolution node16', process.execPath, [tsc, '-p', 'tsconfig.node16.json'], { cwd: app });
step('tsc: consumer file type-checks under moduleResolution node (node10, no `exports`)', process.execPath, [tsc, '-p', 'tsconfig.node10.json'], { cwd: app });

writeFileSync(
  join(out, 'consumer.json'),
  `${JSON.stringify({ pages: join(app, 'public'), trackerCli: join(app, 'node_modules/@shoal/tracker/bin/shoal-tracker.js') }, null, 2)}\n`,
);
finish();
