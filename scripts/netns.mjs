// Runs a command inside a fresh network namespace that has only `lo`, so WebRTC between
// browser pages on this machine can only use loopback. Its default route goes to `lo` too:
// Firefox gathers no ICE candidate at all without one (Chromium is indifferent). Falls back to
// running the command as is (with a warning) where namespaces are not permitted.
// SHOAL_PRIVATE_NETNS tells the processes inside which namespace is theirs
// (e2e/src/swarm/viewer-networks.ts builds on it).
import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/netns.mjs <command> [args...]');
  process.exit(2);
}
const quoted = [command, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
// Where IPv6 is off there is no IPv6 route to add.
const defaultRoute = 'ip route add default dev lo src 127.0.0.1 && { ip -6 route add default dev lo || true; }';
const probe = spawnSync('unshare', ['--net', 'true']);
let result;
if (probe.status === 0 && process.env.SHOAL_NO_NETNS !== '1') {
  result = spawnSync('unshare', ['--net', 'sh', '-c', `ip link set lo up && ${defaultRoute} && export SHOAL_PRIVATE_NETNS=$(stat -L -c %i /proc/self/ns/net) && exec npx ${quoted}`], { stdio: 'inherit' });
} else {
  console.warn('shoal: network namespaces unavailable (need root or unshare); running on the host network');
  result = spawnSync('npx', [command, ...args], { stdio: 'inherit' });
}
process.exit(result.status ?? 1);
