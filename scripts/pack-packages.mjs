// Packing the four publishable packages the way `pnpm publish -r` does (pnpm pack: each package's
// prepack builds it, workspace:^ ranges become versions), and checking what each tarball holds.
// One copy of this logic for `npm run pack` (scripts/pack.mjs) and the consumer check
// (e2e/consumer/prepare.mjs), so what the tests check is what a user packs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The packages published to npm, each after the ones it depends on. */
export const publishablePackages = [
  { dir: 'packages/core', name: '@shoal/core' },
  { dir: 'packages/hlsjs', name: '@shoal/hlsjs' },
  { dir: 'packages/player', name: '@shoal/player' },
  { dir: 'tracker', name: '@shoal/tracker' },
];

/** `@shoal/core` → `shoal-core-`: how npm and pnpm name a scoped package's tarball. */
const tarballPrefix = (name) => `${name.replace('@', '').replace('/', '-')}-`;

/**
 * Packs every publishable package into `outDir` (made if missing; earlier Shoal tarballs there
 * removed first, so that `npm install DIR/*.tgz` never meets two versions of one package).
 * `onPacked(pkg, result)` hears of each; returns the packages with their tarballs ({ dir, name,
 * tarball }), or null if a pack failed.
 */
export function packPackages(outDir, onPacked = () => {}) {
  mkdirSync(outDir, { recursive: true });
  for (const file of readdirSync(outDir)) {
    if (publishablePackages.some((pkg) => file.startsWith(tarballPrefix(pkg.name)) && file.endsWith('.tgz'))) rmSync(join(outDir, file));
  }
  for (const pkg of publishablePackages) {
    const started = Date.now();
    const result = spawnSync(process.execPath, [join(root, 'scripts/pnpm.mjs'), '-C', pkg.dir, 'pack', '--pack-destination', outDir], { encoding: 'utf8' });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    const ok = result.status === 0;
    onPacked(pkg, { ok, output, seconds: (Date.now() - started) / 1000 });
    if (!ok) return null;
  }
  const packed = readdirSync(outDir);
  return publishablePackages.map((pkg) => ({ ...pkg, tarball: join(outDir, packed.find((file) => file.startsWith(tarballPrefix(pkg.name)) && file.endsWith('.tgz'))) }));
}

const tarText = (args) => spawnSync('tar', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout ?? '';

/** The paths in a tarball (without npm's `package/` prefix) and its package.json. */
export function readTarball(tarball) {
  const files = tarText(['-tzf', tarball]).split('\n').map((path) => path.replace(/^package\//, '')).filter((path) => path && !path.endsWith('/'));
  return { files: new Set(files), manifest: JSON.parse(tarText(['-xzOf', tarball, 'package/package.json'])) };
}

/** A `files` entry as a test of a path: the path itself, anything under it, `*` within one folder. */
const filesPattern = (entry) => {
  const body = entry.replace(/^\.\//, '').replace(/\/$/, '').replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('**', '\u0000').replaceAll('*', '[^/]*').replaceAll('\u0000', '.*');
  return new RegExp(`^${body}(/.*)?$`);
};
/** npm packs these whatever `files` says. */
const alwaysPacked = /^(package\.json|(README|LICENSE|LICENCE|CHANGELOG)(\.[^/]*)?)$/i;

/**
 * What is wrong with a package's tarball, as a list of sentences (empty: nothing). It must hold
 * exactly what its `files` list says (each entry present, each `!` entry absent, nothing else but
 * what npm always packs), every file its exports, main, types and bin point to with the .d.ts
 * beside each JS entry, README, LICENSE and CHANGELOG; and its package.json must carry versions
 * where the workspace's has workspace: ranges (the versions of those packages), and the fields a
 * registry page needs.
 */
export function tarballProblems(pkg, tarball) {
  const { files, manifest } = readTarball(tarball);
  const source = JSON.parse(readFileSync(join(root, pkg.dir, 'package.json'), 'utf8'));
  const problems = [];
  const include = source.files.filter((entry) => !entry.startsWith('!'));
  const exclude = source.files.filter((entry) => entry.startsWith('!')).map((entry) => entry.slice(1));
  const listed = [...files];
  const absentEntries = include.filter((entry) => !listed.some((path) => filesPattern(entry).test(path)));
  if (absentEntries.length) problems.push(`holds nothing for its files entries ${absentEntries.join(', ')}`);
  const excluded = listed.filter((path) => exclude.some((entry) => filesPattern(entry).test(path)));
  if (excluded.length) problems.push(`holds what its files list excludes: ${excluded.slice(0, 5).join(', ')}`);
  const unlisted = listed.filter((path) => !alwaysPacked.test(path) && !include.some((entry) => filesPattern(entry).test(path)));
  if (unlisted.length) problems.push(`holds files its files list does not name: ${unlisted.slice(0, 5).join(', ')}`);

  const targets = [];
  const collect = (value) => {
    if (typeof value === 'string') targets.push(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect([manifest.exports, manifest.main, manifest.types, manifest.bin, manifest.typesVersions]);
  const jsEntries = targets.filter((path) => /^dist\/[^/]+\.js$/.test(path) && !path.endsWith('.min.js') && !path.endsWith('.browser.js'));
  const missing = [
    ...['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json'].filter((file) => !files.has(file)),
    ...targets.filter((path) => path !== 'package.json' && !files.has(path)),
    ...jsEntries.map((path) => path.replace(/\.js$/, '.d.ts')).filter((path) => !files.has(path)),
  ];
  if (missing.length) problems.push(`lacks ${[...new Set(missing)].join(', ')}`);
  const strays = listed.filter((path) => /(^|\/)(src|test|tsc)\/|\.tsbuildinfo$/.test(path));
  if (strays.length) problems.push(`should not ship ${strays.slice(0, 5).join(', ')}`);

  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(source[field] ?? {})) {
      if (!String(range).startsWith('workspace:')) continue;
      const dependency = publishablePackages.find((candidate) => candidate.name === name);
      const version = dependency ? JSON.parse(readFileSync(join(root, dependency.dir, 'package.json'), 'utf8')).version : null;
      // workspace:^ → ^version, workspace:~ → ~version, workspace:* → version (pnpm's rule).
      const expected = version === null ? null : `${{ '^': '^', '~': '~' }[String(range).slice('workspace:'.length)] ?? ''}${version}`;
      const packed = manifest[field]?.[name];
      if (packed !== expected) problems.push(`${field}.${name} is ${packed ?? 'absent'} in the tarball (the workspace's ${range}), not ${expected ?? 'a published version'}`);
    }
  }
  const absentFields = ['version', 'license', 'repository', 'engines', 'publishConfig', 'files'].filter((field) => manifest[field] === undefined);
  if (absentFields.length) problems.push(`package.json lacks ${absentFields.join(', ')}`);
  return { problems, fileCount: files.size };
}
