// Firefox for the browser tests and the swarms: Debian's firefox-esr driven by puppeteer-core over
// WebDriver BiDi (Playwright drives only its own patched Firefox build, which cannot be had here).
import { accessSync, constants } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's Firefox ESR by default; SHOAL_FIREFOX overrides. */
export function firefoxPath(): string {
  return process.env.SHOAL_FIREFOX ?? '/usr/bin/firefox-esr';
}

/** Throws one clear sentence when Firefox is missing, instead of a launcher's stack trace. */
export function assertFirefox(): string {
  const path = firefoxPath();
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`Firefox not found at ${path}. Install it (Debian: apt-get install -y firefox-esr) or point SHOAL_FIREFOX at a Firefox binary.`);
  }
  return path;
}

/**
 * Preferences for many viewers on one machine. WebDriver BiDi cannot grant camera permission,
 * which is what makes Firefox offer plain host candidates; instead: loopback candidates allowed
 * (pages on one machine meet over 127.0.0.1) and host addresses not hidden behind mDNS names
 * (nothing resolves them in a network namespace). Firefox also gathers no candidate at all in a
 * namespace without a default route: scripts/netns.mjs and the swarm add one.
 */
export const firefoxPrefs: Readonly<Record<string, unknown>> = {
  'media.peerconnection.ice.loopback': true,
  'media.peerconnection.ice.obfuscate_host_addresses': false,
  'media.autoplay.default': 0,
  'media.autoplay.blocking_policy': 0,
  // Firefox's own background traffic (updates, telemetry, safe browsing) has nowhere to go here.
  'app.update.enabled': false,
  'toolkit.telemetry.reportingpolicy.firstRun': false,
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
};

export interface FirefoxLaunchOptions {
  /** Preferences on top of firefoxPrefs (e.g. `media.peerconnection.enabled: false`). */
  prefs?: Record<string, unknown>;
  /** The binary to run (default firefoxPath()): a wrapper that enters a network namespace first. */
  executablePath?: string;
  env?: Record<string, string | undefined>;
  /** The port its WebDriver BiDi server listens on, on its loopback (default: one it picks). */
  debuggingPort?: number;
}

/** A headless Firefox with its own fresh profile; close() removes it. */
export function launchFirefox(options: FirefoxLaunchOptions = {}): Promise<Browser> {
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: options.executablePath ?? assertFirefox(),
    headless: true,
    extraPrefsFirefox: { ...firefoxPrefs, ...options.prefs },
    env: { ...process.env, ...options.env },
    ...(options.debuggingPort ? { debuggingPort: options.debuggingPort } : {}),
    // Firefox takes longer than the default 30 s to start on a busy 2-core machine.
    timeout: 90_000,
    // Ctrl-C and SIGTERM go to the runner, which closes its browsers itself.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}
