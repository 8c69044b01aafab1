import { accessSync, constants } from 'node:fs';

/** Debian's Chromium by default; SHOAL_CHROMIUM overrides. */
export function chromiumPath(): string {
  return process.env.SHOAL_CHROMIUM ?? '/usr/bin/chromium';
}

/** Throws one clear sentence when Chromium is missing, instead of a Playwright stack trace. */
export function assertChromium(): string {
  const path = chromiumPath();
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium not found at ${path}. Install it (Debian/Ubuntu: apt-get install -y chromium) ` +
        'or point SHOAL_CHROMIUM at a Chromium/Chrome binary.',
    );
  }
  return path;
}

/**
 * Flags for many viewers on one machine. WebRTC between pages needs loopback candidates:
 * --allow-loopback-in-peer-connection plus camera/microphone permission on each context
 * (no device is opened), and mDNS candidate hiding off.
 */
export const chromiumArgs: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--autoplay-policy=no-user-gesture-required',
  '--disable-features=WebRtcHideLocalIpsWithMdns',
  '--allow-loopback-in-peer-connection',
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];

export function chromiumLaunchOptions(): { executablePath: string; args: string[]; headless: boolean } {
  return { executablePath: assertChromium(), args: [...chromiumArgs], headless: true };
}
