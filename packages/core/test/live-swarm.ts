// A live swarm on the testing kit for core's tests: viewers, each a host on one flow network with
// an engine and the kit's hls.js-like player, watching the kit's live origin. The test decides who
// links to whom (a full or partial mesh) once the viewers have joined their swarm.
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import type { Sha256 } from '../src/store/integrity.js';
import {
  ChannelLedger, DEFAULT_PLAYER_PARAMS, FlowNetwork, PlayerModel, Prng, SimHost, SimOrigin, VirtualClock, connectHosts,
  type LinkCapacity, type OriginOptions, type PlayerParams, type StreamSpec,
} from '@shoal/sim/kit';
import { ManualSignaling, peerId, UNPACED } from './fakes.js';

export interface LiveSwarmOptions {
  viewers: number;
  stream: Omit<StreamSpec, 'kind'>;
  origin: OriginOptions;
  /** Every viewer's access link (its uplink carries all its uploads). */
  link: LinkCapacity;
  player?: Partial<PlayerParams>;
  /** Engine options per viewer, over UNPACED and latencyMode 'normal'. */
  engineOptions?: (viewer: number) => EngineOptionsInput;
  /** Each viewer's playlist-reload phase, ms (default 0: all together). */
  playlistPhaseMs?: (viewer: number) => number;
  sha256?: Sha256;
  /** Draws each viewer's timeupdate phase. */
  seed?: number;
}

export interface LiveViewer {
  engine: ShoalEngine;
  signaling: ManualSignaling;
  host: SimHost;
  player: PlayerModel;
}

export interface LiveSwarm {
  clock: VirtualClock;
  origin: SimOrigin;
  ledger: ChannelLedger;
  viewers: LiveViewer[];
  /** Runs the clock until every viewer has joined its swarm (its player loaded the playlist). */
  untilJoined(): Promise<void>;
  /** Runs the clock until every viewer plays (its first frame is out) and has joined its swarm. */
  untilPlaying(): Promise<void>;
  /** A data channel between two viewers, over their access links: link them once they joined. */
  link(a: LiveViewer, b: LiveViewer): void;
}

/** Every engine it makes goes into `engines` (enginesDestroyedAfterEach). */
export function liveSwarm(options: LiveSwarmOptions, engines: ShoalEngine[]): LiveSwarm {
  const clock = new VirtualClock();
  const network = new FlowNetwork(clock);
  const ledger = new ChannelLedger();
  const prng = new Prng(options.seed ?? 1);
  const origin = new SimOrigin(clock, network, { kind: 'live', ...options.stream }, options.origin, prng.fork(1), 10_000);
  const params = { ...DEFAULT_PLAYER_PARAMS, ...options.player };
  const viewers = Array.from({ length: options.viewers }, (_, index): LiveViewer => {
    const host = new SimHost(peerId(index + 1), options.link);
    const signaling = new ManualSignaling(host.id);
    const engineOptions = { latencyMode: 'normal', ...UNPACED, ...options.engineOptions?.(index) } as const;
    const engine = new ShoalEngine(engineOptions, { clock, http: origin.client(host), signaling, ...(options.sha256 ? { sha256: options.sha256 } : {}) });
    engines.push(engine);
    const player = new PlayerModel(clock, origin, engine, params, {
      index,
      p2p: true,
      originOneWayMs: options.link.latencyMs + options.origin.latencyMs,
      feedPhaseMs: prng.between(0, params.timeupdateMs),
      playlistPhaseMs: options.playlistPhaseMs?.(index) ?? 0,
    });
    return { engine, signaling, host, player };
  });
  const until = async (what: string, done: (viewer: LiveViewer) => boolean) => {
    for (let waitedMs = 0; !viewers.every(done); waitedMs += 100) {
      if (waitedMs > 30_000) throw new Error(`live swarm: viewers still not ${what} after 30 s`);
      await clock.advance(100);
    }
  };
  return {
    clock,
    origin,
    ledger,
    viewers,
    untilJoined: () => until('joined their swarm', (viewer) => viewer.signaling.events !== undefined),
    untilPlaying: () => until('playing in their swarm', (viewer) => viewer.signaling.events !== undefined && viewer.player.record.firstFrameMs !== null),
    link(a, b) {
      if (!a.signaling.events || !b.signaling.events) throw new Error('live swarm: link viewers after untilPlaying()');
      const [mine, theirs] = connectHosts(network, ledger, { host: a.host, peerId: a.host.id }, { host: b.host, peerId: b.host.id });
      a.signaling.events.peer(mine);
      b.signaling.events.peer(theirs);
    },
  };
}
