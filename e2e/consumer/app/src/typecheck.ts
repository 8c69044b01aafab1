// Type-checked (never run) under moduleResolution bundler and node16: every documented entry point
// resolves with its types, and the types fit together as the READMEs use them.
import { infoHash, type EngineStats } from '@shoal/core';
import { PUBLIC_STUN_SERVERS, createWebRtcSignaling } from '@shoal/core/webrtc';
import { attachShoal, type ShoalHlsOptions } from '@shoal/hlsjs';
import Hls from 'hls.js';
import { create, embedSnippets, type PlayerStats, type ShoalPlayerOptions } from '@shoal/player';
import { addShoal, registerShoalPlugin, type PlayerShoal, type ShoalPluginOptions } from '@shoal/player/videojs';
import { ShoalFrameClient, type Caption, type FrameEventData, type Resolution } from '@shoal/player/frame-client';
import { startTracker } from '@shoal/tracker';

const iceServers: RTCIceServer[] = [...PUBLIC_STUN_SERVERS, { urls: 'turn:turn.example:3478', username: 'u', credential: 'p' }];
const hlsOptions: ShoalHlsOptions = { trackers: ['wss://tracker.example/announce'], iceServers };
const shoal = attachShoal(new Hls(), hlsOptions);
const stats: EngineStats = shoal.getStats();
const bytes: number = stats.httpBytes + stats.p2pBytes;

const playerOptions: ShoalPlayerOptions = { src: 'https://cdn.example/vod/master.m3u8', trackers: [], iceServers: [], start: 90, stop: 120, loop: true, title: 'Launch', subtitle: 'en' };
const player = create(document.body, playerOptions);
const playerStats: PlayerStats = player.getStats();
const resolutions: Resolution[] = player.getResolutions();
player.setCaption(player.getCaptions()[0]?.id ?? null);

declare const videojs: Parameters<typeof registerShoalPlugin>[0] & Parameters<typeof addShoal>[0];
registerShoalPlugin(videojs);
const pluginOptions: ShoalPluginOptions = { trackers: ['wss://tracker.example/announce'], statsView: { open: true }, qualityMenu: true };
declare const ownPlayer: Parameters<typeof addShoal>[1];
const plugin: PlayerShoal = addShoal(videojs, ownPlayer, pluginOptions);

const client = new ShoalFrameClient(document.createElement('iframe'));
client.on('status', (status: FrameEventData['status']) => status.currentTime.toFixed(1));
const rates: Promise<number[]> = client.getPlaybackRates();
const captions: Promise<Caption[]> = client.getCaptions();
client.on('captionchange', ({ captions: list }) => list.filter((caption) => caption.mode === 'showing'));
const stopped: Promise<void> = client.destroy();
const snippet: string = embedSnippets({ src: '', trackers: [], scriptUrl: '', frameUrl: '', iceServers }).iframe;

export const used = [infoHash, createWebRtcSignaling, bytes, playerStats, resolutions, plugin, rates, captions, stopped, snippet, startTracker];
