// Lets ES modules `import Hls from 'hls.js'` on a page that loads hls.js's UMD build with a
// classic <script> tag (its inline transmuxing worker then needs no extra file).
export default globalThis.Hls;
