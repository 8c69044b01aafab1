// What a viewer's uplink carries besides payload, as the browser swarm measured it (the uplink
// account, e2e/src/swarm/uplink-classes.ts; docs/lab-notes/2026-12-02-pacing-by-delivery-rate.md):
// every SCTP packet a data channel sends costs about 90 bytes of SCTP/DTLS/UDP/IP headers, each
// message is at least one packet (Chromium does not bundle separate sends), the receiver
// acknowledges what it got with packets of its own, and a viewer's HTTP downloads send TCP
// acknowledgements up its uplink. Off by default in the kit (core's tests model payload only);
// the simulator turns it on.

export interface WireOverhead {
  /** Headers of one SCTP packet on the wire: SCTP common header and chunk header, DTLS record, UDP, IPv4. */
  packetBytes: number;
  /** Message bytes one SCTP packet carries (fragments of a larger message). */
  packetPayloadBytes: number;
  /** One SCTP acknowledgement packet. */
  ackBytes: number;
  /** Data packets received per acknowledgement (a control message, alone, is acknowledged alone). */
  dataPacketsPerAck: number;
  /** TCP acknowledgements and request headers up the uplink per byte an HTTP download brings. */
  httpAckShare: number;
  /**
   * ICE connectivity checks, per connection and end: WebRTC pings a stable connection every 2.5 s
   * (a STUN binding request, ~130 B on the wire) and answers the other end's (~110 B).
   */
  iceCheckBytesPerS: number;
}

/**
 * Measured in the browser swarm (8 Chromium viewers, realistic, 304d036): 90 B of overhead per UDP
 * packet; data messages of ~1 KiB each a packet of their own; origin TCP 26-31 kbit/s up for
 * 650-700 kbit/s of HTTP down (4.5%). SCTP acknowledges every second packet (RFC 9260 6.2); the
 * ICE checks' sizes are typical, not measured here.
 */
export const BROWSER_WIRE_OVERHEAD: WireOverhead = {
  packetBytes: 90,
  packetPayloadBytes: 1150,
  ackBytes: 85,
  dataPacketsPerAck: 2,
  httpAckShare: 0.045,
  iceCheckBytesPerS: (130 + 110) / 2.5,
};

/** Packets a message of `bytes` takes. */
export function packetsOf(overhead: WireOverhead, bytes: number): number {
  return Math.max(1, Math.ceil(bytes / overhead.packetPayloadBytes));
}
