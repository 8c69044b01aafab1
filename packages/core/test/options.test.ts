import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, resolveOptions } from '../src/options.js';
import { ShoalError } from '../src/errors.js';

describe('options', () => {
  it('fills every field from the defaults', () => {
    expect(resolveOptions()).toEqual(DEFAULT_OPTIONS);
    expect(resolveOptions({ maxPeers: 20, latencyMode: 'high' })).toMatchObject({ maxPeers: 20, latencyMode: 'high', upload: true });
  });

  it.each([
    [{ latencyMode: 'fast' }, 'options.latencyMode'],
    [{ maxPeers: -1 }, 'options.maxPeers'],
    [{ maxPeers: 2.5 }, 'options.maxPeers'],
    [{ uploadRateLimitBytesPerS: Number.NaN }, 'options.uploadRateLimitBytesPerS'],
    [{ storeBytesLimit: 0 }, 'options.storeBytesLimit'],
    [{ upload: 'yes' }, 'options.upload'],
    [{ httpSafetyFactor: 0.5 }, 'options.httpSafetyFactor'],
    [{ seedersPerSegment: 0 }, 'options.seedersPerSegment'],
    [{ validateSegment: 'sha' }, 'options.validateSegment'],
    [{ maxPeers: 3, targetPeers: 5 }, 'options.targetPeers'],
    [{ maxpeers: 3 }, 'options.maxpeers is not an option'],
  ])('rejects %j with a message naming the field', (input, field) => {
    expect(() => resolveOptions(input as never)).toThrow(ShoalError);
    expect(() => resolveOptions(input as never)).toThrow(field);
  });
});
