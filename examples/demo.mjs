#!/usr/bin/env node
// `npm run demo`: origin (VOD + simulated live), tracker and the example pages, until Ctrl-C.
// Ports: SHOAL_DEMO_PORT (pages, default 8080), SHOAL_ORIGIN_PORT (8081), SHOAL_TRACKER_PORT (8000).
import { startDemoStack } from '@shoal/e2e/demo-stack';

const port = (name, fallback) => Number(process.env[name] ?? fallback);
let stack;
try {
  stack = await startDemoStack({
    host: process.env.SHOAL_DEMO_HOST ?? '127.0.0.1',
    pagesPort: port('SHOAL_DEMO_PORT', 8080),
    originPort: port('SHOAL_ORIGIN_PORT', 8081),
    trackerPort: port('SHOAL_TRACKER_PORT', 8000),
  });
} catch (error) {
  const hint = error.code === 'EADDRINUSE' ? ' (a port is taken: set SHOAL_DEMO_PORT / SHOAL_ORIGIN_PORT / SHOAL_TRACKER_PORT)' : '';
  console.error(`shoal demo: could not start: ${error.message}${hint}`);
  process.exit(1);
}
console.log(`
Shoal demo is running. Open in Chromium (open each page in two tabs to see P2P):

  demo index   ${stack.urls.index}
  live         ${stack.urls.live}
  VOD          ${stack.urls.vod}

  origin       ${stack.origin.url}   (byte counters: ${stack.origin.url}/__origin/stats)
  tracker      ${stack.tracker.url}  (stats: ${stack.tracker.httpUrl}/stats.json)

Ctrl-C stops everything.`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await stack.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
