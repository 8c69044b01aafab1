#!/usr/bin/env node
// `npm run swarm -- --scenario live-normal --peers 8 --duration 120 --engine shoal --out out/run1`
// Swarms of real browser viewers (Chromium, and Firefox with --browsers) against the local origin
// and Shoal's tracker (or an external stream), measuring offload and QoE beside an HTTP-only
// baseline. See e2e/src/swarm/.
import { loadBuilt } from '../../scripts/load-built.mjs';
import { usage } from './swarm-usage.js';

const args = process.argv.slice(2);
// Help needs no build (a fresh clone has no e2e/dist yet).
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage);
  process.exit(0);
}
const built = (path) => loadBuilt('swarm', new URL(`../dist/swarm/${path}`, import.meta.url).href);
const { parseSwarmArgs, runTimeLimitMs } = await built('cli-options.js');
const { reexecInLoopbackNamespace } = await built('netns.js');
const { runSwarm } = await built('run-swarm.js');

const log = (line) => console.log(line);
let options;
try {
  options = parseSwarmArgs(args);
} catch (error) {
  console.error(`shoal swarm: ${error.message}\n\n${usage}`);
  process.exit(2);
}
// Our own origin and tracker run inside a loopback-only namespace with the viewers; an external
// stream or tracker (even on this machine's loopback) is only reachable from the host network.
if (!options.streamUrl && !options.trackerUrl) {
  const status = await reexecInLoopbackNamespace(log);
  if (status !== null) process.exit(status);
}

// A watchdog, Ctrl-C or SIGTERM stops the run where it is: the report of what ran is written
// (marked partial), then the process exits with the stop's own code. A second signal exits at once.
const controller = new AbortController();
let stopCode = null;
const stop = (reason, code) => {
  if (stopCode !== null) process.exit(stopCode);
  stopCode = code;
  console.error(`shoal swarm: ${reason}: writing the partial report (again to quit at once)`);
  controller.abort(reason);
  setTimeout(() => process.exit(code), 90_000).unref();
};
process.on('SIGINT', () => stop('interrupted (SIGINT)', 130));
process.on('SIGTERM', () => stop('terminated (SIGTERM)', 143));
const limitMs = runTimeLimitMs(options);
setTimeout(() => stop(`watchdog: gave up after ${Math.round(limitMs / 1000)} s (the run is bounded in time)`, 3), limitMs).unref();

try {
  const report = await runSwarm({ ...options, log, signal: controller.signal, command: `npm run swarm -- ${args.join(' ')}` });
  console.log(`\nreport: ${options.outDir}/report.json, ${options.outDir}/report.html`);
  if (stopCode !== null) process.exitCode = stopCode;
  else if (report.partial?.code === 'NO_VIEWER_PLAYING') process.exitCode = 7;
  else if (report.validity && !report.validity.valid) process.exitCode = 4;
  else if (report.thresholds.some((result) => !result.pass)) process.exitCode = 5;
  else process.exitCode = 0;
} catch (error) {
  // A stream that cannot play as asked is the user's to fix: the message, not a stack.
  const streamExit = { STREAM_UNPLAYABLE: 6, STREAM_KIND_MISMATCH: 2 }[error.code];
  console.error(`shoal swarm: ${streamExit ? error.message : (error.stack ?? error.message)}`);
  process.exitCode = stopCode ?? streamExit ?? 1;
}
process.exit(process.exitCode);
