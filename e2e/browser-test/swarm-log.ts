// The swarm runner's progress lines in browser tests: silent unless SHOAL_SWARM_LOG=1.
export const swarmLog = (line: string): void => {
  if (process.env.SHOAL_SWARM_LOG === '1') console.log(line);
};
