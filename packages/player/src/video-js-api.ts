// The small part of video.js's API Shoal uses, typed here: video.js's generated typings describe
// `getComponent()` results only as the base Component, and its CommonJS-style declarations
// do not give ESM code a callable default.
import type * as PlayerModule from 'video.js/dist/types/player.js';

export type Player = PlayerModule.default;

/** What Shoal uses of the `videojs` namespace: an app's own video.js (full or core) fits. */
export interface VideoJsNamespace {
  getTech(name: string): unknown;
  getPlayer(id: string): Player | undefined;
  getComponent(name: string): unknown;
  registerComponent(name: string, component: never): unknown;
  getPlugin(name: string): unknown;
  registerPlugin(name: string, plugin: never): unknown;
}

/** video.js's core build, which ShoalPlayer creates players with. */
export interface VideoJs extends VideoJsNamespace {
  (element: Element | string, options?: Record<string, unknown>, ready?: () => void): Player;
}

export interface ComponentLike {
  el(): HTMLElement;
  on(event: string, listener: (...args: unknown[]) => void): void;
  addClass(className: string): void;
  removeClass(className: string): void;
  toggleClass(className: string, add?: boolean): void;
  hasClass(className: string): boolean;
  show(): void;
  hide(): void;
  dispose(): void;
  player(): Player;
  addChild(name: string | ComponentLike, options?: Record<string, unknown>, index?: number): ComponentLike;
  getChild(name: string): ComponentLike | undefined;
  children(): ComponentLike[];
  controlText(text: string): void;
}

export type ComponentClass<T extends ComponentLike = ComponentLike> = new (player: Player, options?: Record<string, unknown>) => T;

export interface MenuButtonLike extends ComponentLike {
  createItems(): ComponentLike[];
  buildCSSClass(): string;
  buildWrapperCSSClass(): string;
  update(): void;
  items: ComponentLike[];
}

export interface MenuItemLike extends ComponentLike {
  handleClick(event?: Event): void;
  selected(selected: boolean): void;
}

/** Shows video.js's error overlay with our words (code 4: the source cannot be played). */
export function showPlayerError(player: Player, message: string): void {
  (player.error as unknown as (error: { code: number; message: string }) => void).call(player, { code: 4, message });
}
