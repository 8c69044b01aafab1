// The same, importing from the package's main entry: `sideEffects` lets the bundler leave the player out.
import { ShoalFrameClient } from '@shoal/player';

const client = new ShoalFrameClient(document.querySelector('iframe')!);
client.on('statechange', ({ state }) => console.log(state));
