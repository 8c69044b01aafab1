// Records how every RTCPeerConnection of this page connected, whichever engine made it: the
// candidate types of its selected pair once connected (getStats), or that it failed, and the
// browser at the other end. Imported before any engine, so that the engines construct the
// wrapped class.
const NativePeerConnection = globalThis.RTCPeerConnection;
const records = [];

/** 'relay' if either end is a TURN relay, 'srflx' if either end was learnt through NAT (STUN or a check), else 'host'. */
async function selectedPairKind(connection) {
  const stats = await connection.getStats();
  let pair = null;
  stats.forEach((report) => {
    if (report.type === 'transport' && report.selectedCandidatePairId) pair = stats.get(report.selectedCandidatePairId);
  });
  if (!pair) stats.forEach((report) => {
    if (!pair && report.type === 'candidate-pair' && report.nominated && report.state === 'succeeded') pair = report;
  });
  if (!pair) return null;
  const types = [stats.get(pair.localCandidateId)?.candidateType, stats.get(pair.remoteCandidateId)?.candidateType];
  if (types.includes('relay')) return 'relay';
  if (types.includes('srflx') || types.includes('prflx')) return 'srflx';
  return 'host';
}

/**
 * The other end's browser, from its session description: Firefox signs its SDP's origin line
 * "mozilla…"; libwebrtc's browsers (Chromium, and Safari, which these swarms do not run) do not.
 */
const remoteBrowser = (sdp) => (/^o=mozilla/m.test(sdp) ? 'firefox' : 'chromium');

if (NativePeerConnection) {
  globalThis.RTCPeerConnection = class TrackedPeerConnection extends NativePeerConnection {
    #record;

    constructor(...args) {
      super(...args);
      // An offer nobody answered (the tracker hands out offers ahead) is not a connection attempt.
      const record = { kind: null, failed: false, answered: false, remote: null };
      records.push(record);
      this.#record = record;
      this.addEventListener('signalingstatechange', () => {
        if (this.remoteDescription) record.answered = true;
      });
      this.addEventListener('connectionstatechange', () => {
        if (this.connectionState === 'failed') record.failed = true;
        if (this.connectionState === 'connected' && record.kind === null) {
          selectedPairKind(this).then((kind) => (record.kind = kind ?? 'unknown'), () => (record.kind = 'unknown'));
        }
      });
    }

    // The description as the other end wrote it: Chromium's remoteDescription is its own rewrite.
    setRemoteDescription(description, ...rest) {
      if (description?.sdp) this.#record.remote ??= remoteBrowser(description.sdp);
      return super.setRemoteDescription(description, ...rest);
    }
  };
}

/**
 * Counts of this page's peer connections: connected directly (host), through NAT traversal
 * (srflx/prflx), through a TURN relay, failed (ICE failed), or not connected (yet, or ever, and
 * closed without failing). Offers that never got an answer are not counted.
 */
export function peerConnectionCounts() {
  const counts = { host: 0, srflx: 0, relay: 0, unknown: 0, failed: 0, unconnected: 0 };
  for (const record of records) {
    if (!record.answered && !record.kind && !record.failed) continue;
    if (record.kind) counts[record.kind] += 1;
    else if (record.failed) counts.failed += 1;
    else counts.unconnected += 1;
  }
  return counts;
}

/**
 * This page's answered peer connections by the browser at the other end: how many connected
 * (at any point) and how many failed, e.g. `{ firefox: { connected: 2, failed: 0 } }`.
 */
export function peerConnectionsByRemote() {
  const byRemote = {};
  for (const record of records) {
    if (!record.remote) continue;
    const counts = (byRemote[record.remote] ??= { connected: 0, failed: 0 });
    if (record.kind) counts.connected += 1;
    else if (record.failed) counts.failed += 1;
  }
  return byRemote;
}
