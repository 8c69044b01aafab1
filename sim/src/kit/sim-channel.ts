// A simulated WebRTC data channel between two simulated hosts: ordered, reliable, with
// bufferedAmount and a drain event like RTCDataChannel's bufferedamountlow. Messages are queued
// on a flow-network pipe (the sender's uplink, the receiver's downlink) and arrive one link
// latency after they leave. The channel also keeps the byte ledger the conservation test checks:
// every data payload sent is received, received after its cancel, or dropped with a closed link.
import { DATA_HEADER_BYTES, MessageType, type PeerTransport, type PeerTransportEvents } from '@shoal/core';
import { DEFAULT_SIGNALING_OPTIONS } from '@shoal/core/webrtc';
import { FlowNetwork, Pipe, SimHost } from './flow-network.js';
import type { VirtualClock } from './virtual-clock.js';
import { packetsOf } from './wire-overhead.js';

/** The browser signaling's low-water mark for a channel's drain event. */
const DRAIN_THRESHOLD_BYTES = DEFAULT_SIGNALING_OPTIONS.bufferedAmountLowThreshold;
/** Control messages this small skip the bandwidth model when the channel is idle: they cost latency only. */
const SMALL_MESSAGE_BYTES = 64;

// The ledger reads only the type byte, the sequence number, and a data message's payload length.
const TYPE_DATA = MessageType.data;
const TYPE_CANCEL = MessageType.cancel;
const TYPE_DONE = MessageType.done;

/** Data-payload bytes over every channel of a simulation. */
export class ChannelLedger {
  /** Payload bytes handed to send(). */
  sent = 0;
  /** Delivered to an open receiver, for a segment it had not cancelled. */
  received = 0;
  /** Delivered after the receiver cancelled that segment on this channel. */
  cancelled = 0;
  /** Lost with a closed channel: queued, in flight, or sent after close. */
  dropped = 0;
  /** Every message, for profiling. */
  messages = 0;
  /** Called when a `done` arrives: `from` sent its receiver the last bytes of `sequence` (the report's hop depths). */
  onDone: ((from: SimHost, to: SimHost, sequence: number) => void) | undefined;
}

type Pending =
  | { kind: 'message'; data: Uint8Array }
  | { kind: 'close'; reason: string | undefined }
  | { kind: 'drain' };

export class SimChannelEnd implements PeerTransport {
  bufferedAmount = 0;
  other!: SimChannelEnd;
  private events: PeerTransportEvents | undefined;
  private readonly pending: Pending[] = [];
  /**
   * Cancels this end sent, and cancels it received, per segment. A data message carries the count
   * of cancels its sender had received for its segment; on arrival it belongs to a transfer the
   * receiver cancelled if the receiver has sent more cancels than that. Exact whatever the
   * engine does with it, and blind to offsets.
   */
  private readonly cancelsSent = new Map<number, number>();
  private readonly cancelsReceived = new Map<number, number>();
  closed = false;
  /** Called once when this end stops (its own close or the remote's): the signaling forgets the connection. */
  onShutDown: (() => void) | undefined;

  constructor(
    readonly remotePeerId: string,
    readonly host: SimHost,
    private readonly pipe: Pipe,
    private readonly network: FlowNetwork,
    private readonly ledger: ChannelLedger,
  ) {}

  private get latencyMs(): number {
    return this.host.capacity.latencyMs + this.other.host.capacity.latencyMs;
  }

  /** Until when this end's ICE checks were charged (wire-overhead.ts). */
  private iceChargedMs = 0;

  /** The ICE checks since the last charge, sent now (lazily, at the channel's next message). */
  private chargeIceChecks(): void {
    const overhead = this.network.wireOverhead;
    if (!overhead) return;
    const now = this.network.clock.now();
    if (this.iceChargedMs > 0) this.host.sendOverhead(((now - this.iceChargedMs) / 1000) * overhead.iceCheckBytesPerS);
    this.iceChargedMs = now;
  }

  send(data: Uint8Array): void {
    this.chargeIceChecks();
    const payload = data[0] === TYPE_DATA ? data.length - DATA_HEADER_BYTES : 0;
    this.ledger.sent += payload;
    this.ledger.messages++;
    if (this.closed) {
      this.ledger.dropped += payload;
      return;
    }
    let generation = 0;
    if (payload > 0) generation = this.cancelsReceived.get(sequenceOf(data)) ?? 0;
    else if (data[0] === TYPE_CANCEL) increment(this.cancelsSent, sequenceOf(data));
    const overhead = this.network.wireOverhead;
    const headerBytes = overhead ? packetsOf(overhead, data.length) * overhead.packetBytes : 0;
    if (this.pipe.instant || (data.length <= SMALL_MESSAGE_BYTES && !this.pipe.active)) {
      // A small message still waits behind whatever the sender's other uploads queued at its router.
      if (overhead) {
        this.host.sendOverhead(headerBytes);
        this.host.sendAside(data.length);
      }
      this.transmitted(data, payload, generation, this.host.uplinkQueueDelayMs());
      return;
    }
    const size = data.length;
    const wireBytes = size + (overhead ? this.host.takeOverheadOwed(headerBytes) : 0);
    this.bufferedAmount += size;
    this.queuedPayload += payload;
    this.pipe.push(wireBytes, () => {
      const before = this.bufferedAmount;
      this.bufferedAmount -= size;
      this.queuedPayload -= payload;
      this.transmitted(data, payload, generation);
      if (before > DRAIN_THRESHOLD_BYTES && this.bufferedAmount <= DRAIN_THRESHOLD_BYTES && !this.closed) this.emit({ kind: 'drain' });
    });
  }

  close(): void {
    if (this.closed) return;
    this.shutDown();
    const clock = this.network.clock;
    // Our own close event comes as a task of its own, like RTCDataChannel's onclose.
    clock.setTimeout(() => this.emit({ kind: 'close', reason: undefined }), 0);
    const other = this.other;
    clock.setTimeout(() => {
      if (other.closed) return;
      other.shutDown();
      other.emit({ kind: 'close', reason: 'remote closed the channel' });
    }, this.latencyMs);
  }

  setEvents(events: PeerTransportEvents): void {
    this.events = events;
    for (const queued of this.pending.splice(0)) this.dispatch(queued);
  }

  /** The link is gone: nothing more is sent or delivered. */
  private shutDown(): void {
    this.closed = true;
    this.pipe.clear();
    this.ledger.dropped += this.queuedPayload;
    this.queuedPayload = 0;
    this.bufferedAmount = 0;
    this.onShutDown?.();
  }

  /** Data payload still queued in the pipe (dropped if the channel closes). */
  private queuedPayload = 0;

  /** When the last message sent will arrive: the channel is ordered, so none arrives before it. */
  private lastArrivalMs = 0;

  private transmitted(data: Uint8Array, payload: number, generation: number, queueMs = 0): void {
    const other = this.other;
    const clock = this.network.clock;
    this.lastArrivalMs = Math.max(this.lastArrivalMs, clock.now() + this.latencyMs + queueMs);
    clock.at(this.lastArrivalMs, () => other.deliver(data, payload, generation));
  }

  private deliver(data: Uint8Array, payload: number, generation: number): void {
    if (this.closed) {
      this.ledger.dropped += payload;
      return;
    }
    const overhead = this.network.wireOverhead;
    if (overhead) {
      this.chargeIceChecks();
      const packets = packetsOf(overhead, data.length);
      // SCTP acknowledges every second packet, or one alone after its delayed-ack timer.
      this.host.sendOverhead((data[0] === TYPE_DATA ? packets / overhead.dataPacketsPerAck : packets) * overhead.ackBytes);
    }
    if (payload > 0) {
      if (generation < (this.cancelsSent.get(sequenceOf(data)) ?? 0)) this.ledger.cancelled += payload;
      else this.ledger.received += payload;
    } else if (data[0] === TYPE_CANCEL) {
      increment(this.cancelsReceived, sequenceOf(data));
    } else if (data[0] === TYPE_DONE) {
      this.ledger.onDone?.(this.other.host, this.host, sequenceOf(data));
    }
    this.emit({ kind: 'message', data });
  }

  private emit(event: Pending): void {
    if (this.events) this.dispatch(event);
    else this.pending.push(event);
  }

  private dispatch(event: Pending): void {
    const events = this.events!;
    if (event.kind === 'message') events.message(event.data);
    else if (event.kind === 'drain') events.drain();
    else events.close(event.reason);
  }
}

function increment(counts: Map<number, number>, sequence: number): void {
  counts.set(sequence, (counts.get(sequence) ?? 0) + 1);
}

function sequenceOf(data: Uint8Array): number {
  return ((data[1]! << 24) | (data[2]! << 16) | (data[3]! << 8) | data[4]!) >>> 0;
}

/** A connected pair of channel ends between two hosts. */
export function connectHosts(
  network: FlowNetwork,
  ledger: ChannelLedger,
  a: { host: SimHost; peerId: string },
  b: { host: SimHost; peerId: string },
): [SimChannelEnd, SimChannelEnd] {
  const endA = new SimChannelEnd(b.peerId, a.host, new Pipe(network, a.host, b.host), network, ledger);
  const endB = new SimChannelEnd(a.peerId, b.host, new Pipe(network, b.host, a.host), network, ledger);
  endA.other = endB;
  endB.other = endA;
  return [endA, endB];
}

export interface LinkOptions {
  /** Each direction's bandwidth, bytes/s. */
  bytesPerS: number;
  /** One-way latency, ms. */
  latencyMs: number;
}

/**
 * A connected pair of channels over a link of their own (no other flow shares its bandwidth):
 * `a` is A's view of B (its remote peer id is B's), `b` is B's view of A.
 */
export function linkTransports(clock: VirtualClock, idA: string, idB: string, link: LinkOptions): [SimChannelEnd, SimChannelEnd] {
  const capacity = { upBytesPerS: link.bytesPerS, downBytesPerS: Infinity, latencyMs: link.latencyMs / 2 };
  return connectHosts(new FlowNetwork(clock), new ChannelLedger(), { host: new SimHost(idA, capacity), peerId: idA }, { host: new SimHost(idB, capacity), peerId: idB });
}
