#!/usr/bin/env bash
# Builds everything and serves the calculator on http://127.0.0.1:$PORT/ (default 8080, or the next free port),
# printing a link with a useful scenario already open. Ctrl-C stops the server.
#   bash scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
export NODE_PATH=/usr/share/nodejs   # emcc's acorn (TOOLCHAIN quirk 1)

bash scripts/setup.sh
log=$(mktemp)
quietly() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "run: failed: $*" >&2; exit 1; }; }
echo "run: building the CLI, the page and the tests (a few minutes the first time)"
quietly cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release --log-level=WARNING
quietly cmake --build build-native -j"$jobs"
quietly emcmake cmake -S . -B build-web -DMOE_CLI="$PWD/build-native/moe-roofline" --log-level=WARNING
quietly cmake --build build-web -j"$jobs"
rm -f "$log"

port=${PORT:-8080}
while ! python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', $port))" 2>/dev/null; do
  port=$((port + 1))
done
base="http://127.0.0.1:$port/"
# DeepSeek-V3 decoding on 32 H800s with DP-attention and expert parallelism (the InferSim/SGLang set-up).
scenario='{"model":"deepseek-v3","hardware":"h800","parallel":{"tp":1,"dp":32,"ep":32},"workload":{"batch":64},"runtime":{"two_batch_overlap":true}}'
url=$(echo "$scenario" | build-native/moe-roofline url - --base "$base" 2>/dev/null) || url=$base
echo
echo "MoE Roofline is at:  $url"
echo "(one-file version: build-web/site/moe-roofline.html; Ctrl-C stops the server)"
echo
exec python3 -m http.server --bind 127.0.0.1 "$port" --directory build-web/site
