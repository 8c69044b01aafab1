// @shoal/sim: the swarm simulator. The unmodified @shoal/core engine in every simulated viewer, on
// the kit's virtual clock (./kit.ts) with simulated links, tracker and origin; reports in the
// browser swarm's format (@shoal/e2e's swarm report). `npm run simulate` is its CLI (./cli.ts).
export { DEFAULT_SIMULATION, Simulation, runSimulation, type SimulationConfig, type SimulationResult, type Viewer } from './simulation.js';
export { buildSimReport, simRunReport, type SimReport, type SimRunReport } from './sim-report.js';
export { parseSimArgs, runSimCli, usage, type SimCliOptions } from './cli.js';
