// Builds everything: browser packages with rollup, Node packages (tracker, e2e) with tsc, and the
// sample stream (ffmpeg) when it is missing.
import { spawnSync } from 'node:child_process';

const steps = [
  ['rollup', ['-c', 'rollup.config.js', '--silent']],
  ['tsc', ['-b', 'tracker', 'e2e']],
  ['node', ['e2e/bin/make-sample-media.js']],
];
for (const [command, args] of steps) {
  const bin = command === 'node' ? process.execPath : `node_modules/.bin/${command}`;
  const result = spawnSync(bin, args, { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
  if (result.status !== 0) {
    console.error(`shoal: build step failed: ${command} ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
}
