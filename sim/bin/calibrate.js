#!/usr/bin/env node
// `npm run calibrate -- --network realistic,critical --browser-runs 3 --seeds 1,2,3`
// The simulator against browsers on the same profiles (sim/src/calibrate.ts, sim/README.md).
import { fileURLToPath } from 'node:url';
import { loadBuilt } from '../../scripts/load-built.mjs';

const { calibrateUsage, parseCalibrateArgs, runCalibration } = await loadBuilt('calibrate', new URL('../dist/calibrate.js', import.meta.url).href);
let options;
try {
  options = parseCalibrateArgs(process.argv.slice(2));
} catch (error) {
  console.error(`shoal calibrate: ${error.message}\n\n${calibrateUsage}`);
  process.exit(2);
}
if (options === 'help') {
  console.log(calibrateUsage);
  process.exit(0);
}
try {
  await runCalibration(options, fileURLToPath(new URL('../../e2e/bin/swarm.js', import.meta.url)), (line) => console.log(line));
} catch (error) {
  console.error(`shoal calibrate: ${error.message}`);
  process.exitCode = 1;
}
