#!/usr/bin/env bash
# `make bench`: build the benchmark venvs, measure mcpkit, the official SDK (mcp 2.3.0) and
# FastMCP 4.1.6 with the raw Python limits in one harness invocation, then the client, MRTR,
# two-instance and import-time figures, the scale curves (tools, listen streams, host and gateway
# overhead), and write docs/performance.md + docs/performance.png + docs/performance-scale.png.
#
# Knobs (environment): REPEAT (3), DURATION (3 s), WARMUP (1 s), COLD_STARTS (3 per repeat),
# PORT_BASE (24100), LISTENERS (10000), LISTENERS_SMALL (1000), SCALE_TOOLS (10,1000,10000),
# HOST_CALLS (2000 per round), MCPBENCH_DIR (../shared/bench), BENCH_VENVS (bench/.venvs), OUT.
# To shrink the run: REPEAT=1, SCALE_TOOLS=10,1000, LISTENERS=1000 LISTENERS_SMALL=100.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
start=$(date +%s)
export MCPBENCH_DIR=${MCPBENCH_DIR:-$repo/../shared/bench}
if [ ! -f "$MCPBENCH_DIR/run.py" ]; then  # (a git worktree has no ../shared beside it)
  echo "make bench: no harness at $MCPBENCH_DIR; set MCPBENCH_DIR to the shared bench folder" >&2
  exit 2
fi
REPEAT=${REPEAT:-3}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
COLD_STARTS=${COLD_STARTS:-3}
PORT_BASE=${PORT_BASE:-24100}

bash "$here/setup.sh"
V=${BENCH_VENVS:-$here/.venvs}
export MCPKIT_PY=$V/mcpkit/bin/python SDK_PY=$V/sdk/bin/python FASTMCP_PY=$V/fastmcp/bin/python
export RAW_PY=$V/sdk/bin/python  # the raw limits run on the SDK's starlette/uvicorn
G=$V/gen/bin/python
OUT=${OUT:-$here/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
echo "results: $OUT"

# Progress on the terminal: one line per harness leg, then one per later step (9 of them).
TARGETS=(--targets "$MCPBENCH_DIR/targets.raw.json" --targets "$MCPBENCH_DIR/anchors/targets.json"
  --targets "$here/targets.json")
ONLY=raw-http,raw-stdio,mcpkit,sdk,fastmcp,mcpkit-client,sdk-client-on-mcpkit,mcpkit-client-on-sdk,sdk-client
TOTAL=$("$G" "$here/progress.py" plan "${TARGETS[@]}" --only "$ONLY" \
  --transports http,stdio --repeat "$REPEAT" --extra 9)
step() { "$G" "$here/progress.py" step --n $((TOTAL - 9 + $1)) --total "$TOTAL" --start "$start" "$2"; }

# 1. servers and clients, interleaved per repeat (about 6 min per repeat on 2 cores)
"$G" "$MCPBENCH_DIR/run.py" "${TARGETS[@]}" --only "$ONLY" \
  --transports http,stdio --eras modern,legacy --ops tools/call:echo --concurrency 1,16,64 \
  --duration "$DURATION" --warmup "$WARMUP" --cold-starts "$COLD_STARTS" \
  --list-tools 100 --list-duration 2 --repeat "$REPEAT" --port-base "$PORT_BASE" \
  --out-dir "$OUT/harness" 2>&1 > "$OUT/harness-tables.md" \
  | "$G" "$here/progress.py" follow --total "$TOTAL" --start "$start" --log "$OUT/harness.log"
# 2. MRTR round vs plain call, mcpkit and the SDK
step 1 "MRTR round vs plain call"
"$G" "$here/mrtr_bench.py" --servers mcpkit,sdk --concurrency 1,16 --duration "$DURATION" \
  --warmup "$WARMUP" --repeat "$REPEAT" --port-base $((PORT_BASE + 600)) --out "$OUT/mrtr" \
  > /dev/null 2> "$OUT/mrtr.log"
# 3. two instances, round-robin, MRTR retries across instances
step 2 "two instances"
"$G" "$here/two_instances.py" --concurrency 16 --duration "$DURATION" --warmup "$WARMUP" \
  --repeat "$REPEAT" --port-base $((PORT_BASE + 800)) --out "$OUT/two" 2> "$OUT/two.log"
# 4. import time of the installed package
step 3 "import time"
"$MCPKIT_PY" "$here/import_time.py" --python "$MCPKIT_PY" -n 10 --json "$OUT/import_time.json" \
  mcpkit "from mcpkit import Server" "from mcpkit.client import Client" > /dev/null
# 5. 10,000 listen streams, one change: mcpkit (`mcpkit run`, defaults) and the SDK
step 4 "listen streams"
"$G" "$here/listeners.py" --streams "${LISTENERS:-10000}" --port $((PORT_BASE + 900)) \
  --out "$OUT/listeners.json" 2> "$OUT/listeners.log"
# 6-9. scale curves: dispatch at 10 / 1,000 / 10,000 tools (mcpkit and the SDK), listen fan-out
# at LISTENERS_SMALL streams (step 4 gave LISTENERS), host and gateway overhead per call
step 5 "dispatch vs registered tools"
"$G" "$here/scale_tools.py" --tools "${SCALE_TOOLS:-10,1000,10000}" --duration "$DURATION" \
  --port-base $((PORT_BASE + 950)) --out "$OUT/scale-tools.json" 2> "$OUT/scale-tools.log"
step 6 "listen streams (small)"
"$G" "$here/listeners.py" --streams "${LISTENERS_SMALL:-1000}" --servers mcpkit,sdk \
  --port $((PORT_BASE + 990)) --out "$OUT/listeners-small.json" 2> "$OUT/listeners-small.log"
step 7 "host overhead per call"
"$MCPKIT_PY" "$here/host_bench.py" --calls "${HOST_CALLS:-2000}" --json "$OUT/host.json" > /dev/null
step 8 "gateway overhead per call"
"$MCPKIT_PY" "$here/gateway_bench.py" --micro --concurrency 1 --duration "$DURATION" \
  --warmup "$WARMUP" --json "$OUT/gateway.json" > "$OUT/gateway.log"
# 10. the report
step 9 "report"
"$G" "$here/perf_report.py" "$OUT" --docs "$repo/docs" --wall-seconds $(($(date +%s) - start))
echo "wrote $repo/docs/performance.md and performance.png in $(( ($(date +%s) - start) / 60 )) min"
