#!/usr/bin/env bash
# The audit log's figures of docs/benchmarks.md ("Audit log"):
#  1. the cost of a synced 4 KiB write on this disk (dd oflag=dsync);
#  2. append throughput: audit_log_benchmark pinned to SERVER_CORES, medians of 3;
#  3. vigil bench http with durable acknowledgement on and off, client and server sharing
#     SERVER_CORES;
#  4. vigil serve pinned to SERVER_CORES with durable acknowledgement on and off, alternated
#     REPS times, vigil bench http --target on CLIENT_CORES: the client's end-to-end latency.
# VIGIL and BENCH name the binaries (default build/vigil and build/src/vigil/audit/
# audit_log_benchmark); MODEL the model (default build/demo/model/model.json, `make demo`).
# Data dirs go to TMPDIR, which must be on the disk measured (not a tmpfs: fsync is free there).
# STEPS picks steps (default "1 2 3 4"); SERVE_ARGS adds flags to vigil serve (e.g. --io-threads
# for a server on more cores), CLIENT_THREADS, CONNECTIONS and RATES set the external client's
# load (each connection carries one request at a time: with durable acknowledgement a request
# takes about two fsyncs longer, so a rate needs rate × latency connections),
# BENCH_FILTER picks step 2's benchmarks (a --benchmark_filter regex).
set -u
cd "$(dirname "$0")/.."
B=$(realpath ${VIGIL:-build/vigil})
L=$(realpath ${BENCH:-build/src/vigil/audit/audit_log_benchmark})
M=${MODEL:-build/demo/model/model.json}
SC=${SERVER_CORES:-2,3}
CC=${CLIENT_CORES:-4-7}
COMMON="--policy policies/default.yaml --fx-rates data/fx_rates.csv"
export TMPDIR=${TMPDIR:-$PWD/build/audit_bench}; mkdir -p "$TMPDIR"
lscpu | grep -E "Model name|^CPU\(s\)"; uptime; findmnt -T "$TMPDIR" | tail -1
STEPS=" ${STEPS:-1 2 3 4} "
step() { [[ "$STEPS" == *" $1 "* ]]; }
if step 1; then
  echo "== a synced 4 KiB write (dd oflag=dsync)"
  dd if=/dev/zero of="$TMPDIR/dsync" bs=4k count=1000 oflag=dsync 2>&1 | tail -1
  echo "== a synced 1 MiB write"
  dd if=/dev/zero of="$TMPDIR/dsync" bs=1M count=256 oflag=dsync 2>&1 | tail -1
  rm -f "$TMPDIR/dsync"
fi
if step 2; then
  echo "== append throughput (cores $SC)"
  taskset -c $SC $L --benchmark_min_time=2 --benchmark_repetitions=3 \
    --benchmark_filter="${BENCH_FILTER:-.}" \
    --benchmark_report_aggregates_only=true 2>&1 | grep -E "median"
fi
if step 3; then
  echo "== vigil bench http, client and server sharing cores $SC"
  taskset -c $SC $B bench http --model $M $COMMON --no-drift --batchers immediate,fast \
    --durable-acks on,off --rates 5000,10000,15000,20000 --duration-ms 3000 --warmup-ms 500 \
    --no-overload 2>&1 | grep -E "^(immediate|fast)"
fi
step 4 || exit 0
for rep in $(seq 1 ${REPS:-3}); do
  for ack in on off; do
    rm -rf "$TMPDIR/st"
    flag=""; [ $ack = off ] && flag=--no-durable-ack
    taskset -c $SC $B serve --listen 127.0.0.1:0 --data-dir "$TMPDIR/st" --model $M $COMMON \
      --no-drift --batcher immediate $flag ${SERVE_ARGS:-} --log "$TMPDIR/serve.log" > "$TMPDIR/serve.out" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do grep -q listening "$TMPDIR/serve.out" && break; sleep 0.1; done
    port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\).*/\1/p' "$TMPDIR/serve.out")
    echo "== run $rep, durable acknowledgement $ack: vigil serve on $SC, client on $CC"
    taskset -c $CC $B bench http --target 127.0.0.1:$port $COMMON --client-threads ${CLIENT_THREADS:-3} \
      --connections ${CONNECTIONS:-32} \
      --rates ${RATES:-5000,10000,15000,20000} --duration-ms 3000 --warmup-ms 500 --no-overload 2>&1 |
      grep "^external"
    # What the log wrote (bytes per record: bytes_written / records) and the wait for the
    # record's sync (stage "audit", cumulative buckets, all classes summed).
    exec 3<>/dev/tcp/127.0.0.1/$port
    printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
    cat <&3 > "$TMPDIR/metrics.txt"; exec 3<&-
    grep -E '^vigil_audit_(records|groups|syncs|bytes_written) ' "$TMPDIR/metrics.txt" | tr '\n' ' '
    echo
    awk '/^vigil_stage_latency_seconds_bucket\{stage="audit"/ {
        match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); n[le] += $NF }
      END { printf "audit stage, records by le (s):"
            for (le in n) printf " %s:%d", le, n[le]; print "" }' "$TMPDIR/metrics.txt"
    kill -TERM $pid; wait $pid
  done
done
uptime
