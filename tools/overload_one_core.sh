#!/bin/bash
# Overload of a server short of CPU itself (docs/benchmarks.md, "Answered from the log's
# completion"): `vigil serve` pinned to core 0, `vigil bench http --target` pinned to core 1,
# each binary given in turn, ROUNDS times (alternated, so both see the same machine).
#
#   tools/overload_one_core.sh [ROUNDS] VIGIL_BINARY...
#   tools/overload_one_core.sh 2 /tmp/vigil-before build/vigil
#
# Needs two cores and taskset. Prints each run's bench table and its non-zero vigil_shed_total.
set -euo pipefail
rounds=${1:?rounds}; shift
rates=${RATES:-4000,8000,12000,16000}
port=${PORT:-18090}
here=$(cd "$(dirname "$0")/.." && pwd)
for round in $(seq "$rounds"); do
  for bin in "$@"; do
    d=$(mktemp -d)
    printf 'limits: {max_connections: 4096, max_connections_per_client: 4096}\n' > "$d/c.yaml"
    taskset -c 0 "$bin" serve --listen "127.0.0.1:$port" --data-dir "$d/data" \
      --model "$here/testdata/models/serve_model.json" --policy "$here/policies/default.yaml" \
      --plaintext --auth none --batcher immediate --no-drift --log "$d/serve.log" \
      --config "$d/c.yaml" > "$d/serve.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.1; done
    echo "=== $bin, round $round"
    taskset -c 1 "$bin" bench http --target "127.0.0.1:$port" --rates "$rates" --no-overload \
      --duration-ms 3000 2>&1 | grep -E '^(batcher|external)'
    curl -s "http://127.0.0.1:$port/metrics" | grep -E '^vigil_shed_total' | grep -v ' 0$' || true
    kill -INT "$pid"; wait "$pid" || true
    rm -rf "$d"
  done
done
