// Heap a node spends on each peer held by another node (its stand-in and swarm entry), measured
// with garbage collected: what a cluster node or worker thread pays per peer of the others, beside
// the RSS per peer of `bench:tracker --modes idle` (which includes the sockets and uncollected
// garbage). Needs a build (tracker/dist).
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
/** A JOIN as another node sends it (see cluster-membership.ts): type, connection id, complete, info_hash, peer_id. */
const join = (connectionId, infoHash, peerId) => {
  const payload = new Uint8Array(46);
  payload[0] = 1;
  new DataView(payload.buffer).setUint32(1, connectionId);
  for (let i = 0; i < 20; i++) {
    payload[6 + i] = infoHash.charCodeAt(i);
    payload[26 + i] = peerId.charCodeAt(i);
  }
  return payload;
};

gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < peers; i++) bus.onMessage(`node-${i % 3}`, join(i, id('swarm-', i % swarms), id('peer-', i)));
gc();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ remotePeers: registry.counts().peers, swarms: registry.counts().swarms, heapBytesPerRemotePeer: Math.round((after - before) / peers), node: process.version }));
