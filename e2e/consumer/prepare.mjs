// The consumer check, as a user outside this repository meets Shoal: the README's own two
// commands (its folder swapped for this run's own) pack @shoal/core, hlsjs, player and tracker
// (scripts/pack.mjs: their prepack builds them) and install the tarballs with plain npm into a
// fresh project in the system's temp dir; then what each tarball holds against its `files` list,
// a page bundled with esbuild and one with Vite, the frame client measured alone, and a consumer
// file type-checked under moduleResolution bundler, node16 and node10.
// e2e/browser-test/player-consumer.spec.ts then plays the two pages in Chromium. This half needs
// the npm registry, so `npm test` runs it before the browser tests (which run without a network).
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
import { publishablePackages, readTarball, tarballProblems } from '../../scripts/pack-packages.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'shoal-consumer-'));
const packs = join(out, 'packs');
const app = join(out, 'app');
/** The frame client is all a host page of the iframe embed loads. */
const frameClientBudgetBytes = 10 * 1024;

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

// 1. The README's commands, as written but for their folder: pack into one folder, install together.
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const packLine = readme.match(/^npm run pack -- --out (\S+)/m);
const installLine = readme.match(/^(npm install (\S+)\/\*\.tgz[^#\n]*?)\s*(#.*)?$/m);
if (!packLine || !installLine || packLine[1] !== installLine[2]) {
  report(false, 'README.md has `npm run pack -- --out DIR` and `npm install DIR/*.tgz …` with one DIR', packLine?.[0] ?? installLine?.[1] ?? 'neither found');
  finish();
}
const readmeFolder = packLine[1];
const ownFolder = (line) => line.replaceAll(readmeFolder, packs);
step(`README: ${packLine[0]}`, 'sh', ['-c', ownFolder(packLine[0])], { cwd: root });

// 2. What each tarball holds.
const packed = publishablePackages.map((pkg) => ({ ...pkg, tarball: join(packs, readdirSync(packs).find((file) => file.startsWith(`${pkg.name.slice(1).replace('/', '-')}-`))) }));
for (const pkg of packed) {
  const { problems, fileCount } = tarballProblems(pkg, pkg.tarball);
  report(problems.length === 0, `${pkg.name} tarball holds what its files list says (built JS, .d.ts, README, LICENSE, CHANGELOG); versions instead of workspace: ranges`, problems.join('; ') || `${fileCount} files`);
}

// The release command of the README, dry: it publishes these four (no private package), each with
// as many files as `npm run pack` packed. --ignore-scripts: the packs just built every dist.
const publish = step('pnpm publish -r --provenance (dry run) publishes the four packages as packed', process.execPath, [
  join(root, 'scripts/pnpm.mjs'), 'publish', '-r', '--provenance', '--dry-run', '--no-git-checks', '--ignore-scripts',
]);
const published = new Map([...publish.output.matchAll(/name: (\S+)[\s\S]*?total files: (\d+)/g)].map((match) => [match[1], Number(match[2])]));
report(
  published.size === packed.length && packed.every((pkg) => published.get(pkg.name) === readTarball(pkg.tarball).files.size),
  'the dry run publishes the packages `npm run pack` packed, file for file',
  [...published].map(([name, files]) => `${name} ${files} files`).join(', '),
);

// 3. A fresh project outside the workspace: the README's install line, then the build tools the
// checks below use (Vite, and @types/node at the version this repository tests with).
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
cpSync(join(here, 'app'), app, { recursive: true });
writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'shoal-consumer', private: true, type: 'module' }, null, 2)}\n`);
step(`README: ${installLine[1]}`, 'sh', ['-c', `${ownFolder(installLine[1])} --no-audit --no-fund --loglevel=error`], { cwd: app });
step('npm install the build tools (Vite, @types/node)', 'npm', ['install', '--save-dev', 'vite@^8.0.0', `@types/node@${rootManifest.devDependencies['@types/node']}`, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
const installed = (name) => JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8'));
const nested = run('find', [join(app, 'node_modules'), '-path', '*/node_modules/@shoal/*/node_modules/@shoal', '-maxdepth', '6']).output;
report(
  packed.every((pkg) => installed(pkg.name).version === readTarball(pkg.tarball).manifest.version) && nested === '',
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
