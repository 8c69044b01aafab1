// One WebRTC peer: an RTCPeerConnection with one pre-negotiated, ordered, reliable, binary data
// channel, exposed as a PeerTransport. Signaling is not trickled: the tracker relays exactly one
// offer and one answer, so each carries every ICE candidate gathered by then.
import type { Clock, PeerTransport, PeerTransportEvents, TimerId } from '../types.js';
import type { RTCPeerConnectionConstructor } from './signaling-options.js';

export interface RtcPeerOptions {
  RTCPeerConnection: RTCPeerConnectionConstructor;
  iceServers: RTCIceServer[];
  iceGatheringTimeoutMs: number;
  bufferedAmountLowThreshold: number;
  clock: Clock;
  /** Once, when the data channel opens. */
  onOpen(peer: RtcPeer): void;
  /** Once, when the peer closes, opened or not; `failed` is false for our own close(). */
  onClose(peer: RtcPeer, reason: string, failed: boolean): void;
}

/** An RTC session description as it travels through the tracker. */
export interface SessionDescription {
  type: 'offer' | 'answer';
  sdp: string;
}

export const isSessionDescription = (value: unknown, type: SessionDescription['type']): value is SessionDescription =>
  typeof value === 'object' && value !== null &&
  (value as SessionDescription).type === type && typeof (value as SessionDescription).sdp === 'string';

export class RtcPeer implements PeerTransport {
  /** 40 hex characters; known once the offer or answer names the remote peer. */
  remotePeerId = '';
  opened = false;
  closed = false;
  private readonly connection: RTCPeerConnection;
  private readonly channel: RTCDataChannel;
  private events: PeerTransportEvents | undefined;
  private readonly queued: Uint8Array[] = [];
  private closeReason = '';
  private deadline: TimerId | undefined;
  private disconnectedTimer: TimerId | undefined;
  private stopGathering: (() => void) | undefined;

  constructor(
    /** Whether we made the offer. */
    readonly initiator: boolean,
    private readonly options: RtcPeerOptions,
  ) {
    const connection = (this.connection = new options.RTCPeerConnection({ iceServers: options.iceServers }));
    // Negotiated with a fixed id: both sides have the channel at once, no `datachannel` event to wait for.
    const channel = (this.channel = connection.createDataChannel('shoal', { negotiated: true, id: 0 }));
    channel.binaryType = 'arraybuffer';
    channel.bufferedAmountLowThreshold = options.bufferedAmountLowThreshold;
    channel.onopen = () => {
      if (this.closed) return;
      this.opened = true;
      this.setDeadline(undefined);
      options.onOpen(this);
    };
    channel.onclose = () => this.fail('the data channel closed');
    channel.onerror = (event) => this.fail(`data channel error: ${(event as RTCErrorEvent).error?.message ?? 'unknown'}`);
    channel.onmessage = ({ data }: MessageEvent) => {
      if (!(data instanceof ArrayBuffer)) return this.fail('protocol violation: a text message on the data channel');
      const bytes = new Uint8Array(data);
      if (this.events) this.events.message(bytes);
      else this.queued.push(bytes);
    };
    channel.onbufferedamountlow = () => this.events?.drain();
    connection.oniceconnectionstatechange = () => {
      const state = connection.iceConnectionState;
      if (state === 'failed') this.fail('ICE failed (no route between the peers: configure STUN/TURN in iceServers)');
      // 'disconnected' may recover by itself; a connection that stays there is as good as gone.
      options.clock.clearTimeout(this.disconnectedTimer);
      if (state === 'disconnected') {
        this.disconnectedTimer = options.clock.setTimeout(() => this.fail('ICE disconnected for 5 s'), 5000);
      }
    };
  }

  /** What the SCTP association carries in one message, as the two sides agreed (0 or absent in the SDP: unknown). */
  get maxMessageBytes(): number | undefined {
    const size = this.connection.sctp?.maxMessageSize;
    return typeof size === 'number' && size > 0 ? size : undefined;
  }

  get bufferedAmount(): number {
    return this.closed ? 0 : this.channel.bufferedAmount;
  }

  /** Creates the offer and waits for ICE gathering (or its timeout). */
  async createOffer(): Promise<SessionDescription> {
    await this.connection.setLocalDescription(await this.connection.createOffer());
    return this.gathered();
  }

  /** Accepts a remote offer; returns the answer once ICE gathering is done (or timed out). */
  async acceptOffer(offer: SessionDescription): Promise<SessionDescription> {
    await this.connection.setRemoteDescription(offer);
    await this.connection.setLocalDescription(await this.connection.createAnswer());
    return this.gathered();
  }

  async acceptAnswer(answer: SessionDescription): Promise<void> {
    await this.connection.setRemoteDescription(answer);
  }

  /** Fails the peer if it is not open `ms` from now (`undefined`: no deadline). */
  setDeadline(ms: number | undefined, reason = ''): void {
    this.options.clock.clearTimeout(this.deadline);
    this.deadline = ms === undefined ? undefined : this.options.clock.setTimeout(() => this.fail(reason), ms);
  }

  send(data: Uint8Array): void {
    if (this.closed || this.channel.readyState !== 'open') return;
    try {
      this.channel.send(data as Uint8Array<ArrayBuffer>);
    } catch (error) {
      this.fail(`send failed: ${(error as Error).message}`);
    }
  }

  setEvents(events: PeerTransportEvents): void {
    this.events = events;
    for (const bytes of this.queued.splice(0)) {
      if (this.events !== events) return;
      events.message(bytes);
    }
    if (this.closed) events.close(this.closeReason);
  }

  close(): void {
    this.shutDown('closed locally', false);
  }

  fail(reason: string): void {
    this.shutDown(reason, true);
  }

  private shutDown(reason: string, failed: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    this.setDeadline(undefined);
    this.options.clock.clearTimeout(this.disconnectedTimer);
    this.stopGathering?.();
    const { channel, connection } = this;
    channel.onopen = channel.onclose = channel.onerror = channel.onmessage = channel.onbufferedamountlow = null;
    connection.oniceconnectionstatechange = null;
    try {
      channel.close();
      connection.close();
    } catch {
      // Already closed by the browser: nothing left to release.
    }
    this.options.onClose(this, reason, failed);
    this.events?.close(reason);
  }

  private gathered(): Promise<SessionDescription> {
    const { connection, options } = this;
    return new Promise((resolve, reject) => {
      const done = () => {
        options.clock.clearTimeout(timer);
        connection.removeEventListener('icegatheringstatechange', check);
        this.stopGathering = undefined;
        const description = connection.localDescription;
        if (this.closed || !description) reject(new Error(`peer closed: ${this.closeReason}`));
        else resolve({ type: description.type as SessionDescription['type'], sdp: description.sdp });
      };
      const check = () => {
        if (connection.iceGatheringState === 'complete') done();
      };
      this.stopGathering = done;
      const timer = options.clock.setTimeout(done, options.iceGatheringTimeoutMs);
      connection.addEventListener('icegatheringstatechange', check);
      check();
    });
  }
}
