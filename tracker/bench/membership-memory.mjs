// What replicating swarm membership costs a node for each peer held by another node: heap (its
// stand-in and swarm entry, measured with garbage collected), beside the RSS per peer of
// `bench:tracker --modes idle` (which includes the sockets and uncollected garbage); and CPU per
// membership change applied (a JOIN, then a LEAVE, as other nodes send them; every node applies
// every other node's changes). Needs a build (tracker/dist).
//
//   node --expose-gc tracker/bench/membership-memory.mjs [peers, default 100000] [swarms, default 50]

import { ClusterMembership } from '../dist/cluster-membership.js';
import { SwarmRegistry } from '../dist/swarm-registry.js';

if (typeof gc !== 'function') throw new Error('run with node --expose-gc');
const peers = Number(process.argv[2] ?? 100_000);
const swarms = Number(process.argv[3] ?? 50);
const registry = new SwarmRegistry();
const bus = { nodeId: 'this-node', broadcast() {}, sendTo() {}, onMessage: null, onNodeLost: null, onConnected: null };
new ClusterMembership(registry, bus, () => undefined);

const id = (prefix, n) => (prefix + n.toString(36)).padEnd(20, '\u00b7').slice(0, 20);
/** A JOIN or LEAVE as another node sends it (see membership-messages.ts): type, connection id, complete, info_hash, peer_id; a JOIN's key length (0: none). */
const entry = (type, connectionId, infoHash, peerId) => {
  const payload = new Uint8Array(type === JOIN ? 47 : 46);
  payload[0] = type;
  new DataView(payload.buffer).setUint32(1, connectionId);
  for (let i = 0; i < 20; i++) {
    payload[6 + i] = infoHash.charCodeAt(i);
    payload[26 + i] = peerId.charCodeAt(i);
  }
  return payload;
};

const JOIN = 1;
const LEAVE = 2;
const cpuUs = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
/** Every peer's JOIN or LEAVE, as the bus delivers them (building each message is timed too: ~0.2 µs). */
const applyAll = (type) => {
  const started = cpuUs();
  for (let i = 0; i < peers; i++) bus.onMessage(`node-${i % 3}`, entry(type, i, id('swarm-', i % swarms), id('peer-', i)));
  return (cpuUs() - started) / peers;
};

gc();
const before = process.memoryUsage().heapUsed;
const joinUs = applyAll(JOIN);
gc();
const after = process.memoryUsage().heapUsed;
const counts = registry.counts();
const leaveUs = applyAll(LEAVE);
console.log(JSON.stringify({
  remotePeers: counts.peers,
  swarms: counts.swarms,
  heapBytesPerRemotePeer: Math.round((after - before) / peers),
  cpuUsPerJoinApplied: Math.round(joinUs * 100) / 100,
  cpuUsPerLeaveApplied: Math.round(leaveUs * 100) / 100,
  peersLeft: registry.counts().peers,
  node: process.version,
}));
