import { describe, expect, it } from 'vitest';
import { parseFrameMessage } from '../src/frame-protocol.js';

describe('parseFrameMessage', () => {
  it('accepts the three message kinds', () => {
    expect(parseFrameMessage({ shoal: 'player', kind: 'command', id: 1, command: 'seek', args: { time: 3 } })).toMatchObject({ command: 'seek' });
    expect(parseFrameMessage({ shoal: 'player', kind: 'response', id: 1, ok: true, result: null })).toMatchObject({ ok: true });
    expect(parseFrameMessage({ shoal: 'player', kind: 'event', event: 'stats', data: {} })).toMatchObject({ event: 'stats' });
  });
  it.each([
    ['another page’s message', { type: 'resize', height: 300 }],
    ['a string', 'play'],
    ['an unknown command', { shoal: 'player', kind: 'command', id: 1, command: 'eval' }],
    ['a command without id', { shoal: 'player', kind: 'command', command: 'play' }],
    ['an unknown event', { shoal: 'player', kind: 'event', event: 'hacked' }],
    ['a response without ok', { shoal: 'player', kind: 'response', id: 2 }],
  ])('ignores %s', (_name, data) => {
    expect(parseFrameMessage(data)).toBeUndefined();
  });
});
