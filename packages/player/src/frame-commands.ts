// What the iframe embed does for each command of the postMessage protocol (frame-protocol.ts):
// one handler per command, on the frame's ShoalPlayer.
import type { CommandArgs, CommandResults, FrameCommand, ReadyInfo } from './frame-protocol.js';
import type { ShoalPlayer } from './player.js';

export type CommandHandlers = {
  [C in FrameCommand]: (args: Partial<NonNullable<CommandArgs[C]>>) => CommandResults[C] | Promise<CommandResults[C]>;
};

export function commandHandlers(player: ShoalPlayer, whenReady: Promise<ReadyInfo>, destroy: () => void): CommandHandlers {
  return {
    hello: () => whenReady,
    play: () => player.play().then(() => null),
    pause: () => (player.pause(), null),
    seek: ({ time }) => (player.seek(Number(time)), null),
    getCurrentTime: () => player.getCurrentTime(),
    getDuration: () => player.getDuration(),
    setVolume: ({ volume }) => (player.setVolume(Number(volume)), null),
    getVolume: () => player.getVolume(),
    mute: () => (player.setMuted(true), null),
    unmute: () => (player.setMuted(false), null),
    isMuted: () => player.isMuted(),
    setPlaybackRate: ({ rate }) => (player.setPlaybackRate(Number(rate)), null),
    getPlaybackRate: () => player.getPlaybackRate(),
    getPlaybackRates: () => player.getPlaybackRates(),
    getResolutions: () => player.getResolutions(),
    setResolution: ({ id }) => (player.setResolution(Number(id)), null),
    getState: () => player.getState(),
    isPlaying: () => player.isPlaying(),
    getStats: () => player.getStats(),
    getCaptions: () => player.getCaptions(),
    // An absent id reads as null (none), like PeerTube's; a wrong type is the player's to refuse.
    setCaption: ({ id }) => (player.setCaption(id ?? null), null),
    destroy: () => (destroy(), null),
  };
}
