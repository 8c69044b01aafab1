// Runs the pinned pnpm (package.json "packageManager") through npx, so a machine with only
// Node.js and npm needs nothing installed globally.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const rootPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const pnpmSpec = rootPackage.packageManager; // e.g. "pnpm@10.34.8"
const result = spawnSync('npx', ['--yes', pnpmSpec, ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: new URL('..', import.meta.url),
  env: { ...process.env, npm_config_update_notifier: 'false' },
});
if (result.error) {
  console.error(`shoal: could not run ${pnpmSpec} through npx: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
