// The install and the build, each skipped when nothing it depends on changed since it last ran:
// `npm run demo` and `npm test` start with `npm run setup`, and a second start should not spend
// half a minute redoing both. The record is node_modules/.shoal-setup.json, so a fresh clone (no
// node_modules) always installs and builds.
//
// What each depends on, as a SHA-256 of file contents:
// - the install: pnpm-lock.yaml, pnpm-workspace.yaml, every package.json, Node's major version;
// - the build: every file git tracks or would track (`git ls-files -co --exclude-standard`), the
//   install's fingerprint included. Without git (a source archive) nothing is skipped.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));
const stampPath = (root) => join(root, 'node_modules/.shoal-setup.json');
/** What a full build leaves: without one of these a build runs, whatever the record says. */
export const buildOutputs = ['packages/core/dist', 'packages/hlsjs/dist', 'packages/player/dist', 'tracker/dist', 'e2e/dist', 'sim/dist', 'e2e/media/master.m3u8'];

/** Files git tracks or would track, or null outside a git checkout. */
function repositoryFiles(root) {
  const listed = spawnSync('git', ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (listed.status !== 0) return null;
  return [...new Set(listed.stdout.split('\0').filter(Boolean))].sort();
}

function fingerprint(root, paths, extra) {
  const hash = createHash('sha256').update(extra);
  for (const path of paths) {
    hash.update(`\0${path}\0`);
    // A tracked file deleted from the work tree counts as a change, not an error.
    hash.update(existsSync(join(root, path)) ? readFileSync(join(root, path)) : '\0deleted');
  }
  return hash.digest('hex');
}

/** The install's fingerprint, or null when it cannot be told (no git). */
export function installFingerprint(root = repositoryRoot) {
  const files = repositoryFiles(root);
  if (!files) return null;
  const manifests = files.filter((path) => ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'].includes(basename(path)));
  return fingerprint(root, manifests, `node ${process.versions.node.split('.')[0]} ${process.platform}-${process.arch}`);
}

/** The build's fingerprint (sources and install), or null when it cannot be told (no git). */
export function buildFingerprint(root = repositoryRoot) {
  const files = repositoryFiles(root);
  const install = installFingerprint(root);
  return files && install ? fingerprint(root, files, install) : null;
}

const readStamp = (root) => {
  try {
    return JSON.parse(readFileSync(stampPath(root), 'utf8'));
  } catch {
    return {};
  }
};

/** Records that the install or the build finished for this fingerprint (in node_modules: gone with it). */
export function recordStep(step, print, root = repositoryRoot) {
  if (print === null || !existsSync(join(root, 'node_modules'))) return;
  writeFileSync(stampPath(root), `${JSON.stringify({ ...readStamp(root), [step]: print }, null, 2)}\n`);
}

/** Whether the install and the build must run, each with the reason (null: up to date). */
export function setupNeeds(root = repositoryRoot) {
  const stamp = readStamp(root);
  const install = installFingerprint(root);
  const build = buildFingerprint(root);
  const missing = buildOutputs.filter((path) => !existsSync(join(root, path)));
  const installWhy =
    install === null ? 'not a git checkout: changes cannot be told' : !existsSync(join(root, 'node_modules/.bin')) ? 'nothing installed yet' : stamp.install === undefined ? 'no install recorded yet' : stamp.install !== install ? 'pnpm-lock.yaml or a package.json changed since the last install' : null;
  const buildWhy =
    installWhy !== null ? 'after an install' : build === null ? 'not a git checkout: changes cannot be told' : missing.length ? `${missing.join(', ')} missing` : stamp.build === undefined ? 'no build recorded yet' : stamp.build !== build ? 'files changed since the last build' : null;
  return { install: installWhy, build: buildWhy };
}

const run = (args) => spawnSync(process.execPath, args, { stdio: 'inherit', cwd: repositoryRoot }).status ?? 1;

/** Runs the pinned pnpm's install unless nothing it depends on changed; exits on failure. */
export function installIfChanged(log) {
  const why = setupNeeds().install;
  if (why === null) {
    log('shoal: install skipped: pnpm-lock.yaml and the package.json files are unchanged since the last one');
    return;
  }
  const status = run([join(repositoryRoot, 'scripts/pnpm.mjs'), 'install']);
  if (status !== 0) process.exit(status);
  // After the install: it may have updated the lockfile.
  recordStep('install', installFingerprint());
}

/** `npm run setup`: the install, then the full build (scripts/build.mjs records itself), each only if needed. */
export function setupIfChanged(log) {
  const needs = setupNeeds();
  installIfChanged(log);
  if (needs.build === null) {
    log('shoal: build skipped: no file changed since the last build (`npm run build` builds anyway)');
    return;
  }
  const status = run([join(repositoryRoot, 'scripts/build.mjs')]);
  if (status !== 0) process.exit(status);
}
