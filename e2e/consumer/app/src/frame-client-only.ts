// A host page that only talks to an iframe embed.
import { ShoalFrameClient } from '@shoal/player/frame-client';

const client = new ShoalFrameClient(document.querySelector('iframe')!);
client.on('statechange', ({ state }) => console.log(state));
