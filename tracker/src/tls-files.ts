// The TLS certificate and key are checked here before uWS reads them: uWS reports any problem
// with either as "App construction failed", naming neither the file nor what is wrong with it.

import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';

function readPem(field: 'cert' | 'key', file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory, not a file' : (error as Error).message;
    throw new ConfigError(`\`${field}\`: cannot read ${file}: ${why}`);
  }
}

function parseCertificate(file: string, pem: string): X509Certificate {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`\`cert\`: ${file} holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" line)`);
  }
  try {
    return new X509Certificate(pem);
  } catch (error) {
    throw new ConfigError(`\`cert\`: ${file} is not a valid PEM certificate: ${(error as Error).message}`);
  }
}

function parseKey(file: string, pem: string): KeyObject {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError(`\`key\`: ${file} holds no PEM private key (no "-----BEGIN … PRIVATE KEY-----" line)`);
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw new ConfigError(`\`key\`: ${file} is encrypted with a passphrase, which the tracker cannot give; decrypt it: openssl pkey -in ${file} -out key-plain.pem`);
  }
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new ConfigError(`\`key\`: ${file} is not a valid PEM private key: ${(error as Error).message}`);
  }
}

/** Throws a ConfigError naming the file and the fault when the pair cannot serve TLS. */
export function checkTlsFiles(cert: string, key: string): void {
  const certificate = parseCertificate(cert, readPem('cert', cert));
  const privateKey = parseKey(key, readPem('key', key));
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`\`key\`: ${key} is not the private key of the certificate in ${cert}`);
  }
}
