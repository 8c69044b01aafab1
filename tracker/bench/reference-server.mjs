// bittorrent-tracker's server (WebSocket only), the reference the benchmark compares against.
// Prints `listening ws://127.0.0.1:PORT` like shoal-tracker does.

import Server from 'bittorrent-tracker/server';

const port = Number(process.argv[2] ?? 0);
const server = new Server({ udp: false, http: false, ws: true, stats: false });
server.on('warning', () => {});
server.on('error', (error) => process.stderr.write(`reference tracker error: ${error.message}\n`));
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ws://127.0.0.1:${server.ws.address().port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
