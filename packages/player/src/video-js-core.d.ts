// video.js ships its core build (no VHS: we bring hls.js) without its own declaration file.
declare module 'video.js/core.es.js' {
  const videojs: import('./video-js-api.js').VideoJs;
  export default videojs;
}
