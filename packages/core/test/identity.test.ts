import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { infoHash, infoHashHex, sha1, streamKey, swarmIdFromUrl, toHex, utf8 } from '../src/identity.js';

const nodeSha1 = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex');

describe('identity', () => {
  it('computes SHA-1 like node:crypto for the FIPS vectors and every padding boundary', () => {
    expect(toHex(sha1(utf8('abc')))).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(toHex(sha1(utf8('')))).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    for (let length = 0; length < 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(toHex(sha1(bytes)), `length ${length}`).toBe(nodeSha1(bytes));
    }
    const large = new Uint8Array(1_000_003).fill(0x61);
    expect(toHex(sha1(large))).toBe(nodeSha1(large));
  });

  it('strips query and fragment from the manifest URL to get the swarm id', () => {
    expect(swarmIdFromUrl('https://cdn.example/live/master.m3u8?token=abc#t=3')).toBe('https://cdn.example/live/master.m3u8');
    expect(swarmIdFromUrl('https://cdn.example/vod/master.m3u8')).toBe('https://cdn.example/vod/master.m3u8');
  });

  it('gives the same stream key for the same rendition attributes whatever the variant order', () => {
    const swarm = 'https://cdn.example/live/master.m3u8';
    const hd = { bandwidth: 5_000_000, resolution: '1920x1080', codecs: 'avc1.640028,mp4a.40.2', audioGroup: 'aud', name: '1080p' };
    const sd = { bandwidth: 800_000, resolution: '640x360', codecs: 'avc1.4d401e,mp4a.40.2', audioGroup: 'aud', name: '360p' };
    const reordered = { name: '1080p', audioGroup: 'aud', codecs: 'avc1.640028,mp4a.40.2', resolution: '1920x1080', bandwidth: 5_000_000 };
    expect(streamKey(swarm, hd)).toBe(streamKey(swarm, reordered));
    expect(streamKey(swarm, hd)).not.toBe(streamKey(swarm, sd));
    expect(streamKey(swarm, hd)).not.toBe(streamKey('https://other.example/master.m3u8', hd));
  });

  it('derives the info_hash as SHA-1 of the stream key, a 20-character binary string', () => {
    const key = streamKey('https://cdn.example/live/master.m3u8', { bandwidth: 800_000 });
    const hash = infoHash(key);
    expect(hash).toHaveLength(20);
    expect(Buffer.from(hash, 'latin1').toString('hex')).toBe(createHash('sha1').update(key, 'utf8').digest('hex'));
    expect(infoHashHex(key)).toBe(Buffer.from(hash, 'latin1').toString('hex'));
  });
});
