// TLS files that cannot serve: uWS says only "App construction failed"; the tracker names the
// file and what is wrong with it, at start (one thread or several) and on a reload.

import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import tls from 'node:tls';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCliToExit } from './support/processes.js';
import { startShoal } from './support/trackers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let dir = '';
const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });

// P-256 keys: quick to make on a busy machine, where RSA keys can take seconds each.
const ecKey = ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'shoal-tracker-tls-files-'));
  openssl('genpkey', ...ecKey, '-out', file('key.pem'));
  openssl('req', '-x509', '-key', file('key.pem'), '-out', file('cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1');
  openssl('genpkey', ...ecKey, '-out', file('other-key.pem'));
  openssl('genpkey', ...ecKey, '-aes256', '-pass', 'pass:secret', '-out', file('encrypted-key.pem'));
  writeFileSync(file('garbage.pem'), 'this is not a certificate\n');
}, 30_000);

describe('TLS files at start', () => {
  it('names a garbage certificate and what is wrong with it, with one thread and with several, and exits 1', async () => {
    for (const workers of ['1', '2']) {
      const run = await runCliToExit(['--host', '127.0.0.1', '--port', '0', '--workers', workers, '--log-level', 'silent', '--cert', file('garbage.pem'), '--key', file('key.pem')]);
      expect(run.exit).toBe(1);
      expect(run.stderr).toBe(`shoal-tracker: \`cert\`: ${file('garbage.pem')} holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" line)\n`);
      expect(run.stderr).not.toContain('App construction failed');
    }
  });

  it('names the key that is garbage, encrypted, or not the certificate\'s, and a file that is missing', async () => {
    const { startTracker } = await import('../src/index.js');
    const start = (cert: string, key: string) => startTracker({ host: '127.0.0.1', port: 0, logLevel: 'silent', cert, key });
    await expect(start(file('cert.pem'), file('garbage.pem'))).rejects.toThrow(`\`key\`: ${file('garbage.pem')} holds no PEM private key`);
    await expect(start(file('cert.pem'), file('encrypted-key.pem'))).rejects.toThrow(`\`key\`: ${file('encrypted-key.pem')} is encrypted with a passphrase`);
    await expect(start(file('cert.pem'), file('other-key.pem'))).rejects.toThrow(`\`key\`: ${file('other-key.pem')} is not the private key of the certificate in ${file('cert.pem')}`);
    await expect(start(file('missing.pem'), file('key.pem'))).rejects.toThrow(`\`cert\`: cannot read ${file('missing.pem')}: no such file`);
    await expect(start(file('key.pem'), file('key.pem'))).rejects.toMatchObject({ code: 'TRACKER_CONFIG', message: expect.stringContaining('holds no PEM certificate') });
  });
});

describe('TLS files on a reload', () => {
  it('keeps serving the old certificate and says which new file is wrong', async () => {
    const cert = file('reload-cert.pem');
    const key = file('reload-key.pem');
    copyFileSync(file('cert.pem'), cert);
    copyFileSync(file('key.pem'), key);
    const tracker = await startShoal({ cert, key });
    cleanups.push(() => tracker.close());
    copyFileSync(file('garbage.pem'), cert);
    await expect(tracker.reloadCertificate()).rejects.toThrow(`\`cert\`: ${cert} holds no PEM certificate`);
    copyFileSync(file('cert.pem'), cert);
    copyFileSync(file('other-key.pem'), key);
    await expect(tracker.reloadCertificate()).rejects.toThrow(`is not the private key of the certificate in ${cert}`);
    const served = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: tracker.port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.once('error', reject);
    });
    expect(served).toBe(new X509Certificate(readFileSync(file('cert.pem'))).fingerprint256);
  });
});
