// Flow-level network model. A pipe carries an ordered queue of units (a data-channel message, an
// HTTP chunk) from a sender's uplink to a receiver's downlink, one unit after another. While a
// pipe has units it is an active flow. A flow may use its equal share of the sender's uplink (and
// no more than the source's own cap); each receiver's downlink is shared max-min fairly among its
// flows under those caps. Rates are recomputed only when a flow starts or ends, never per packet:
// a unit's completion is one event at the time its bytes drain.
import type { SimEvent } from './event-queue.js';
import type { VirtualClock } from './virtual-clock.js';
import type { WireOverhead } from './wire-overhead.js';

export interface LinkCapacity {
  /** Bytes/s; Infinity for unthrottled. 0 stops every flow out of the host. */
  upBytesPerS: number;
  downBytesPerS: number;
  /** One-way access latency, ms: a link between two hosts takes the sum of theirs. */
  latencyMs: number;
  /**
   * The home router's uplink buffer, in ms of uplink time (a tbf `latency`): the most queueing
   * delay a saturated uplink adds to everything else this host sends. Default 0 (no bloat).
   */
  uplinkQueueMs?: number;
}

export class SimHost {
  /** Active flows out of this host (uplink) and into it (downlink). */
  readonly uplink = new Set<Pipe>();
  readonly downlink = new Set<Pipe>();
  /** The flow network's mark: this downlink was already refilled in the current reshare. */
  reshareStamp = 0;

  /** Bytes sent outside the flows (wire-overhead.ts) while the uplink was busy, not yet charged to a flow. */
  private overheadOwed = 0;
  /** Every byte of data-channel overhead the uplink sent (headers, acknowledgements, ICE checks), busy or not. */
  overheadBytes = 0;
  /** TCP acknowledgements of the host's HTTP downloads, busy or not. */
  tcpAckBytes = 0;

  constructor(
    readonly id: string,
    public capacity: LinkCapacity,
  ) {}

  /**
   * The uplink sent `bytes` of headers or acknowledgements. On an idle uplink they cost nothing
   * anyone would notice; on a busy one they take the time of the next unit the host sends.
   */
  sendOverhead(bytes: number, tcp = false): void {
    if (tcp) this.tcpAckBytes += bytes;
    else this.overheadBytes += bytes;
    this.sendAside(bytes);
  }

  /** The uplink sent `bytes` outside any flow (a small message on an idle pipe): owed if the uplink is busy. */
  sendAside(bytes: number): void {
    if (this.uplink.size > 0) this.overheadOwed += bytes;
  }

  /** The overhead owed (to be sent with the next unit, whose own headers `ownBytes` are), forgotten here. */
  takeOverheadOwed(ownBytes: number): number {
    this.overheadBytes += ownBytes;
    const owed = this.overheadOwed;
    this.overheadOwed = 0;
    return owed + ownBytes;
  }

  /**
   * Queueing delay that anything this host sends now waits behind (an HTTP request, the TCP
   * acknowledgements of its downloads, a small peer message), ms. Its uploads' backlog fills the
   * router's FIFO up to the buffer: congestion control on a link with a deep buffer keeps it full
   * while the sender has more to send than the link carries (bufferbloat).
   */
  uplinkQueueDelayMs(): number {
    const { upBytesPerS, uplinkQueueMs = 0 } = this.capacity;
    if (!(upBytesPerS > 0) || upBytesPerS === Infinity || uplinkQueueMs <= 0 || this.uplink.size === 0) return 0;
    let backlog = 0;
    for (const pipe of this.uplink) backlog += pipe.backlogBytes;
    return Math.min((backlog / upBytesPerS) * 1000, uplinkQueueMs);
  }
}

interface Unit {
  bytes: number;
  onSent: () => void;
}

export class Pipe {
  private readonly units: Unit[] = [];
  private head = 0;
  /** Bytes of the head unit not yet sent. */
  private remaining = 0;
  private rate = 0;
  private lastMs = 0;
  private completion: SimEvent | undefined;
  active = false;

  constructor(
    private readonly network: FlowNetwork,
    /** Undefined: the origin (a CDN), limited only by `sourceBytesPerS`. */
    readonly source: SimHost | undefined,
    readonly target: SimHost,
    readonly sourceBytesPerS = Infinity,
  ) {}

  /** Whether a unit sent now would leave at once: no queue and no finite capacity on the way. */
  get instant(): boolean {
    if (this.active) return false;
    const up = this.source ? this.source.capacity.upBytesPerS : Infinity;
    if (up === Infinity && this.sourceBytesPerS === Infinity && this.target.capacity.downBytesPerS === Infinity) return true;
    return this.network.rateFor(this, true) === Infinity;
  }

  push(bytes: number, onSent: () => void): void {
    this.units.push({ bytes, onSent });
    if (!this.active) {
      this.remaining = bytes;
      this.network.activate(this);
    }
  }

  /** Drops every queued unit (the connection is gone); returns the bytes not yet sent. */
  clear(): number {
    let unsent = 0;
    if (this.active) this.settle();
    for (let i = this.head; i < this.units.length; i++) unsent += this.units[i]!.bytes;
    if (this.units.length > this.head) unsent -= this.units[this.head]!.bytes - this.remaining;
    this.units.length = 0;
    this.head = 0;
    if (this.active) this.network.deactivate(this);
    return unsent;
  }

  /** Bytes queued and not yet sent. */
  get backlogBytes(): number {
    if (!this.active) return 0;
    this.settle();
    let bytes = this.remaining;
    for (let i = this.head + 1; i < this.units.length; i++) bytes += this.units[i]!.bytes;
    return bytes;
  }

  /** Bytes of the head unit already sent (for an HTTP abort). */
  get headSentBytes(): number {
    if (!this.active) return 0;
    this.settle();
    return this.units[this.head]!.bytes - this.remaining;
  }

  /** Accounts the bytes sent since the last rate change. */
  settle(): void {
    const now = this.network.clock.now();
    if (this.rate === Infinity) this.remaining = 0;
    else if (this.rate > 0) this.remaining = Math.max(0, this.remaining - (this.rate * (now - this.lastMs)) / 1000);
    this.lastMs = now;
  }

  /** Called by the network after settle() with the flow's new rate. */
  setRate(rate: number): void {
    if (rate === this.rate && this.completion) return;
    this.rate = rate;
    this.reschedule();
  }

  private reschedule(): void {
    const clock = this.network.clock;
    if (this.completion) clock.clearTimeout(this.completion);
    this.completion = undefined;
    if (!this.active || this.rate <= 0) return;
    const delayMs = this.rate === Infinity ? 0 : (this.remaining / this.rate) * 1000;
    this.completion = clock.at(clock.now() + delayMs, () => this.unitSent());
  }

  private unitSent(): void {
    this.completion = undefined;
    this.settle();
    const unit = this.units[this.head++]!;
    if (this.head === this.units.length) {
      this.units.length = 0;
      this.head = 0;
      this.network.deactivate(this);
    } else {
      if (this.head > 1024) {
        this.units.splice(0, this.head);
        this.head = 0;
      }
      this.remaining = this.units[this.head]!.bytes;
      this.reschedule();
    }
    unit.onSent();
  }

  /** Internal: set when the network (de)activates the flow. */
  resetClock(): void {
    this.lastMs = this.network.clock.now();
  }
}

export class FlowNetwork {
  /** Rate recomputations, for profiling. */
  reshares = 0;

  constructor(
    readonly clock: VirtualClock,
    /** What the wire carries besides payload; undefined: nothing (payload only). */
    readonly wireOverhead?: WireOverhead,
  ) {}

  /** What the sender side allows a flow: its share of the sender's uplink, and the source's own cap. */
  private senderCap(pipe: Pipe, extra = 0): number {
    const source = pipe.source;
    if (!source) return pipe.sourceBytesPerS;
    return Math.min(pipe.sourceBytesPerS, source.capacity.upBytesPerS / (source.uplink.size + extra));
  }

  rateFor(pipe: Pipe, includingSelf = false): number {
    const extra = includingSelf && !pipe.active ? 1 : 0;
    return Math.min(this.senderCap(pipe, extra), pipe.target.capacity.downBytesPerS / (pipe.target.downlink.size + extra));
  }

  activate(pipe: Pipe): void {
    pipe.active = true;
    pipe.resetClock();
    pipe.source?.uplink.add(pipe);
    pipe.target.downlink.add(pipe);
    this.reshare(pipe);
  }

  deactivate(pipe: Pipe): void {
    pipe.active = false;
    pipe.setRate(0);
    pipe.source?.uplink.delete(pipe);
    pipe.target.downlink.delete(pipe);
    this.reshare(pipe);
  }

  /** A host's capacity changed (e.g. its uplink was cut): recompute its flows. */
  capacityChanged(host: SimHost): void {
    const downlinks = new Set<SimHost>([host]);
    for (const pipe of host.uplink) downlinks.add(pipe.target);
    for (const target of downlinks) this.fillDownlink(target);
  }

  /**
   * A flow started or ended: the sender's uplink shares changed (so the caps of its flows, on
   * their receivers' downlinks) and the receiver's downlink has one flow more or less. Each
   * downlink is filled once, the changed flow's first, then in the order of the sender's flows.
   */
  private reshare(changed: Pipe): void {
    const stamp = ++this.reshares;
    changed.target.reshareStamp = stamp;
    this.fillDownlink(changed.target);
    if (!changed.source) return;
    for (const pipe of changed.source.uplink) {
      if (pipe.target.reshareStamp === stamp) continue;
      pipe.target.reshareStamp = stamp;
      this.fillDownlink(pipe.target);
    }
  }

  /** Scratch for fillDownlink (one downlink at a time), kept to spare an allocation per fill. */
  private readonly fillPipes: Pipe[] = [];
  private readonly fillCaps: number[] = [];

  /**
   * Max-min fair sharing of one downlink (water-filling): a flow held below its fair share by its
   * sender's uplink leaves the rest to the others, e.g. an HTTP download beside slow peers. Flows
   * are served from the smallest cap up, flows with equal caps in the order they joined.
   */
  private fillDownlink(target: SimHost): void {
    const count = target.downlink.size;
    if (count === 0) return;
    if (count === 1) {
      for (const pipe of target.downlink) {
        pipe.settle();
        pipe.setRate(Math.min(this.senderCap(pipe), target.capacity.downBytesPerS));
      }
      return;
    }
    // A stable insertion sort by cap (a downlink carries a handful of flows).
    const pipes = this.fillPipes;
    const caps = this.fillCaps;
    let n = 0;
    for (const pipe of target.downlink) {
      const cap = this.senderCap(pipe);
      let i = n++;
      while (i > 0 && caps[i - 1]! > cap) {
        caps[i] = caps[i - 1]!;
        pipes[i] = pipes[i - 1]!;
        i--;
      }
      caps[i] = cap;
      pipes[i] = pipe;
    }
    let remaining = target.capacity.downBytesPerS;
    let left = n;
    for (let k = 0; k < n; k++) {
      const rate = Math.min(caps[k]!, remaining / left);
      // An unlimited downlink stays unlimited (Infinity - Infinity would be NaN).
      if (remaining !== Infinity) remaining = Math.max(0, remaining - rate);
      left--;
      const pipe = pipes[k]!;
      pipe.settle();
      pipe.setRate(rate);
    }
    pipes.length = 0;
  }
}
