#!/usr/bin/env bash
# vigil serve pinned to 2 cores (2,3), the figures of docs/benchmarks.md ("Serving"):
#  1. vigil bench http in one process on those 2 cores (client and server share them);
#  2. vigil serve pinned to 2 cores, vigil bench http --target on 4 other cores: the sweep and
#     3x the sustainable load, with the server's memory sampled during the overload;
#  3. wrk against vigil serve, sharing the 2 cores and then from 4 other cores.
set -u
# VIGIL and WRK name the binaries (default: build/vigil and wrk on PATH); MODEL the model.
cd "$(dirname "$0")/.."
OUT=${OUT:-build/serve_bench}; mkdir -p "$OUT"
B=$(realpath ${VIGIL:-build/vigil})
W=${WRK:-wrk}
M=${MODEL:-build/demo/model/model.json}
SC=${SERVER_CORES:-2,3}  # the 2 cores of the server
CC=${CLIENT_CORES:-4-7}  # other cores for the separate client
COMMON="--policy policies/default.yaml --fx-rates data/fx_rates.csv"
# The serving figures are without drift monitoring (docs/benchmarks.md measures it apart);
# DRIFT=1 keeps it on when a reference profile lies beside the model.
[ "${DRIFT:-0}" = 1 ] || NODRIFT=--no-drift
lscpu | grep -E "Model name|^CPU\(s\)"
taskset -c $SC $B bench http --model $M $COMMON ${NODRIFT:-} --batchers immediate,fast,compliance \
  --rates 10000,15000,20000,25000 --duration-ms 3000 --warmup-ms 500 --stages \
  --json-out $OUT/sweep.json > $OUT/sweep.txt 2>&1
echo "sweep rc=$?"
metrics() {
  exec 3<>/dev/tcp/127.0.0.1/$1
  printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
  cat <&3 | grep -E '^vigil_(stage_latency_seconds_(bucket|count)\{stage="total"|http_requests_total|shed_total|degraded_decisions_total|batch_size_(sum|count)|workers)' | grep -v ' 0$'
  exec 3<&-
}
start_server() {
  rm -rf /tmp/st; taskset -c $SC $B serve --listen 127.0.0.1:0 --data-dir /tmp/st --model $M $COMMON ${NODRIFT:-} \
    --batcher immediate --plaintext --auth none --log /tmp/serve.log > /tmp/serve.out 2>&1 &
  pid=$!
  for i in $(seq 1 100); do grep -q listening /tmp/serve.out && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\).*/\1/p' /tmp/serve.out)
}
start_server
( for i in $(seq 1 60); do echo "$(date +%s) $(ps -o rss= -p $pid)"; sleep 1; done ) > $OUT/rss_external.txt &
sampler=$!
taskset -c $CC $B bench http --target 127.0.0.1:$port $COMMON --client-threads 3 \
  --rates 10000,15000,20000,25000 --duration-ms 4000 --warmup-ms 500 > $OUT/external.txt 2>&1
metrics $port > $OUT/metrics_external.txt
kill $sampler; kill -TERM $pid; wait $pid; echo "serve exit $?" >> $OUT/external.txt
for setup in shared separate; do
  start_server
  if [ $setup = shared ]; then cores=$SC; threads=1; else cores=$CC; threads=2; fi
  taskset -c $cores $W -t$threads -c32 -d10s --latency -s tools/wrk/score.lua http://127.0.0.1:$port > $OUT/wrk_$setup.txt 2>&1
  metrics $port > $OUT/metrics_$setup.txt
  kill -TERM $pid; wait $pid; echo "serve exit $?" >> $OUT/wrk_$setup.txt
done
grep -v "^    server stages" $OUT/sweep.txt | tail -22
cat $OUT/external.txt | tail -12
for f in $OUT/wrk_*.txt $OUT/metrics_*.txt; do echo "== $f"; cat $f; done
awk 'NR==1{a=$2} {print}' $OUT/rss_external.txt | tr '\n' ' '
