// Lets ES modules `import Hls from 'hls.js'` on pages that load hls.js's UMD build (whose inline
// transmuxing worker needs no extra file) with a classic <script> tag.
export default globalThis.Hls;
