#!/usr/bin/env bash
# Creates the benchmark's virtual environments under bench/.venvs/ (git-ignored):
#   gen      the load generator and report (uvloop, httpx, matplotlib)
#   mcpkit   mcpkit from this checkout, installed as a wheel (compiled, as deployed)
#   sdk      the official MCP Python SDK, mcp==2.3.0 (+ py-spy; also runs the raw limit servers)
#   fastmcp  fastmcp==4.1.6
# Idempotent: an existing venv only gets mcpkit reinstalled from the current tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
venvs=${BENCH_VENVS:-$here/.venvs}
py=${PYTHON:-python3}
mk() {  # mk NAME PACKAGES...
  local dir=$venvs/$1; shift
  if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check -c "$here/constraints.txt" "$@"
    touch "$dir/.ready"
  fi
}
mk gen uvloop httpx 'matplotlib==3.11.2'
mk sdk 'mcp==2.3.0' 'uvicorn[standard]' 'py-spy==0.4.3'
mk fastmcp 'fastmcp==4.1.6' 'uvicorn[standard]'
mk mcpkit wheel
# mcpkit itself: always from the working tree, as a compiled wheel install (not editable).
"$venvs/mcpkit/bin/pip" install -q --disable-pip-version-check -c "$here/constraints.txt" \
  --force-reinstall --no-deps "$repo" >/dev/null
"$venvs/mcpkit/bin/pip" install -q --disable-pip-version-check -c "$here/constraints.txt" "$repo"
echo "bench venvs ready in $venvs"
