#!/usr/bin/env node
// `npm run simulate -- --scenario live-normal --peers 1000 --network unlimited --minutes 10 --seed 1 --out out/sim1`
// The swarm simulator: the unmodified Shoal engine in every simulated viewer, on a virtual clock
// with simulated links, tracker and origin. See sim/README.md.
import { loadBuilt } from '../../scripts/load-built.mjs';

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
  await runSimCli(options, `npm run simulate -- ${process.argv.slice(2).join(' ')}`, (line) => console.log(line));
  if (options.outDir) console.log(`\nreport: ${options.outDir}/report.json, ${options.outDir}/report.html`);
} catch (error) {
  console.error(`shoal simulate: ${error.stack ?? error.message}`);
  process.exitCode = 1;
}
