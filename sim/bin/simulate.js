#!/usr/bin/env node
// `npm run simulate -- --scenario live-normal --peers 1000 --network unlimited --minutes 10 --seed 1 --out out/sim1`
// The swarm simulator: the unmodified Shoal engine in every simulated viewer, on a virtual clock
// with simulated links, tracker and origin. See sim/README.md.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadBuilt } from '../../scripts/load-built.mjs';

/**
 * The simulator's heap (sim/README.md, "Long runs"). Every viewer's engine lives in this one heap:
 * 10,000 viewers need more than V8's default limit (about 4 GB here), and the limit is what
 * bounds a run's memory. Node reads it only at start: the CLI restarts itself with it unless
 * one was given.
 */
const HEAP_FLAGS = ['--max-old-space-size=10240'];
const given = process.execArgv.some((flag) => flag.startsWith('--max-old-space-size'));
if (!given && process.env.SHOAL_SIM_HEAP !== 'set') {
  const child = spawn(process.execPath, [...HEAP_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SHOAL_SIM_HEAP: 'set' },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
} else {
  await main();
}

async function main() {
  const { parseSimArgs, runSimCli, usage } = await loadBuilt('simulate', new URL('../dist/cli.js', import.meta.url).href);
  let options;
  try {
    options = parseSimArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`shoal simulate: ${error.message}\n\n${usage}`);
    process.exit(2);
  }
  if (options === 'help') {
    console.log(usage);
    process.exit(0);
  }
  try {
    await runSimCli(
      options,
      `npm run simulate -- ${process.argv.slice(2).join(' ')}`,
      (line) => console.log(line),
      (line) => console.error(line),
    );
    if (options.outDir) console.log(`\nreport: ${options.outDir}/report.json, ${options.outDir}/report.html`);
  } catch (error) {
    console.error(`shoal simulate: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  }
}
