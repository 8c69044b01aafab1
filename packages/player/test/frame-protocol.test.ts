import { describe, expect, it } from 'vitest';
import { frameCommands, isFrameCommand, parseFrameMessage } from '../src/frame-protocol.js';

describe('parseFrameMessage', () => {
  it('accepts the three message kinds', () => {
    expect(parseFrameMessage({ shoal: 'player', kind: 'command', id: 1, command: 'seek', args: { time: 3 } })).toMatchObject({ command: 'seek', id: 1, args: { time: 3 } });
    expect(parseFrameMessage({ shoal: 'player', kind: 'response', id: 1, ok: true, result: null })).toMatchObject({ ok: true });
    expect(parseFrameMessage({ shoal: 'player', kind: 'event', event: 'stats', data: {} })).toMatchObject({ event: 'stats' });
  });
  it.each([
    ['another page’s message', { type: 'resize', height: 300 }],
    ['a string', 'play'],
    ['an unknown event', { shoal: 'player', kind: 'event', event: 'hacked' }],
    ['a response without ok', { shoal: 'player', kind: 'response', id: 2 }],
  ])('ignores %s', (_name, data) => {
    expect(parseFrameMessage(data)).toBeUndefined();
  });
  it('keeps commands it does not know, and commands without an id, for the frame to answer', () => {
    expect(parseFrameMessage({ shoal: 'player', kind: 'command', id: 4, command: 'isPlayng' })).toEqual({ shoal: 'player', kind: 'command', id: 4, command: 'isPlayng', args: undefined });
    expect(parseFrameMessage({ shoal: 'player', kind: 'command', command: 'play' })).toMatchObject({ id: null, command: 'play' });
    expect(parseFrameMessage({ shoal: 'player', kind: 'command', id: '7', command: 42 })).toMatchObject({ id: null, command: 42 });
    expect(parseFrameMessage({ shoal: 'player', kind: 'response', id: null, ok: false, error: { code: 'INVALID_COMMAND', message: 'x' } })).toMatchObject({ id: null, ok: false });
  });
  it('knows the commands PeerTube’s embed API has beside its own', () => {
    for (const name of ['isPlaying', 'destroy', 'getCaptions', 'setCaption', 'getPlaybackRates', 'setResolution']) expect(isFrameCommand(name)).toBe(true);
    expect(frameCommands).toContain('hello');
    for (const name of ['isPlayng', 'constructor', 'toString', '__proto__', 42, undefined]) expect(isFrameCommand(name)).toBe(false);
  });
});
