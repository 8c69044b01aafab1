// An in-process stand-in for RTCPeerConnection, so the tracker client's signaling runs in Node:
// an "SDP" names its connection; once offer and answer are exchanged both data channels open and
// carry copies of the bytes sent, asynchronously, like the real thing.
const connections = new Map<string, FakeRTCPeerConnection>();
let nextId = 0;

type Handler = ((event: any) => void) | null;

export class FakeDataChannel {
  readyState: RTCDataChannelState = 'connecting';
  binaryType = 'blob';
  bufferedAmount = 0;
  bufferedAmountLowThreshold = 0;
  onopen: Handler = null;
  onclose: Handler = null;
  onerror: Handler = null;
  onmessage: Handler = null;
  onbufferedamountlow: Handler = null;
  readonly sent: Uint8Array[] = [];

  constructor(
    private readonly owner: FakeRTCPeerConnection,
    readonly init: RTCDataChannelInit | undefined,
  ) {}

  send(data: Uint8Array | string): void {
    if (this.readyState !== 'open') throw new Error('InvalidStateError: channel not open');
    const remote = this.owner.remote?.channel;
    const payload = typeof data === 'string' ? data : data.slice().buffer;
    if (typeof data !== 'string') this.sent.push(data.slice());
    setTimeout(() => remote?.readyState === 'open' && remote.onmessage?.({ data: payload }), 0);
  }

  close(): void {
    if (this.readyState === 'closed') return;
    this.readyState = 'closed';
    setTimeout(() => this.onclose?.({}), 0);
  }

  open(): void {
    if (this.readyState !== 'connecting') return;
    this.readyState = 'open';
    this.onopen?.({});
  }
}

export class FakeRTCPeerConnection extends EventTarget {
  static created: FakeRTCPeerConnection[] = [];
  /** The next connections created fail ICE instead of connecting. */
  static failIce = false;

  readonly id = String(++nextId);
  iceGatheringState: RTCIceGatheringState = 'new';
  iceConnectionState: RTCIceConnectionState = 'new';
  localDescription: RTCSessionDescriptionInit | null = null;
  remoteDescription: RTCSessionDescriptionInit | null = null;
  oniceconnectionstatechange: Handler = null;
  channel: FakeDataChannel | undefined;
  remote: FakeRTCPeerConnection | undefined;
  closed = false;
  private readonly failIce = FakeRTCPeerConnection.failIce;

  constructor(readonly configuration: RTCConfiguration) {
    super();
    FakeRTCPeerConnection.created.push(this);
    connections.set(this.id, this);
  }

  createDataChannel(_label: string, init?: RTCDataChannelInit): FakeDataChannel {
    return (this.channel = new FakeDataChannel(this, init));
  }

  async createOffer(): Promise<RTCSessionDescriptionInit> {
    return { type: 'offer', sdp: `fake ${this.id}` };
  }

  async createAnswer(): Promise<RTCSessionDescriptionInit> {
    if (!this.remoteDescription) throw new Error('InvalidStateError: no remote offer');
    return { type: 'answer', sdp: `fake ${this.id}` };
  }

  async setLocalDescription(description: RTCSessionDescriptionInit): Promise<void> {
    this.localDescription = description;
    this.iceGatheringState = 'gathering';
    setTimeout(() => {
      this.iceGatheringState = 'complete';
      this.dispatchEvent(new Event('icegatheringstatechange'));
      this.maybeConnect();
    }, 1);
  }

  async setRemoteDescription(description: RTCSessionDescriptionInit): Promise<void> {
    const remote = connections.get(/^fake (\d+)$/.exec(description.sdp ?? '')?.[1] ?? '');
    if (!remote) throw new Error('OperationError: could not parse the SDP');
    this.remoteDescription = description;
    this.remote = remote;
    this.maybeConnect();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.channel?.close();
    connections.delete(this.id);
    // The remote side notices: its channel closes too.
    const remoteChannel = this.remote?.remote === this ? this.remote.channel : undefined;
    if (remoteChannel?.readyState === 'open') remoteChannel.close();
  }

  private maybeConnect(): void {
    const remote = this.remote;
    if (!remote || remote.remote !== this || this.iceGatheringState !== 'complete' || remote.iceGatheringState !== 'complete') return;
    setTimeout(() => {
      for (const side of [this, remote]) {
        if (side.closed) continue;
        side.iceConnectionState = side.failIce || remote.failIce || this.failIce ? 'failed' : 'connected';
        side.oniceconnectionstatechange?.({});
        if (side.iceConnectionState === 'connected') side.channel?.open();
      }
    }, 1);
  }
}
