// Re-runs the current Node command inside a network namespace that has only `lo`, so WebRTC
// between the viewers can only use loopback (as scripts/netns.mjs does for the browser tests).
import { spawnSync } from 'node:child_process';

const marker = 'SHOAL_SWARM_IN_NETNS';
/** Set to the namespace's inode inside it (see viewer-networks.ts, which checks it). */
const privateNetnsVariable = 'SHOAL_PRIVATE_NETNS';

/**
 * Returns the child's exit status when it re-ran itself in a namespace, or null when the caller
 * should carry on here (already inside, disabled with SHOAL_NO_NETNS=1, or not permitted).
 */
export function reexecInLoopbackNamespace(log: (line: string) => void): number | null {
  if (process.env[marker] === '1' || process.env.SHOAL_NO_NETNS === '1') return null;
  if (spawnSync('unshare', ['--net', 'true']).status !== 0) {
    log('shoal swarm: network namespaces unavailable (need root or user namespaces); running on the host network');
    return null;
  }
  const result = spawnSync('unshare', ['--net', 'sh', '-c', `ip link set lo up && export ${privateNetnsVariable}=$(stat -L -c %i /proc/self/ns/net) && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [marker]: '1' },
  });
  return result.status ?? 1;
}
