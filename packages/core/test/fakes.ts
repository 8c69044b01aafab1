// Test doubles for the engine's injected interfaces, on the testing kit's virtual clock: an origin
// serving files with byte counters and a throughput model, and a tracker hub that links engines
// with the kit's simulated data channels (latency, bandwidth, bufferedAmount, drain). A live
// stream and its players come from the kit (SimOrigin, PlayerModel: see live-swarm.ts).
import { afterEach } from 'vitest';
import type { ShoalEngine } from '../src/engine.js';
import { ShoalError } from '../src/errors.js';
import { linkTransports, type LinkOptions, type SimChannelEnd, type VirtualClock } from '@shoal/sim/kit';
import type {
  HttpClient,
  HttpRequest,
  HttpTransfer,
  SegmentRef,
  Signaling,
  SignalingEvents,
  SwarmSignal,
  TimerId,
} from '../src/types.js';

/**
 * Engine options for tests about transfers rather than pacing: uploads start at full speed
 * instead of the governor's conservative start (upload-governor.test.ts covers that).
 */
export const UNPACED = { initialUploadPaceBytesPerS: 64 * 1024 * 1024 } as const;

export interface OriginRequest {
  url: string;
  range: { start: number; end: number } | undefined;
  atMs: number;
  /** A HEAD request. */
  head?: boolean;
}

/**
 * A static file server at a fixed throughput, in 64 KiB chunks, logging every request (URL, Range,
 * time) and counting every byte it sends. Unit tests script it file by file: a URL that 404s, a
 * file that changes (a manifest published late), a corrupt copy. Not a live origin: the kit's
 * SimOrigin is the one live stream (a timeline, renditions, a manifest of what is published).
 */
export class FakeOrigin implements HttpClient {
  readonly files = new Map<string, Uint8Array>();
  /** Response headers by URL (lower-case names), e.g. a Repr-Digest. */
  readonly headers = new Map<string, Record<string, string>>();
  readonly requests: OriginRequest[] = [];
  bytesServed = 0;
  latencyMs = 20;

  constructor(
    private readonly clock: VirtualClock,
    public bytesPerS = 2_000_000,
  ) {}

  fetch(request: HttpRequest): HttpTransfer {
    this.requests.push({ url: request.url, range: request.range, atMs: this.clock.now(), ...(request.head ? { head: true } : {}) });
    let timer: TimerId | undefined;
    let rejectBody!: (error: Error) => void;
    const body = new Promise<Uint8Array>((resolve, reject) => {
      rejectBody = reject;
      const file = this.files.get(request.url);
      if (!file) {
        timer = this.clock.setTimeout(() => reject(new ShoalError('HTTP_STATUS', `${request.url}: HTTP 404`)), this.latencyMs);
        return;
      }
      const bytes = request.head ? new Uint8Array(0) : request.range ? file.subarray(request.range.start, request.range.end) : file;
      let sent = 0;
      let told = false;
      const chunkBytes = 64 * 1024;
      const sendNext = () => {
        if (!told) request.onHeaders?.((name) => this.headers.get(request.url)?.[name.toLowerCase()] ?? null);
        told = true;
        const chunk = bytes.slice(sent, Math.min(sent + chunkBytes, bytes.length));
        sent += chunk.length;
        this.bytesServed += chunk.length;
        request.onData?.(chunk);
        if (sent >= bytes.length) resolve(bytes.slice());
        else timer = this.clock.setTimeout(sendNext, (Math.min(chunkBytes, bytes.length - sent) / this.bytesPerS) * 1000);
      };
      timer = this.clock.setTimeout(sendNext, this.latencyMs + (Math.min(chunkBytes, bytes.length) / this.bytesPerS) * 1000);
    });
    body.catch(() => {});
    return {
      body,
      abort: () => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        rejectBody(new ShoalError('ABORTED', `${request.url}: aborted`));
      },
    };
  }

  requestsFor(url: string): OriginRequest[] {
    return this.requests.filter((request) => request.url === url);
  }
}

interface Member {
  peerId: string;
  events: SignalingEvents;
  left: boolean;
}

/** A tracker for tests: every join and requestPeers links the peer to swarm members it lacks. */
export class FakeTracker {
  readonly swarms = new Map<string, Member[]>();
  readonly links = new Map<string, SimChannelEnd[]>();
  joins = 0;
  peerRequests = 0;
  link: LinkOptions = { bytesPerS: 4_000_000, latencyMs: 10 };

  constructor(private readonly clock: VirtualClock) {}

  signaling(peerId: string): FakeSignaling {
    return new FakeSignaling(peerId, this);
  }

  join(infoHash: string, member: Member): void {
    this.joins++;
    const members = this.swarms.get(infoHash) ?? [];
    members.push(member);
    this.swarms.set(infoHash, members);
    this.connect(infoHash, member);
  }

  connect(infoHash: string, member: Member): void {
    for (const other of this.swarms.get(infoHash) ?? []) {
      if (other === member || other.left || member.left) continue;
      const key = [member.peerId, other.peerId].sort().join('|') + infoHash;
      if (this.links.has(key)) continue;
      const [mine, theirs] = linkTransports(this.clock, member.peerId, other.peerId, this.link);
      this.links.set(key, [mine, theirs]);
      // Signaling takes a round trip before the channel opens.
      this.clock.setTimeout(() => {
        if (!member.left) member.events.peer(mine);
        if (!other.left) other.events.peer(theirs);
      }, this.link.latencyMs * 2);
    }
  }
}

export class FakeSignaling implements Signaling {
  destroyed = false;
  readonly swarms: { infoHash: string; left: boolean }[] = [];

  constructor(
    readonly localPeerId: string,
    private readonly tracker: FakeTracker,
  ) {}

  join(infoHash: string, events: SignalingEvents): SwarmSignal {
    const member: Member = { peerId: this.localPeerId, events, left: false };
    const record = { infoHash, left: false };
    this.swarms.push(record);
    this.tracker.join(infoHash, member);
    return {
      requestPeers: () => {
        this.tracker.peerRequests++;
        this.tracker.connect(infoHash, member);
      },
      leave: () => {
        member.left = true;
        record.left = true;
      },
    };
  }

  destroy(): void {
    this.destroyed = true;
  }
}

export const peerId = (n: number) => n.toString(16).padStart(40, '0');

/** A playlist of `count` 2-second segments with deterministic contents, served by the origin. */
export function makeSegments(origin: FakeOrigin, streamKey: string, count: number, sizeBytes = 200_000, first = 0): SegmentRef[] {
  return Array.from({ length: count }, (_, i) => {
    const sequence = first + i;
    const url = `https://origin.test/${encodeURIComponent(streamKey)}/seg${sequence}.ts`;
    if (!origin.files.has(url)) {
      origin.files.set(url, Uint8Array.from({ length: sizeBytes }, (_, j) => (j * 31 + sequence * 7 + (j >> 8)) & 0xff));
    }
    return { streamKey, sequence, url, startS: sequence * 2, durationS: 2 };
  });
}

/** Signaling whose peers the test hands over by hand (for scripted, hostile peers). */
export class ManualSignaling implements Signaling {
  destroyed = false;
  events: SignalingEvents | undefined;
  peerRequests = 0;

  constructor(readonly localPeerId: string) {}

  join(_infoHash: string, events: SignalingEvents): SwarmSignal {
    this.events = events;
    return { requestPeers: () => this.peerRequests++, leave: () => (this.events = undefined) };
  }

  destroy(): void {
    this.destroyed = true;
  }
}

/** The engines a test file makes: push each one here; every one is destroyed after each test. */
export function enginesDestroyedAfterEach(): ShoalEngine[] {
  const engines: ShoalEngine[] = [];
  afterEach(() => {
    for (const engine of engines.splice(0)) engine.destroy();
  });
  return engines;
}
