// Runs a command inside a fresh network namespace that has only `lo`, so WebRTC between
// browser pages on this machine can only use loopback. Falls back to running the command
// as is (with a warning) where namespaces are not permitted. SHOAL_PRIVATE_NETNS tells the
// processes inside which namespace is theirs (e2e/src/swarm/viewer-networks.ts builds on it).
import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/netns.mjs <command> [args...]');
  process.exit(2);
}
const quoted = [command, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
const probe = spawnSync('unshare', ['--net', 'true']);
let result;
if (probe.status === 0 && process.env.SHOAL_NO_NETNS !== '1') {
  result = spawnSync('unshare', ['--net', 'sh', '-c', `ip link set lo up && export SHOAL_PRIVATE_NETNS=$(stat -L -c %i /proc/self/ns/net) && exec npx ${quoted}`], { stdio: 'inherit' });
} else {
  console.warn('shoal: network namespaces unavailable (need root or unshare); running on the host network');
  result = spawnSync('npx', [command, ...args], { stdio: 'inherit' });
}
process.exit(result.status ?? 1);
