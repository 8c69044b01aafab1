// shoal-frame-client.min.js: the global `ShoalFrameClient` is the class itself.
import { ShoalFrameClient } from './frame-client.js';

export default ShoalFrameClient;
