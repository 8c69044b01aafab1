#!/usr/bin/env node
// `npm run swarm -- --scenario live-normal --peers 8 --duration 120 --engine shoal --out out/run1`
// Swarms of real Chromium viewers against the local origin and Shoal's tracker (or an external
// stream), measuring offload and QoE beside an HTTP-only baseline. See e2e/src/swarm/.
import { parseSwarmArgs, runTimeLimitMs, usage } from '../dist/swarm/cli-options.js';
import { reexecInLoopbackNamespace } from '../dist/swarm/netns.js';
import { runSwarm } from '../dist/swarm/run-swarm.js';

const log = (line) => console.log(line);
let options;
try {
  options = parseSwarmArgs(process.argv.slice(2));
} catch (error) {
  console.error(`shoal swarm: ${error.message}\n\n${usage}`);
  process.exit(2);
}
if (options === 'help') {
  console.log(usage);
  process.exit(0);
}
// Our own origin and tracker run inside a loopback-only namespace with the viewers; an external
// stream or tracker (even on this machine's loopback) is only reachable from the host network.
if (!options.streamUrl && !options.trackerUrl) {
  const status = reexecInLoopbackNamespace(log);
  if (status !== null) process.exit(status);
}

const limitMs = runTimeLimitMs(options);
const watchdog = setTimeout(() => {
  console.error(`shoal swarm: gave up after ${Math.round(limitMs / 1000)} s (the run is bounded in time)`);
  process.exit(3);
}, limitMs);
watchdog.unref();
try {
  const report = await runSwarm({ ...options, log, command: `npm run swarm -- ${process.argv.slice(2).join(' ')}` });
  console.log(`\nreport: ${options.outDir}/report.json, ${options.outDir}/report.html`);
  process.exitCode = report.validity && !report.validity.valid ? 4 : 0;
} catch (error) {
  console.error(`shoal swarm: ${error.stack ?? error.message}`);
  process.exitCode = 1;
}
