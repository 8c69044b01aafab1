// `npm run pack -- --out DIR`: the four publishable packages as npm tarballs in DIR, packed as
// `pnpm publish -r` packs them (each package's prepack builds it; workspace:^ ranges become
// versions), each checked against its `files` list; then the one line that installs them together
// into a project. Until the packages are on the registry, this is how a project outside this
// repository installs them: a lone @shoal/hlsjs tarball cannot find @shoal/core.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { packPackages, tarballProblems } from './pack-packages.mjs';
import { installIfChanged } from './setup-steps.mjs';

const usage = 'usage: npm run pack -- --out DIR   (packs @shoal/core, hlsjs, player and tracker into DIR)';
let outDir;
try {
  const { values } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (!values.out) throw new Error('--out DIR is missing');
  // npm runs scripts from the repository's root; INIT_CWD is where `npm run` was typed.
  outDir = resolve(process.env.INIT_CWD ?? process.cwd(), values.out);
} catch (error) {
  console.error(`shoal pack: ${error.message}\n${usage}`);
  process.exit(2);
}

// The packages' prepack scripts build with the workspace's tools: install them if needed.
installIfChanged((line) => console.log(line));
const packed = packPackages(outDir, (pkg, result) => {
  console.log(`${result.ok ? 'packed' : 'FAILED to pack'} ${pkg.name} (${result.seconds.toFixed(1)} s)`);
  if (!result.ok) console.error(result.output.split('\n').slice(-30).join('\n'));
});
if (!packed) process.exit(1);
let failed = false;
for (const pkg of packed) {
  const { problems, fileCount } = tarballProblems(pkg, pkg.tarball);
  failed ||= problems.length > 0;
  console.log(`${problems.length ? 'FAIL' : 'ok  '}  ${pkg.tarball} (${fileCount} files)${problems.map((problem) => `\n      ${problem}`).join('')}`);
}
if (failed) process.exit(1);
console.log(`\nInstall them together in your project (npm finds @shoal/core beside the others):\n  npm install ${outDir}/*.tgz hls.js video.js`);

