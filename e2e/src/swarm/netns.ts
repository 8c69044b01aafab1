// Re-runs the current Node command inside a network namespace that has only `lo`, so WebRTC
// between the viewers can only use loopback (as scripts/netns.mjs does for the browser tests), its
// default route to `lo` as well: Firefox gathers no ICE candidate without one.
import { spawn, spawnSync } from 'node:child_process';

const marker = 'SHOAL_SWARM_IN_NETNS';
/** Set to the namespace's inode inside it (see viewer-networks.ts, which checks it). */
const privateNetnsVariable = 'SHOAL_PRIVATE_NETNS';

/**
 * Resolves to the child's exit status when it re-ran itself in a namespace, or null when the
 * caller should carry on here (already inside, disabled with SHOAL_NO_NETNS=1, or not permitted).
 * SIGINT and SIGTERM are passed on to the child, which writes its partial report before it exits.
 */
export async function reexecInLoopbackNamespace(log: (line: string) => void): Promise<number | null> {
  if (process.env[marker] === '1' || process.env.SHOAL_NO_NETNS === '1') return null;
  if (spawnSync('unshare', ['--net', 'true']).status !== 0) {
    log('shoal swarm: network namespaces unavailable (need root or user namespaces); running on the host network');
    return null;
  }
  const child = spawn('unshare', ['--net', 'sh', '-c', `ip link set lo up && ip route add default dev lo src 127.0.0.1 && { ip -6 route add default dev lo || true; } && export ${privateNetnsVariable}=$(stat -L -c %i /proc/self/ns/net) && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [marker]: '1' },
  });
  // A terminal's Ctrl-C reaches the child's process group too; a signal to this process alone is passed on.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1));
    });
  });
}
