// `npm run swarm -- --help`, in plain JavaScript so that it prints on a fresh clone before any
// build. e2e/test/swarm-cli.test.ts checks that it names every option, scenario, engine and
// network the compiled CLI accepts.
export const usage = `usage: npm run swarm -- [options]

Swarms of real browser viewers (Chromium, and Firefox with --browsers) against the local origin
and Shoal's tracker (or an external stream), measuring offload and playback quality beside an
HTTP-only baseline. Writes
report.json (schema version, Shoal commit, every figure) and report.html.

  --scenario NAME     live-normal | live-high | live-high-half | live-low | vod | churn
                      (default live-normal; with --stream, vod or live-normal as the stream's
                      playlist says, and a scenario of the other kind is refused)
  --peers N           concurrent viewers (default 4, or the --browsers total)
  --browsers MIX      the browsers the viewers play in, e.g. chromium:4,firefox:4 (default: all
                      chromium): Debian's chromium through Playwright, firefox-esr through
                      puppeteer-core over WebDriver BiDi, interleaved as they join; each Firefox
                      viewer its own browser. The report gives each viewer's browser, stalls per
                      browser and the peer connections between browsers (chromium↔firefox, …)
  --duration S        seconds per engine run (default 60)
  --engine NAME       shoal | http | p2p-media-loader | p2p-media-loader-peertube (default
                      shoal); an HTTP-only baseline runs first unless --no-baseline
  --compare A,B,...   run these engines one after another with identical settings
                      (p2p-media-loader: its defaults; p2p-media-loader-peertube: PeerTube's
                      live settings, highDemandTimeWindow 4)
  --out DIR           where report.json and report.html go (default out/swarm-<scenario>-<time>)
  --stream URL        an external master playlist: no origin count then (the report says so).
                      Checked before any browser starts, as a viewer page on another origin
                      loads it: the playlists and a segment must carry
                      Access-Control-Allow-Origin (CORS), else the run stops (exit 6) naming
                      each missing header; Range support is checked too (a warning)
  --tracker URL       an external tracker (default: Shoal's tracker, started per run)
  --level N           pin hls.js to rendition N (default: ABR)
  --sample-interval S seconds between samples (default 5; 2 under a minute)
  --network NAME      unlimited | realistic | critical | mixed | mixed-nonuploading: each viewer
                      its own browser in its own network namespace, its uplink and downlink
                      shaped with tc tbf as the simulator's profile of that name
                      (e2e/src/network-profiles.ts; uplinks are multiples of the --level
                      rendition's bitrate, else the top one's). mixed-nonuploading: a quarter
                      of the viewers do not upload (engine upload off, 256 kbit/s uplink).
                      Default: all viewers in one Chromium on loopback, unshaped
  --nat stun|turn     every viewer behind a NAT of its own, coturn started on the test network:
                      stun: cone NATs, STUN offered; turn: symmetric NATs, STUN and TURN
                      offered (only the relay works). Network unlimited unless --network
  --no-baseline       skip the HTTP-only baseline for --engine
  --no-integrity      do not verify segments from peers against the origin's SHA-256 manifest
                      (verified by default, as PeerTube does)
  --trace             write each viewer's log to OUT/trace/ENGINE-VIEWER.log: hls.js's fragment
                      loads, stalls with the buffer around them, and Shoal's engine log
                      (costs CPU: for finding out why, not for figures)
  --fault A,B,...     faults, one phase after another once the viewers joined and played 10 s
                      (the same schedule for every engine, so the baseline plays under them):
                      tracker-outage: the tracker is SIGKILLed for --outage S (default 30),
                        a viewer joins while it is away, then it restarts on the same address;
                        the report shows the P2P bytes meanwhile, the late viewer's first P2P
                        bytes and the tracker's peer count after the return
                      peer-crash: twice, the viewer uploading most has its renderer crashed
                        (no goodbye to its peers) and a new viewer joins
                      origin-errors: twice, 6 s of half the segment requests answered 503, then
                        6 s of 1.5 s delays and 150 kB/s bodies, each followed by 8 s of calm
                      hostile-peers: for 40 s, one hostile client per --hostile behaviour
                        (default all: silent, trickle, flood, liar, wrong-bytes) joins the
                        swarms (e2e/pages/hostile-peer.js), in addition to --peers; the report
                        shows who banned or starved it, how fast, and the honest upload it got
                      The run must last long enough (it says how long when it does not).
                      Every run's report counts the segments handed to the players checked
                      against the origin's SHA-256 manifest by the viewer pages
  --outage S          tracker-outage: seconds the tracker stays away (default 30)
  --hostile A,B,...   hostile-peers: the behaviours to run (default: all five)
  --assert EXPR       a threshold, repeatable: [ENGINE:]FIGURE OP VALUE, OP one of >= <= > <,
                      VALUE a number or "baseline" (the HTTP-only run's same figure). Figures:
                      offload, efficiency, saving, fetches, stalls, stall-seconds, not-started,
                      startup (ms), latency (s). Checked on every run but the baseline (or the
                      named engine's). E.g. --assert offload>=0.6 --assert stalls<=baseline
  -h, --help          this text

A run in which no viewer starts playing within 15 s of the start stops there, with the viewers'
errors and a partial report (exit 7), instead of running the full duration.

Exit codes: 0 done; 1 error (also: not built yet, run \`npm run setup\`); 2 bad arguments (also: a
--scenario of the other kind than the --stream); 3 the watchdog stopped the run (partial report
written); 4 the HTTP-only baseline itself did not play smoothly (figures not valid); 5 an --assert
threshold failed; 6 the --stream failed its preflight (e.g. no CORS headers; nothing launched);
7 no viewer started playing (partial report written); 130/143 interrupted (SIGINT/SIGTERM;
partial report written).
`;
