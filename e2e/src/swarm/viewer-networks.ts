// Per-viewer access networks for browser swarms. Each viewer gets a network namespace of its own,
// joined by a veth pair to a bridge in the caller's namespace (the hub, where origin, tracker and
// page server listen on HUB_ADDRESS), and its browser (Chromium or Firefox) runs inside it. Both
// directions are shaped with tc tbf: the uplink on the viewer's end of the veth (its own egress),
// the downlink on the hub's end. Everything a viewer sends or receives, HTTP and WebRTC alike, crosses that one link.
//
// Latency: none is added (tc netem is not available in these kernels; README, "Latency in browser
// swarms", says what else was tried and why none fits); a link's only delay is the queueing in its
// tbf buffer, which on the uplink is the home router's (profile uplinkQueueMs, 600 ms: the
// simulator's model of it).
//
// NAT: a viewer may sit behind a home router of its own (a second namespace that masquerades the
// viewer's 100.64.x.x LAN behind the address on the test network): 'cone' keeps a mapping's port
// for every destination (Linux MASQUERADE: a STUN server's answer is what peers can reach),
// 'symmetric' picks a new random port per destination (--random-fully: only a TURN relay gets
// through). The link is then shaped on the router's side; the viewer's LAN is not.
//
// The hub must be a private network namespace (npm run swarm re-runs itself in one; the browser
// tests run under scripts/netns.mjs): this module refuses to touch the host's network.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';
import type { Browser as PuppeteerBrowser } from 'puppeteer-core';
import { chromiumLaunchOptions, chromiumPath } from '../chromium.js';
import { assertFirefox, launchFirefox } from '../firefox.js';
import { networkProfile, viewerLink, type ViewerLink } from '../network-profiles.js';
import { relayIntoNamespace } from './namespace-relay.js';

const run = promisify(execFile);

/** The hub's address: RFC 2544's benchmarking range, used only inside namespaces we create. */
export const HUB_ADDRESS = '198.18.0.1';
const BRIDGE = 'shoalbr0';
/** Downlink buffer (an ISP's queue toward the home), ms of downlink time. */
export const DOWNLINK_QUEUE_MS = 200;
/** What the report says of latency (tc netem is not available in these kernels). */
export const LATENCY_MODEL = 'none added: sub-millisecond veth links; the only delay is queueing in the tbf buffers (uplink: the profile\'s router buffer)';
const MAX_VIEWERS = 4000;
const wrapperPath = fileURLToPath(new URL('../../bin/browser-in-netns.sh', import.meta.url));

export type NatKind = 'none' | 'cone' | 'symmetric';

export interface ViewerNamespace {
  /** Position in the order viewers were added (0-based). */
  index: number;
  /** The namespace's name (`ip netns`); unique to this process. */
  name: string;
  /** /run/netns/<name>, for nsenter. */
  path: string;
  /** The viewer's address on the test network (its router's, behind a NAT). */
  address: string;
  link: ViewerLink;
  nat: NatKind;
  /** The router's namespace behind a NAT (it holds the shaped link), else null. */
  routerName: string | null;
  /** The hub's end of the veth: its rx is the viewer's upload, its tx the viewer's download. */
  hubInterface: string;
}

/** Bytes that crossed a viewer's link, counted by the kernel (Ethernet frames, after shaping). */
export interface LinkCounters {
  upBytes: number;
  downBytes: number;
}

export interface ViewerNetworksOptions {
  log?: (line: string) => void;
}

const quiet = async (file: string, args: string[]) => run(file, args).catch(() => undefined);

/**
 * The variable that scripts/netns.mjs and the swarm CLI set, inside the namespace they create, to
 * that namespace's inode: proof that this process runs in a private network namespace.
 */
export const PRIVATE_NETNS_VARIABLE = 'SHOAL_PRIVATE_NETNS';

/** Throws unless this process runs in the private network namespace our scripts made. */
export function assertPrivateNetworkNamespace(): void {
  let own: string;
  try {
    own = String(statSync('/proc/self/ns/net').ino);
  } catch (error) {
    throw new Error(`shaped viewer networks need network namespaces (${(error as Error).message})`);
  }
  if (process.env[PRIVATE_NETNS_VARIABLE] !== own) {
    throw new Error(
      'shaped viewer networks are made only inside a private network namespace, never on the host network: ' +
        'run through `npm run swarm` or `node scripts/netns.mjs` (root; not with SHOAL_NO_NETNS=1)',
    );
  }
}

/** tc tbf arguments for a rate in bits/s with a queue of `queueMs` at that rate. */
function tbfArgs(bitsPerS: number, queueMs: number): string[] {
  // The bucket: at least two full frames, else ~10 ms at the rate (it bounds bursts, not the mean).
  const burstBytes = Math.max(2 * 1514, Math.round(bitsPerS / 8 / 100));
  return ['tbf', 'rate', `${Math.round(bitsPerS)}bit`, 'burst', String(burstBytes), 'latency', `${Math.max(1, Math.round(queueMs))}ms`];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Namespaces left behind by runs that died (their process is gone): /run/netns outlives them. */
async function removeStaleNamespaces(): Promise<void> {
  if (!existsSync('/run/netns')) return;
  for (const name of readdirSync('/run/netns')) {
    const match = /^shoal-(\d+)-/.exec(name);
    if (match && !isAlive(Number(match[1]))) await quiet('ip', ['netns', 'del', name]);
  }
}

/** Reads /proc/net/dev of this process's namespace: bytes received and sent per interface. */
function readInterfaceCounters(): Map<string, { rxBytes: number; txBytes: number }> {
  const counters = new Map<string, { rxBytes: number; txBytes: number }>();
  for (const line of readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2)) {
    const [name, rest] = line.split(':');
    if (!rest) continue;
    const fields = rest.trim().split(/\s+/).map(Number);
    counters.set(name!.trim(), { rxBytes: fields[0]!, txBytes: fields[8]! });
  }
  return counters;
}

export class ViewerNetworks {
  readonly hubAddress = HUB_ADDRESS;
  readonly viewers: ViewerNamespace[] = [];
  private readonly browsers = new Set<{ close(): Promise<void> }>();
  private destroyed = false;

  private constructor(private readonly log: (line: string) => void) {}

  /** Makes the hub's bridge (HUB_ADDRESS) in this namespace; viewers are added with add(). */
  static async create(options: ViewerNetworksOptions = {}): Promise<ViewerNetworks> {
    assertPrivateNetworkNamespace();
    await removeStaleNamespaces();
    // A bridge left by an earlier instance in this (private) namespace goes first.
    await quiet('ip', ['link', 'del', BRIDGE]);
    await run('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
    await run('ip', ['addr', 'add', `${HUB_ADDRESS}/16`, 'dev', BRIDGE]);
    await run('ip', ['link', 'set', BRIDGE, 'up']);
    // Addresses behind the viewers' NATs lead nowhere from the hub, as on the internet: packets to
    // them vanish. (Without a route, sending fails at once with ENETUNREACH, and coturn then stops
    // relaying on that allocation altogether.)
    await run('ip', ['route', 'add', '100.64.0.0/10', 'dev', BRIDGE]);
    await run('ip', ['link', 'set', 'lo', 'up']);
    return new ViewerNetworks(options.log ?? (() => {}));
  }

  /** A new viewer namespace with its link shaped as given, behind a NAT of its own if asked. */
  async add(link: ViewerLink, nat: NatKind = 'none'): Promise<ViewerNamespace> {
    if (this.destroyed) throw new Error('ViewerNetworks: add() after destroy()');
    const index = this.viewers.length;
    if (index >= MAX_VIEWERS) throw new Error(`ViewerNetworks: at most ${MAX_VIEWERS} viewers`);
    const name = `shoal-${process.pid}-v${index}`;
    const hubInterface = `shv${index}`;
    // 198.18.1.1 onwards (198.18.0.x is the hub's), never .0 or .255 in the last byte.
    const host = index + 254;
    const address = `198.18.${Math.floor(host / 254)}.${(host % 254) + 1}`;
    const routerName = nat === 'none' ? null : `shoal-${process.pid}-r${index}`;
    const viewer: ViewerNamespace = { index, name, path: `/run/netns/${name}`, address, link, nat, routerName, hubInterface };
    this.viewers.push(viewer);
    // The namespace on the test network: the viewer's own, or its router's.
    const edge = routerName ?? name;
    await run('ip', ['netns', 'add', name]);
    if (routerName) await run('ip', ['netns', 'add', routerName]);
    await run('ip', ['link', 'add', hubInterface, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', edge]);
    await run('ip', ['link', 'set', hubInterface, 'master', BRIDGE, 'up']);
    await run('ip', ['-n', edge, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', edge, 'addr', 'add', `${address}/16`, 'dev', 'eth0']);
    await run('ip', ['-n', edge, 'link', 'set', 'eth0', 'up']);
    if (routerName) {
      // Viewer i's LAN: 100.64.0.0/10 (carrier-grade NAT space), a /24 each; router .1, viewer .2.
      const lan = `100.${64 + (index >> 8)}.${index & 255}`;
      await run('ip', ['-n', routerName, 'link', 'add', 'lan0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
      await run('ip', ['-n', routerName, 'addr', 'add', `${lan}.1/24`, 'dev', 'lan0']);
      await run('ip', ['-n', routerName, 'link', 'set', 'lan0', 'up']);
      await run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
      await run('ip', ['-n', name, 'addr', 'add', `${lan}.2/24`, 'dev', 'eth0']);
      await run('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
      await run('ip', ['-n', name, 'route', 'add', 'default', 'via', `${lan}.1`]);
      await run('ip', ['netns', 'exec', routerName, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
      const masquerade = ['-t', 'nat', '-A', 'POSTROUTING', '-o', 'eth0', '-j', 'MASQUERADE', ...(nat === 'symmetric' ? ['--random-fully'] : [])];
      await run('ip', ['netns', 'exec', routerName, 'iptables', ...masquerade]);
      // Unsolicited packets to the router are dropped before conntrack records them: a recorded
      // inbound flow would take the port a viewer's own mapping needs (a NAT'd peer's first check
      // often arrives before this side has sent its own), and MASQUERADE would pick another.
      await run('ip', ['netns', 'exec', routerName, 'iptables', '-A', 'INPUT', '-i', 'eth0', '-m', 'conntrack', '--ctstate', 'NEW', '-j', 'DROP']);
    }
    if (Number.isFinite(link.downBitsPerS)) {
      await run('tc', ['qdisc', 'replace', 'dev', hubInterface, 'root', ...tbfArgs(link.downBitsPerS, DOWNLINK_QUEUE_MS)]);
    }
    if (Number.isFinite(link.upBitsPerS)) {
      await run('tc', ['-n', edge, 'qdisc', 'replace', 'dev', 'eth0', 'root', ...tbfArgs(link.upBitsPerS, link.uplinkQueueMs > 0 ? link.uplinkQueueMs : 50)]);
    }
    return viewer;
  }

  /** Chromium (Playwright) running inside the viewer's namespace; closed by destroy() at the latest. */
  async launchBrowser(viewer: ViewerNamespace, options: LaunchOptions = {}): Promise<Browser> {
    const defaults = chromiumLaunchOptions();
    const browser = await chromium.launch({
      ...defaults,
      ...options,
      args: [...defaults.args, ...(options.args ?? [])],
      executablePath: wrapperPath,
      env: { ...process.env, ...options.env, SHOAL_VIEWER_NETNS: viewer.path, SHOAL_VIEWER_BROWSER: chromiumPath() },
    });
    this.browsers.add(browser);
    browser.once('disconnected', () => this.browsers.delete(browser));
    return browser;
  }

  /**
   * Firefox (puppeteer-core over WebDriver BiDi) inside the viewer's namespace. Firefox gathers no
   * ICE candidate where the namespace has no default route: a viewer with no NAT gets one on its
   * link (its router's default route serves one behind a NAT). Its WebDriver BiDi server listens
   * on the namespace's loopback: puppeteer-core reaches it through a relay. `prefs` on top of firefoxPrefs.
   */
  async launchFirefox(viewer: ViewerNamespace, prefs: Record<string, unknown> = {}): Promise<PuppeteerBrowser> {
    if (!viewer.routerName) await run('ip', ['-n', viewer.name, 'route', 'replace', 'default', 'dev', 'eth0']);
    const relay = await relayIntoNamespace(viewer.path, viewer.name);
    let browser: PuppeteerBrowser;
    try {
      const env = { SHOAL_VIEWER_NETNS: viewer.path, SHOAL_VIEWER_BROWSER: assertFirefox() };
      browser = await launchFirefox({ executablePath: wrapperPath, prefs, env, debuggingPort: relay.port });
    } catch (error) {
      relay.close();
      throw error;
    }
    this.browsers.add(browser);
    browser.once('disconnected', () => {
      this.browsers.delete(browser);
      relay.close();
    });
    return browser;
  }

  /** Bytes that crossed each viewer's link so far, by viewer index. */
  counters(): LinkCounters[] {
    const byInterface = readInterfaceCounters();
    return this.viewers.map((viewer) => {
      const counted = byInterface.get(viewer.hubInterface);
      return { upBytes: counted?.rxBytes ?? 0, downBytes: counted?.txBytes ?? 0 };
    });
  }

  /** What tc says of a viewer's uplink queue: packets dropped, and times the rate held a packet back. */
  async uplinkQdiscStats(viewer: ViewerNamespace): Promise<{ drops: number; overlimits: number } | null> {
    const { stdout } = await run('tc', ['-n', viewer.routerName ?? viewer.name, '-s', 'qdisc', 'show', 'dev', 'eth0']).catch(() => ({ stdout: '' }));
    const match = /dropped (\d+), overlimits (\d+)/.exec(stdout);
    return match ? { drops: Number(match[1]), overlimits: Number(match[2]) } : null;
  }

  /** Removes one viewer's namespace (and with it its link); close its browser first. */
  async remove(viewer: ViewerNamespace): Promise<void> {
    await quiet('ip', ['netns', 'del', viewer.name]);
    if (viewer.routerName) await quiet('ip', ['netns', 'del', viewer.routerName]);
  }

  /** Closes every browser launched here and removes every namespace and the bridge. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all([...this.browsers].map((browser) => browser.close().catch(() => {})));
    for (const viewer of this.viewers) await this.remove(viewer);
    await quiet('ip', ['link', 'del', BRIDGE]);
  }
}

export interface ShapedViewers {
  networks: ViewerNetworks;
  /** Viewer i's namespace and the Chromium running in it. */
  viewers: Array<{ namespace: ViewerNamespace; browser: Browser }>;
  /** Closes the browsers, removes the namespaces and the bridge. */
  destroy(): Promise<void>;
}

/**
 * For browser tests: `count` viewer namespaces with links from a network profile (uplinks as
 * multiples of `bitrateBitsPerS`), a Chromium in each. Serve pages, origin and tracker on
 * `networks.hubAddress`. Must run inside scripts/netns.mjs (the browser tests do). Pages served
 * from the hub's address are no secure context (no crypto.subtle) unless the launch arguments
 * say `--unsafely-treat-insecure-origin-as-secure=<pages origin>`.
 */
export async function startShapedViewers(options: {
  count: number;
  profile: string;
  bitrateBitsPerS: number;
  /** Each viewer behind a NAT of its own (default none). */
  nat?: NatKind;
  launch?: LaunchOptions;
  log?: (line: string) => void;
}): Promise<ShapedViewers> {
  const profile = networkProfile(options.profile);
  const networks = await ViewerNetworks.create({ log: options.log });
  try {
    const viewers = [];
    for (let index = 0; index < options.count; index += 1) {
      const namespace = await networks.add(viewerLink(profile, index, options.bitrateBitsPerS), options.nat);
      viewers.push({ namespace, browser: await networks.launchBrowser(namespace, options.launch) });
    }
    return { networks, viewers, destroy: () => networks.destroy() };
  } catch (error) {
    await networks.destroy();
    throw error;
  }
}
