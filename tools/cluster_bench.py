#!/usr/bin/python3
"""The cluster's figures (docs/cluster.md, docs/benchmarks.md "Cluster"), in one run on one machine.

1. Throughput and latency of a decision through `vigil serve` alone (the baseline, its own
   audit log with durable acknowledgement) and through a cluster of 1, 2 and 3 vigil nodes over
   NATS JetStream servers (3 servers, 3 replicas: acknowledged once a quorum stored it; and 1
   server, 1 replica), loaded by `vigil bench http --target` at fixed rates; the CPU seconds
   each server process used per decision (utime + stime from /proc), vigil's and NATS's apart.
2. Failover: a node killed with SIGKILL; the time until every one of its partitions decided a
   payment again (a probe per partition, posted to a surviving node).
3. Latency unloaded: requests one at a time (a new connection each, from this script) to
   `vigil serve` alone and to a 1-node cluster (one nats-server, 1 replica): p50, p90, p99.
4. Recovery: a node joining a cluster whose log holds N messages, for two sizes of the log; the
   time until it has applied the whole log (its position in `vigil cluster status`), when it
   replays the whole log, starts from its own checkpoint, or from the checkpoint shipped.

Everything (nats-servers, vigil nodes, the load generator) shares this machine's cores: the
figures are for the whole, not for a node on a machine of its own.

  /usr/bin/python3 tools/cluster_bench.py --vigil build/vigil --out build/bench/cluster
"""
import argparse
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CLK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime


def partition_of(bank, account, partitions):
    digest = hashlib.sha256(b"vigil.partition.v1\0" + bank.encode() + b"\0" + account.encode()).digest()
    return int.from_bytes(digest[:8], "big") % partitions


class Nats:
    def __init__(self, count, root):
        self.procs, self.urls = [], []
        ports = [(free_port(), free_port()) for _ in range(count)]
        for k, (client, route) in enumerate(ports):
            store = os.path.join(root, f"nats{k}")
            os.makedirs(store, exist_ok=True)
            conf = os.path.join(root, f"nats{k}.conf")
            with open(conf, "w") as f:
                f.write(f"server_name: s{k}\nlisten: 127.0.0.1:{client}\n"
                        f"jetstream {{ store_dir: \"{store}\" }}\n")
                if count > 1:
                    routes = ",".join(f"\"nats-route://127.0.0.1:{r}\"" for _, r in ports)
                    f.write(f"cluster {{ name: bench, listen: 127.0.0.1:{route}, routes: [{routes}] }}\n")
            self.procs.append(subprocess.Popen(["nats-server", "-c", conf],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.urls.append(f"nats://127.0.0.1:{client}")

    def cpu(self):
        return sum(cpu_seconds(p.pid) for p in self.procs)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


class Serve:
    """A `vigil serve` child: alone, or a node of a cluster when `cluster` is given."""

    def __init__(self, args, root, name, cluster=None, flags=(), keep_data=False):
        self.data = os.path.join(root, name)
        if not keep_data:
            shutil.rmtree(self.data, ignore_errors=True)
        argv = [args.vigil, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
                "--data-dir", self.data, "--model", args.model, "--policy", args.policy,
                "--fx-rates", args.fx_rates, "--no-drift", "--batcher", "immediate",
                "--log", os.path.join(root, name + ".requests.log"), "--log-sample-rate", "0"]
        if cluster is not None:
            for url in cluster["nats"]:
                argv += ["--cluster-nats", url]
            argv += ["--cluster-node-id", name, "--cluster-replicas", str(cluster["replicas"]),
                     "--cluster-name", cluster["name"]]
            if "lease_ttl_ms" in cluster:
                argv += ["--cluster-lease-ttl-ms", str(cluster["lease_ttl_ms"])]
        argv += list(flags)
        self.stderr = open(os.path.join(root, name + ".stderr"), "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"{name} did not start: {line!r}; see {self.stderr.name}")
        self.port = int(line.rsplit(":", 1)[1].split()[0])

    def cpu(self):
        return cpu_seconds(self.proc.pid)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait()


def status(args, nats_url, name):
    out = subprocess.run([args.vigil, "cluster", "status", "--nats", nats_url, "--cluster", name,
                          "--json"], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def wait_owned(args, nats_url, name, nodes, timeout=60):
    """Until `nodes` nodes are registered and every partition's lease is held."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = status(args, nats_url, name)
        # Settled: every lease held, and held by the nodes that decide them (their share by
        # rendezvous hashing, after the planned moves of a join).
        if s and len(s["nodes"]) == nodes and all(l["holder"] for l in s["leases"]) and \
                sum(n["partitions"] for n in s["nodes"]) == s["partitions"] and \
                len({l["holder"] for l in s["leases"]}) == nodes:
            return s
        time.sleep(0.2)
    raise RuntimeError(f"cluster {name}: partitions not all held by {nodes} nodes in {timeout} s")


def bench(args, port, rate):
    out = tempfile.mktemp(suffix=".json")
    run = subprocess.run([args.vigil, "bench", "http", "--target", f"127.0.0.1:{port}",
                          "--rates", str(rate), "--duration-ms", str(args.duration_ms),
                          "--warmup-ms", str(args.warmup_ms), "--no-overload", "--client-threads",
                          "1", "--json-out", out, "--policy", args.policy, "--fx-rates",
                          args.fx_rates], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"bench http failed: {run.stderr}")
    with open(out) as f:
        points = json.load(f)
    os.unlink(out)
    return points


def post(port, tx, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", "/v1/score", json.dumps(tx), {"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    except OSError:
        return 0, b""
    finally:
        c.close()


def tx(tx_id, account):
    return {"id": tx_id, "timestamp": "2022-09-01T08:00:00Z",
            "originator": {"account_id": account, "bank_id": "BENCH"},
            "beneficiary": {"account_id": "Z", "bank_id": "B2"},
            "amount": {"value": "100.00", "currency": "USD"}}


def accounts_per_partition(partitions):
    found, k = {}, 0
    while len(found) < partitions:
        found.setdefault(partition_of("BENCH", f"probe{k}", partitions), f"probe{k}")
        k += 1
    return found


def decided(port):
    """The 200 answers of POST /v1/score the server counted (its /metrics)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("vigil_http_requests_total{") and 'route="score"' in line \
                and 'status="200"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def gauge(port, name):
    """A gauge of the server's /metrics (the first series of that name)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return float("nan")


def measure_point(args, target, processes, nats, rate):
    """One bench point; the CPU of the processes over it, per decision answered (warm-up too)."""
    cpu0 = [p.cpu() for p in processes]
    nats0 = nats.cpu() if nats else 0.0
    decided0 = decided(target.port)
    p = bench(args, target.port, rate)[0]
    p["decisions"] = decided(target.port) - decided0
    vigil_cpu = sum(q.cpu() - c for q, c in zip(processes, cpu0))
    nats_cpu = (nats.cpu() - nats0) if nats else 0.0
    return p, vigil_cpu, nats_cpu


def throughput(args, root, results):
    rates = [int(r) for r in args.rates.split(",")]
    alone = Serve(args, root, "alone")
    try:
        for rate in rates:
            p, vcpu, _ = measure_point(args, alone, [alone], None, rate)
            results.append({"setup": "vigil serve alone", "nodes": 1, "replicas": 0, "rate": rate,
                            "point": p, "vigil_cpu_s": vcpu, "nats_cpu_s": 0.0})
            print_row(results[-1])
    finally:
        alone.stop()
    for replicas, servers in ((1, 1), (3, 3)):
        for nodes in [int(n) for n in args.nodes.split(",")]:
            nats = Nats(servers, os.path.join(root, f"nats_r{replicas}_n{nodes}"))
            time.sleep(1.5)
            name = f"b{replicas}x{nodes}"
            cluster = {"nats": nats.urls, "replicas": replicas, "name": name}
            members = []
            try:
                for k in range(nodes):
                    members.append(Serve(args, root, f"{name}-node{k}", cluster))
                wait_owned(args, nats.urls[0], name, nodes)
                for rate in rates:
                    p, vcpu, ncpu = measure_point(args, members[0], members, nats, rate)
                    results.append({"setup": f"cluster, {servers} nats-server(s), R{replicas}",
                                    "nodes": nodes, "replicas": replicas, "rate": rate,
                                    "point": p, "vigil_cpu_s": vcpu, "nats_cpu_s": ncpu})
                    print_row(results[-1])
                # How far decision batches trailed their payments so far (the staleness bound).
                trail = {"max_trailing_ms": max(gauge(m.port, "vigil_cluster_max_trailing_ms")
                                                for m in members),
                         "max_trailing_messages": max(
                             gauge(m.port, "vigil_cluster_max_trailing_messages") for m in members)}
                results[-1].update(trail)
                print(f"  staleness bound over the runs above: decision batches trailed their "
                      f"payments by at most {trail['max_trailing_ms']:.1f} ms, "
                      f"{trail['max_trailing_messages']:.0f} log messages", flush=True)
            finally:
                for m in members:
                    m.stop()
                nats.stop()


def print_row(r):
    p = r["point"]
    n = p["decisions"] or 1
    r["vigil_cpu_us_per_decision"] = 1e6 * r["vigil_cpu_s"] / n
    r["nats_cpu_us_per_decision"] = 1e6 * r["nats_cpu_s"] / n
    print(f"{r['setup']:<34} nodes={r['nodes']} offered={r['rate']:>6} "
          f"achieved={p['achieved']:>8.0f} client_p99={p['client_p99_us']:>8.0f}us "
          f"ok={p['ok']} shed={p['shed']} errors={p['errors']} "
          f"vigil_cpu/decision={r['vigil_cpu_us_per_decision']:>6.0f}us "
          f"nats_cpu/decision={r['nats_cpu_us_per_decision']:>6.0f}us", flush=True)


def failover(args, root, runs):
    """SIGKILL a node of two; seconds until each of its partitions decides a probe again."""
    out = []
    for run in range(runs):
        nats = Nats(3, os.path.join(root, f"nats_failover{run}"))
        time.sleep(1.5)
        name = f"f{run}"
        cluster = {"nats": nats.urls, "replicas": 3, "name": name}
        a = b = None
        try:
            a = Serve(args, root, f"{name}-a", cluster)
            b = Serve(args, root, f"{name}-b", cluster)
            s = wait_owned(args, nats.urls[0], name, 2)
            partitions = s["partitions"]
            probes = accounts_per_partition(partitions)
            victims = [l["partition"] for l in s["leases"] if l["holder"] == f"{name}-b"]
            # Warm: every partition decides once.
            for p, account in probes.items():
                assert post(a.port, tx(f"warm-{p}", account))[0] == 200
            killed = time.time()
            b.stop(signal.SIGKILL)
            pending = {p: probes[p] for p in victims}
            decided_at = {}
            n = 0
            while pending and time.time() - killed < 60:
                for p, account in list(pending.items()):
                    n += 1
                    code, _ = post(a.port, tx(f"probe-{run}-{p}-{n}", account), timeout=5)
                    if code == 200:
                        decided_at[p] = time.time() - killed
                        del pending[p]
            worst = max(decided_at.values()) if decided_at else float("nan")
            out.append({"run": run, "partitions_moved": len(victims), "seconds": worst,
                        "undecided": len(pending)})
            print(f"failover run {run}: {len(victims)} partitions of the killed node decided "
                  f"again {worst:.2f} s after SIGKILL (lease TTL 3 s)", flush=True)
        finally:
            for m in (a, b):
                if m:
                    m.stop()
            nats.stop()
    return out


def sequential(args, root, requests=300):
    """One request at a time: what a decision costs through the log when nothing queues."""
    nats = Nats(1, os.path.join(root, "nats_sequential"))
    time.sleep(1)
    node = alone = None
    out = {}
    try:
        node = Serve(args, root, "seq-node", {"nats": nats.urls, "replicas": 1, "name": "seq"})
        wait_owned(args, nats.urls[0], "seq", 1)
        alone = Serve(args, root, "seq-alone")
        for name, server in (("cluster, 1 node, R1", node), ("vigil serve alone", alone)):
            ms = []
            for i in range(requests):
                t0 = time.perf_counter()
                code, _ = post(server.port, tx(f"seq-{name[:3]}-{i}", f"acct{i % 50}"))
                ms.append((time.perf_counter() - t0) * 1e3)
                if code != 200:
                    raise RuntimeError(f"{name}: answered {code}")
            ms.sort()
            out[name] = {"p50_ms": ms[len(ms) // 2], "p90_ms": ms[int(len(ms) * 0.9)],
                         "p99_ms": ms[int(len(ms) * 0.99)]}
            print(f"sequential {name:<22} {requests} requests: p50 {out[name]['p50_ms']:.2f} "
                  f"p90 {out[name]['p90_ms']:.2f} p99 {out[name]['p99_ms']:.2f} ms", flush=True)
    finally:
        for m in (node, alone):
            if m:
                m.stop()
        nats.stop()
    return out


def caught_up(args, nats_url, name, node, last, started, timeout=300):
    """Seconds from `started` until `node`'s position in `vigil cluster status` reaches `last`."""
    while time.time() - started < timeout:
        s = status(args, nats_url, name)
        me = [n for n in s["nodes"] if n["node"] == node] if s else []
        if me and me[0]["position"] >= last:
            return time.time() - started
        time.sleep(0.05)
    raise RuntimeError(f"{node} did not reach position {last} in {timeout} s")


def join_timed(args, root, name, cluster, flags, last, keep_data=False):
    """Node `<name>-late` started into the cluster: it, and the seconds until it reached `last`."""
    started = time.time()
    late = Serve(args, root, f"{name}-late", cluster, flags, keep_data=keep_data)
    return late, caught_up(args, cluster["nats"][0], name, f"{name}-late", last, started)


def recovery(args, root, sizes):
    """Per log size, three starts of a node joining a 1-node cluster whose log holds it:
    on an empty data dir with nothing shipped (the whole log replayed); on its own data dir
    after a SIGKILL (its last checkpoint, then the log past it); and on an empty data dir
    where the first node ships a checkpoint every 2 s (the shipped checkpoint, then the log
    past it)."""
    out = []
    for size in sizes:
        row = {}
        for mode, ship_ms in (("replay", 0), ("shipped", 2000)):
            nats = Nats(1, os.path.join(root, f"nats_recovery{size}_{mode}"))
            time.sleep(1)
            name = f"r{size}{mode}"
            cluster = {"nats": nats.urls, "replicas": 1, "name": name}
            ship = ["--cluster-ship-interval-ms", str(ship_ms)]
            first = late = None
            try:
                first = Serve(args, root, f"{name}-first", cluster, ship)
                wait_owned(args, nats.urls[0], name, 1)
                # The log grows by a payment and its decision batch share per request.
                subprocess.run([args.vigil, "bench", "http", "--target", f"127.0.0.1:{first.port}",
                                "--rates", "2000", "--duration-ms", str(int(size / 2)),
                                "--warmup-ms", "0", "--no-overload", "--policy", args.policy,
                                "--fx-rates", args.fx_rates], capture_output=True, text=True)
                last = status(args, nats.urls[0], name)["log"]["last_sequence"]
                row["log_messages"] = last
                if mode == "shipped":
                    deadline = time.time() + 30
                    while gauge(first.port, "vigil_cluster_shipped_position") < last - 10 and \
                            time.time() < deadline:
                        time.sleep(0.2)
                    shipped = gauge(first.port, "vigil_cluster_shipped_position")
                    late, row["shipped_seconds"] = join_timed(args, root, name, cluster, ship,
                                                              last)
                    row["shipped_position"] = gauge(late.port, "vigil_cluster_restored_position")
                    print(f"recovery: a node on an empty data dir fetched the checkpoint shipped "
                          f"at {shipped:.0f} of {last} messages and was at the log's end in "
                          f"{row['shipped_seconds']:.2f} s", flush=True)
                    continue
                late, row["replay_seconds"] = join_timed(args, root, name, cluster, ship, last)
                print(f"recovery: a fresh node applied a log of {last} messages in "
                      f"{row['replay_seconds']:.2f} s "
                      f"({last / row['replay_seconds']:.0f} messages/s, start included)",
                      flush=True)
                # Its checkpoint at the log's end (idle: within the 5 s interval), then killed.
                deadline = time.time() + 30
                while gauge(late.port, "vigil_cluster_checkpoint_position") < last and \
                        time.time() < deadline:
                    time.sleep(0.2)
                late.stop(signal.SIGKILL)
                late, row["checkpoint_seconds"] = join_timed(args, root, name, cluster, ship,
                                                             last, keep_data=True)
                row["checkpoint_position"] = gauge(late.port, "vigil_cluster_restored_position")
                print(f"recovery: killed and restarted on its data dir (checkpoint at "
                      f"{row['checkpoint_position']:.0f}), it was at the log's end in "
                      f"{row['checkpoint_seconds']:.2f} s", flush=True)
            finally:
                for m in (first, late):
                    if m:
                        m.stop()
                nats.stop()
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vigil", default="build/vigil")
    ap.add_argument("--model", default="testdata/models/serve_model.json")
    ap.add_argument("--policy", default="policies/default.yaml")
    ap.add_argument("--fx-rates", default="data/fx_rates.csv")
    ap.add_argument("--rates", default="500,1000,2000")
    ap.add_argument("--nodes", default="1,2,3")
    ap.add_argument("--duration-ms", type=int, default=4000)
    ap.add_argument("--warmup-ms", type=int, default=1000)
    ap.add_argument("--failover-runs", type=int, default=3)
    ap.add_argument("--recovery-sizes", default="20000,80000")
    ap.add_argument("--skip", default="",
                    help="comma list of: throughput, failover, sequential, recovery")
    ap.add_argument("--out", default="build/bench/cluster")
    args = ap.parse_args()
    args.vigil = os.path.abspath(args.vigil)
    os.makedirs(args.out, exist_ok=True)
    root = tempfile.mkdtemp(prefix="vigil-cluster-bench-")
    skip = set(args.skip.split(","))
    report = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t"),
              "cores": os.cpu_count()}
    print(f"machine: {report['cpu']}, {report['cores']} cores (everything shares them)")
    try:
        if "throughput" not in skip:
            report["throughput"] = []
            throughput(args, root, report["throughput"])
        if "failover" not in skip:
            report["failover"] = failover(args, root, args.failover_runs)
        if "sequential" not in skip:
            report["sequential"] = sequential(args, root)
        if "recovery" not in skip:
            report["recovery"] = recovery(args, root, [int(s) for s in args.recovery_sizes.split(",")])
    finally:
        with open(os.path.join(args.out, "cluster.json"), "w") as f:
            json.dump(report, f, indent=1)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
