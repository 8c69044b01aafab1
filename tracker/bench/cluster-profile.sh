#!/usr/bin/env bash
# Where a cluster spends its CPU per announce: starts a redis-server and N tracker nodes (or one
# tracker with N=1, no Redis), all pinned to core 0 as `bench:tracker` does, drives them with its
# load generator on core 1 at a fixed rate, and records them with `perf record -g` (nodes run with
# --perf-basic-prof so JS frames have names). Prints the generator's figures, system calls and
# context switches per announce per process (perf stat), and CPU per announce by where it goes,
# attributed by stack. Needs perf; run as root.
#
#   tracker/bench/cluster-profile.sh [nodes, default 3] [announces/s, default 1000] [seconds, default 10] [out dir]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nodes="${1:-3}"; rate="${2:-1000}"; seconds="${3:-10}"; out="${4:-$(mktemp -d)}"
mkdir -p "$out"
pids=(); urls=(); redis_args=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
if [ "$nodes" -gt 1 ]; then
  port=$((20000 + RANDOM % 20000))
  taskset -c 0 redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no > "$out/redis.log" &
  redis_pid=$!; redis_args=(--redis "redis://127.0.0.1:$port")
  sleep 0.5
fi
for i in $(seq 1 "$nodes"); do
  taskset -c 0 node --perf-basic-prof "$here/../bin/shoal-tracker.js" --host 127.0.0.1 --port 0 --messages-per-second 0 --max-connections-per-ip 0 \
    --log-level warn --drain-sec 0 --workers 1 "${redis_args[@]}" > "$out/node$i.out" &
  pids+=($!)
done
for i in $(seq 1 "$nodes"); do
  for _ in $(seq 100); do grep -q listening "$out/node$i.out" && break; sleep 0.1; done
  urls+=("$(sed -n 's/listening //p' "$out/node$i.out")")
done
[ -n "${redis_pid:-}" ] && pids+=("$redis_pid")
all=$(IFS=,; echo "${pids[*]}")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 node "$here/load-generator.mjs" --url "$(IFS=,; echo "${urls[*]}")" --pid "$all" --mode rate \
  --rate "$rate" --duration "$seconds" --warmup 3 > "$out/generator.json" &
generator=$!
sleep 3.5
for p in "${pids[@]}"; do perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$p" -o "$out/stat.$p" sleep $((seconds - 2)) & done
perf record -g -o "$out/perf.data" -p "$all" sleep 5 > /dev/null 2>&1
wait "$generator"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
sleep 1
node -e '
const fs = require("fs");
const [out, seconds, ...pids] = process.argv.slice(1);
const g = JSON.parse(fs.readFileSync(out + "/generator.json", "utf8").trim().split("\n").at(-1));
console.log(`announces/s ${g.announceResponsesPerSec}, CPU per announce ${g.trackerCpuUsPerAnnounce} µs, announce p50/p99 ${g.latencyMs.p50}/${g.latencyMs.p99} ms, offer relay p50/p99 ${g.offerRelayMs.p50}/${g.offerRelayMs.p99} ms`);
const announces = g.announceResponsesPerSec * (Number(seconds) - 2);
for (const pid of pids) {
  const [calls, switches] = fs.readFileSync(`${out}/stat.${pid}`, "utf8").split("\n").filter((l) => /^\d/.test(l)).map((l) => Number(l.split(",")[0]));
  console.log(`process ${pid}: ${(calls / announces).toFixed(1)} system calls and ${(switches / announces).toFixed(2)} context switches per announce`);
}' "$out" "$seconds" "${pids[@]}"
# perf samples every 250 µs of CPU (4 kHz); attribute each by the first match in its stack.
perf script -i "$out/perf.data" 2>/dev/null | awk -v rate="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").at(-1)).announceResponsesPerSec)' "$out/generator.json")" '
function flush() {
  if (!have) return
  c = "other"
  if (comm ~ /redis/) c = "redis-server"
  else if (stack ~ /uv__stream_io|uv__write|uv__read|uv_try_write|LibuvStreamWrap|StreamBase|ioredis|redis-parser|redis-connection|redis-bus|bus-batch|cluster-membership|node:net|streams\/|task_queues/) c = "cluster bus in the nodes (Redis sockets, client, batches, membership)"
  else if (stack ~ /Scavenge|Marking|Sweep|GCTracer|Heap::/) c = "garbage collection"
  else if (stack ~ /__send|sendto|uWS|us_|sock_poll|tracker\/dist/) c = "client sockets (uWS reads and sends, tracker logic)"
  else if (stack ~ /epoll|uv__io_poll|uv_run|schedule|do_syscall/) c = "event loop, scheduler, other system calls"
  n[c]++; total++; have = 0; stack = ""
}
/^[^ \t]/ { flush(); comm = $1; have = 1; next }
/^$/ { flush(); next }
{ stack = stack " " $0 }
END { flush(); for (k in n) printf "%6.0f µs/announce  %s\n", n[k] * 250 / 5 / rate, k; printf "%6.0f µs/announce  total sampled (%d samples)\n", total * 250 / 5 / rate, total }' | sort -rn
echo "profile: $out/perf.data"
