// What a swarm comparison is asked to run: runSwarm's options, which the CLI fills from its
// arguments. A module of its own, so that the runner and one engine's run share the type without
// importing each other.
import type { FaultOptions } from './faults.js';
import type { Scenario } from './scenarios.js';
import type { NatMode } from './stage.js';
import type { Threshold } from './thresholds.js';
import type { BrowserMix } from './viewer-browsers.js';
import type { EngineName } from './viewer-snapshot.js';

export interface SwarmOptions {
  /** Default: live-normal; with streamUrl, live-normal or vod as the stream's playlist says. */
  scenario?: Scenario | string;
  peers: number;
  durationS: number;
  /** Run one after another with identical settings; 'http' is the baseline. */
  engines: EngineName[];
  /** Where report.json and report.html go; nothing is written without it. */
  outDir?: string;
  /** An external stream (master playlist URL): no origin count then. */
  streamUrl?: string;
  /** An external tracker (ws:// or wss://); default: Shoal's tracker as a process, fresh per run. */
  trackerUrl?: string;
  /** Pin a rendition (hls.js level index); default -1 (ABR). */
  level?: number;
  /** Seconds between samples of every viewer; default 5 (2 for runs under a minute). */
  sampleIntervalS?: number;
  /**
   * A network profile (../network-profiles.ts): each viewer its own Chromium in its own network
   * namespace, its link shaped as the profile says. Default: one Chromium on loopback, unshaped.
   */
  network?: string;
  /**
   * Every viewer behind a NAT of its own, with coturn on the test network: 'stun' (cone NATs,
   * STUN offered) or 'turn' (symmetric NATs, STUN and TURN offered: only the relay gets through).
   * Implies network 'unlimited' unless one is given.
   */
  nat?: NatMode;
  /**
   * Verify segments from peers against the origin's SHA-256 manifest (PeerTube's format), as
   * PeerTube does: default true; ignored (and said so) for an external stream.
   */
  integrity?: boolean;
  /**
   * Write each viewer's trace (hls.js fragment events, stalls with the buffer around them, and
   * Shoal's engine log) to outDir/trace/ENGINE-VIEWER.log. Off by default: it costs CPU.
   */
  trace?: boolean;
  /** --assert thresholds, checked on the report (report.thresholds); they never throw. */
  thresholds?: Threshold[];
  /**
   * Cuts the comparison short: the engine run under way stops sampling, and the report covers
   * what ran, marked partial with the signal's reason (a string).
   */
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** The command line, recorded in the report. */
  command?: string;
  /** Faults to run, one after another, after the joins and a warm-up (./faults.ts). */
  faults?: FaultOptions;
  /** The browsers the viewers play in, as many as `peers` in all (--browsers); default: all Chromium. */
  browsers?: BrowserMix;
}
