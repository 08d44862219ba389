#!/usr/bin/env bash
# The wheel as a user gets it: built here, installed into a clean venv outside the repository,
# then the commands a new user runs first, and `pip check`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
.venv/bin/python -m build --wheel --no-isolation -o "$WORK/dist" . >/dev/null
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$WORK"/dist/mcpkit-*.whl
cp "$ROOT/examples/weather_server.py" "$WORK/"
mkdir "$WORK/examples" && mv "$WORK/weather_server.py" "$WORK/examples/"
cd "$WORK"
set -x
venv/bin/mcpkit --help >/dev/null
venv/bin/python -m mcpkit --help >/dev/null
venv/bin/mcpkit install mcp-json examples/weather_server.py --dry-run
venv/bin/pip check
set +x
echo "wheel check: mcpkit --help, python -m mcpkit --help, install --dry-run and pip check passed"
