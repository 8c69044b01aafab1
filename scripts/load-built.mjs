// The CLIs (`npm run swarm`, `npm run simulate`) run their compiled package (e2e/dist, sim/dist)
// and the packages it imports, from a checkout. Before `npm run setup` (no install, no build) or
// after a pull that added modules the last build lacks, importing them fails with
// ERR_MODULE_NOT_FOUND and a stack: say instead, in one line, what is missing and what to run.
export async function loadBuilt(cli, url) {
  try {
    return await import(url);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const missing = /Cannot find (?:module|package) '([^']+)'/.exec(error.message)?.[1] ?? String(url);
    console.error(`shoal ${cli}: not installed and built yet (${missing} is missing): run \`npm run setup\` first (installs and builds, skipping what is up to date)`);
    process.exit(1);
  }
}
