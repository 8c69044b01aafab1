// The tracker connection after an outage, with the default options, on the virtual clock: however
// long the tracker was away, a peer is back soon after it returns (the swarm re-meets within the
// 20 s after it that issue 15 asks for).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SIGNALING_OPTIONS, type WebSocketLike } from '../src/webrtc/signaling-options.js';
import { TrackerSocket } from '../src/webrtc/tracker-socket.js';
import { VirtualClock } from '@shoal/sim/kit';

function trackerThatIsAway(clock: VirtualClock) {
  const state = { up: false, attempts: [] as number[], openedAtMs: null as number | null };
  class FakeWebSocket implements WebSocketLike {
    onopen: WebSocketLike['onopen'] = null;
    onmessage: WebSocketLike['onmessage'] = null;
    onclose: WebSocketLike['onclose'] = null;
    onerror: WebSocketLike['onerror'] = null;
    constructor() {
      state.attempts.push(clock.now());
      clock.setTimeout(() => {
        if (!state.up) return this.onclose?.({ code: 1006 });
        state.openedAtMs ??= clock.now();
        this.onopen?.({});
      }, 10);
    }
    send() {}
    close() {}
  }
  return { state, FakeWebSocket };
}

afterEach(() => vi.restoreAllMocks());

describe('tracker reconnect with the default options', () => {
  it('is back within 10 s of the tracker returning, even after a long outage', async () => {
    // The longest draw of the jitter: the latest each attempt can come.
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const clock = new VirtualClock();
    const { state, FakeWebSocket } = trackerThatIsAway(clock);
    const { reconnectMinMs, reconnectMaxMs } = DEFAULT_SIGNALING_OPTIONS;
    const socket = new TrackerSocket('ws://tracker.test', { WebSocket: FakeWebSocket, clock, reconnectMinMs, reconnectMaxMs }, { open() {}, message() {}, error() {}, warning() {} });
    // Away 64 s: with a 60 s ceiling the attempt after the one at ~63 s would come a minute later.
    await clock.advance(64_000);
    state.up = true;
    await clock.advance(60_000);
    expect(state.openedAtMs).not.toBeNull();
    expect(state.openedAtMs! - 64_000).toBeLessThanOrEqual(10_000 + 10);
    socket.destroy();
  });
});
