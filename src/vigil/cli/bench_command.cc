#include "vigil/cli/bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "vigil/cli/bench_names.h"
#include "vigil/cli/bench_pki.h"
#include "vigil/cli/data_files.h"
#include "vigil/common/clock.h"
#include "vigil/drift/measured_null.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/engine/replay.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/loadgen/http_load.h"
#include "vigil/loadgen/sweep_report.h"
#include "vigil/metrics/latency_histogram.h"
#include "vigil/screening/screener.h"
#include "vigil/cli/config_flags.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_options.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/vigil_server.h"
#include "vigil/synth/generator.h"

namespace vigil::cli {
namespace {

struct BenchFlags {
  // The in-process server's configuration (its pipeline options, as vigil serve takes them;
  // docs/configuration.md); each point sets the data dir, listener, credentials and batcher.
  ServeConfig base;
  config::OptionSet settings;
  std::unique_ptr<ConfigFlags> config_flags;
  std::string batchers = "immediate,fast,compliance";
  std::string rates = "5000,10000,20000,30000";
  std::string mix = "10,70,20";
  std::string mode = "open";
  int64_t duration_ms = 3000;
  int64_t warmup_ms = 500;
  int connections = 32;
  bool overload = true;
  bool stages = false;
  // "on" (answer after the audit record is durable), "off", or "on,off" to compare both.
  std::string durable_ack = "on";
  std::string json_out;
  int client_threads = 1;
  std::string target;  // HOST:PORT of a running vigil serve; empty: one in this process
  // "plain" (HTTP), "tls" (HTTPS with mutual TLS) or "plain,tls" (both, compared). Every
  // request carries a scorer's bearer token either way, so the two differ by transport alone.
  std::string transport = "plain";
  // With --target: the server's credentials (its own token; for tls its CA, and the client
  // certificate and key when it asks for one).
  std::string token, tls_ca, tls_cert, tls_key;
};

// The in-process server's credentials for one point: a scorer token in its data dir and, for
// TLS, a throwaway PKI beside it.
struct BenchCredentials {
  std::string token;
  std::optional<BenchPki> pki;
};

// Resident set size of this process (server and client together), from /proc.
double RssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

absl::StatusOr<std::vector<double>> ParseNumbers(const std::string& text, const char* flag) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v = 0;
    if (!absl::SimpleAtod(part, &v) || !(v > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": '", part, "' is not a positive number"));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": empty list"));
  return out;
}

// A realistic pool of payments (vigil gen's population) to send, with fresh ids.
absl::StatusOr<std::vector<Transaction>> PaymentPool(const FxRates& fx) {
  std::ostringstream csv;
  synth::GeneratorOptions g;
  g.accounts = 20000;
  g.days = 5;
  g.seed = 42;
  if (auto s = synth::GenerateTransactions(g, fx, csv); !s.ok()) return s.status();
  ReaderOptions options;
  options.source_name = "bench";
  auto reader = OpenTransactionBuffer(csv.str(), options);
  if (!reader.ok()) return reader.status();
  std::vector<Transaction> pool;
  JsonTransactionParser api_parser;
  Transaction tx;
  RecordError error;
  while (true) {
    absl::StatusOr<ReadResult> r = (*reader)->Next(&tx, &error);
    if (!r.ok()) return r.status();
    if (*r == ReadResult::kEnd) break;
    if (*r != ReadResult::kRecord) continue;
    // Only what the API accepts (it enforces ISO minor units, which a few generated Bitcoin
    // amounts exceed): the benchmark measures decisions, not rejections.
    Transaction parsed;
    RecordError api_error;
    if (api_parser.Parse(TransactionToJson(tx), &parsed, &api_error)) pool.push_back(tx);
  }
  if (pool.empty()) return absl::InternalError("the generator produced no payments");
  return pool;
}

// What a point sends: the pool, cycled, and with screening on the listed names that every
// kListedNameEvery-th request pays instead of its beneficiary's own name.
struct Payments {
  std::vector<Transaction> pool;
  std::vector<std::string> listed_names;
};

// Names every party of the pool by its account (BenchPartyName) and collects the primary name
// of every entry of "lists", in list order. Done once, before any point: the request source
// then only copies a pooled payment (and, one request in kListedNameEvery, a listed name).
absl::Status NameParties(const std::vector<std::string>& lists, Payments* payments) {
  for (const std::string& path : lists) {
    absl::StatusOr<std::shared_ptr<const screening::Watchlist>> list =
        screening::LoadWatchlistSource(path);
    if (!list.ok()) return list.status();
    for (const screening::WatchlistEntry& e : (*list)->entries()) {
      payments->listed_names.push_back(e.name);
    }
  }
  if (payments->listed_names.empty()) {
    return absl::InvalidArgumentError("--screening-list: the lists have no entries");
  }
  for (Transaction& tx : payments->pool) {
    tx.originator.name = BenchPartyName(tx.originator.account_id);
    tx.beneficiary.name = BenchPartyName(tx.beneficiary.account_id);
  }
  return absl::OkStatus();
}

struct Point {
  std::string setting;
  LoadResult client;
  // The server's own decision-path latency (stage "total": body received → decision encoded).
  double server_p50_us = 0, server_p99_us = 0, server_p999_us = 0, server_p0_p99_us = 0;
  // Body received → audit record durable (stage "durable"): when the answer may leave.
  double durable_p50_us = 0, durable_p99_us = 0;
  double rss_before = 0, rss_quarter = 0, rss_after = 0;
  bool overload = false;
};

// The most keep-alive connections one point opens (file descriptors, client memory).
constexpr int kMaxBenchConnections = 2048;

absl::StatusOr<Point> RunPoint(const BenchFlags& flags, const FxRates& fx, const Payments& payments,
                               const std::string& preset, bool durable_ack, bool tls, double rate,
                               const std::array<int, 3>& mix, int run, bool overload) {
  ServeConfig config = flags.base;
  config.port = 0;
  const std::string dir = absl::StrCat(std::filesystem::temp_directory_path().string(),
                                       "/vigil-bench-", getpid(), "-", run);
  std::filesystem::remove_all(dir);
  config.data_dir = dir;
  config.audit.durable_ack = durable_ack;
  // Beyond capacity the server must see the excess (and shed it), not the client's backlog:
  // one connection carries one request at a time, so the client needs about rate x answer
  // time of them (Little's law). 50 ms per answer is what the server lets a request wait
  // (workers.max_queue_delay_ms) before it refuses the next; the 3x point gets at least 512.
  const int connections = std::min(
      std::max({flags.connections, static_cast<int>(std::ceil(rate * 0.05)), overload ? 512 : 0}),
      kMaxBenchConnections);
  // One client address holds them all: the server's connection limits must let it.
  config.limits.max_connections =
      std::max(config.limits.max_connections, static_cast<size_t>(connections) + 16);
  config.limits.max_connections_per_client = config.limits.max_connections;
  config.log_path = absl::StrCat(dir, ".log");
  BenchCredentials credentials;
  if (flags.target.empty()) {
    // As a bank would run it: tokens, and for tls HTTPS with mutual TLS.
    std::filesystem::create_directories(dir);
    absl::StatusOr<std::string> token = AccessTokens::Create(dir, Role::kScorer, "vigil bench");
    if (!token.ok()) return token.status();
    credentials.token = *std::move(token);
    config.auth.mode = "tokens";
    if (tls) {
      absl::StatusOr<BenchPki> pki = MakeBenchPki(absl::StrCat(dir, "-pki"));
      if (!pki.ok()) return pki.status();
      config.tls.cert = pki->server_cert;
      config.tls.key = pki->server_key;
      config.tls.client_ca = pki->ca_cert;
      credentials.pki = *std::move(pki);
    } else {
      config.plaintext = true;
    }
  } else {
    credentials.token = flags.token;
  }
  if (flags.target.empty()) {
    absl::StatusOr<BatchPolicyConfig> batcher = BatcherPreset(preset);
    if (!batcher.ok()) return batcher.status();
    config.batcher = *batcher;
  }
  config.batcher_preset = preset;
  Point point;
  point.setting = flags.durable_ack == "on" ? preset : absl::StrCat(preset, durable_ack ? "/ack" : "/async");
  if (flags.transport != "plain") absl::StrAppend(&point.setting, tls ? "/tls" : "/plain");
  point.rss_before = RssMiB();
  point.overload = overload;
  // With --target the server is another process (say, pinned to other cores): the client
  // side alone is measured here, the server's own figures are on its /metrics.
  std::unique_ptr<VigilServer> server;
  if (flags.target.empty()) {
    absl::StatusOr<std::unique_ptr<VigilServer>> started = VigilServer::Start(config, fx);
    if (!started.ok()) return started.status();
    server = *std::move(started);
  }

  LoadOptions load;
  if (server != nullptr) {
    load.port = server->port();
  } else if (absl::Status s = ParseListen(flags.target, &load.host, &load.port); !s.ok()) {
    return s;
  }
  load.connections = connections;
  load.threads = flags.client_threads;
  load.mode = flags.mode == "closed" ? LoadOptions::Mode::kClosed : LoadOptions::Mode::kOpen;
  load.offered_rps = rate;
  load.duration = std::chrono::milliseconds(flags.duration_ms);
  load.warmup = std::chrono::milliseconds(flags.warmup_ms);
  load.response_timeout = std::chrono::milliseconds(5000);
  if (tls) {
    load.tls.enabled = true;
    load.tls.ca_file = credentials.pki ? credentials.pki->ca_cert : flags.tls_ca;
    load.tls.cert_file = credentials.pki ? credentials.pki->client_cert : flags.tls_cert;
    load.tls.key_file = credentials.pki ? credentials.pki->client_key : flags.tls_key;
  }
  const std::string authorization =
      credentials.token.empty() ? "" : absl::StrCat("Bearer ", credentials.token);
  const std::vector<Transaction>& pool = payments.pool;
  const UtcTime base = pool.front().event_time;
  const int total_mix = mix[0] + mix[1] + mix[2];
  auto source = [&](uint64_t i, LoadRequest* out) {
    Transaction tx = pool[i % pool.size()];
    tx.id = absl::StrCat("bench-", run, "-", i);
    // Event time moves forward, one payment per millisecond.
    tx.event_time = base + std::chrono::milliseconds(static_cast<int64_t>(i));
    const int slot = static_cast<int>((i * 7919) % static_cast<uint64_t>(total_mix));
    tx.priority = slot < mix[0]            ? Priority::kP0
                  : slot < mix[0] + mix[1] ? Priority::kP1
                                           : Priority::kP2;
    tx.label.reset();
    if (const std::string* listed = ListedBeneficiaryName(i, payments.listed_names)) {
      tx.beneficiary.name = *listed;
    }
    out->path = "/v1/score";
    out->body = TransactionToJson(tx);
    if (!authorization.empty()) out->headers.emplace_back("Authorization", authorization);
  };
  // Memory over the run: sampled at a quarter of the measured time and at its end.
  std::thread sampler([&point, &load] {
    std::this_thread::sleep_for(load.warmup + load.duration / 4);
    point.rss_quarter = RssMiB();
  });
  absl::StatusOr<LoadResult> result = RunLoad(load, source);
  sampler.join();
  if (!result.ok()) return result.status();
  point.client = *std::move(result);
  point.rss_after = RssMiB();
  if (server == nullptr) return point;
  LatencyHistogram all;
  for (Priority p : {Priority::kP0, Priority::kP1, Priority::kP2}) {
    if (const LatencyHistogram* h = server->service().StageLatency("total", p)) all.Merge(*h);
  }
  const auto us = [](std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e3; };
  point.server_p50_us = us(all.Percentile(50));
  point.server_p99_us = us(all.Percentile(99));
  point.server_p999_us = us(all.Percentile(99.9));
  if (const LatencyHistogram* h = server->service().StageLatency("total", Priority::kP0)) {
    point.server_p0_p99_us = us(h->Percentile(99));
  }
  LatencyHistogram durable;
  for (Priority p : {Priority::kP0, Priority::kP1, Priority::kP2}) {
    if (const LatencyHistogram* h = server->service().StageLatency("durable", p)) durable.Merge(*h);
  }
  point.durable_p50_us = us(durable.Percentile(50));
  point.durable_p99_us = us(durable.Percentile(99));
  if (flags.stages) {
    std::cerr << "    server stages P50/P99 µs (all classes):";
    for (const char* stage : {"parse", "features", "model", "rules", "explain", "encode", "total",
                              "audit", "durable"}) {
      LatencyHistogram h;
      for (Priority p : {Priority::kP0, Priority::kP1, Priority::kP2}) {
        if (const LatencyHistogram* s = server->service().StageLatency(stage, p)) h.Merge(*s);
      }
      std::cerr << " " << stage << " " << us(h.Percentile(50)) << "/" << us(h.Percentile(99));
    }
    std::cerr << "\n";
  }
  point.rss_after = RssMiB();
  server->Shutdown().IgnoreError();
  server.reset();
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(absl::StrCat(dir, "-pki"));
  std::filesystem::remove(absl::StrCat(dir, ".log"));
  return point;
}

std::string Table(const std::vector<Point>& points) {
  std::vector<SweepPoint> sweep;
  for (const Point& p : points) {
    SweepPoint s;
    s.setting = p.setting;
    s.result.achieved_rps = p.client.achieved_rps;
    s.result.ok_latency = std::make_unique<LatencyHistogram>();
    s.result.ok_latency->Merge(*p.client.ok_latency);
    s.result.latency = std::make_unique<LatencyHistogram>();
    sweep.push_back(std::move(s));
  }
  const std::vector<bool> best = ParetoBest(sweep);
  std::string out = absl::StrFormat(
      "%-16s %9s %9s | %8s %8s %9s | %8s %8s %9s %8s | %8s %8s | %7s %6s %6s %5s | %13s %s\n",
      "batcher", "offered", "achieved", "cli_p50", "cli_p99", "cli_p99.9", "srv_p50", "srv_p99",
      "srv_p99.9", "P0_p99", "dur_p50", "dur_p99", "ok", "shed", "degr", "err",
      "rss_MiB 1/4>end", "");
  const auto us = [](const LatencyHistogram& h, double p) {
    return static_cast<double>(h.Percentile(p).count()) / 1e3;
  };
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const LoadResult& c = p.client;
    absl::StrAppendFormat(
        &out,
        "%-16s %9.0f %9.0f | %8.0f %8.0f %9.0f | %8.0f %8.0f %9.0f %8.0f | %8.0f %8.0f | %7d %6d %6d %5d | %6.0f>%6.0f %s%s\n",
        p.setting, c.offered_rps, c.achieved_rps, us(*c.ok_latency, 50), us(*c.ok_latency, 99),
        us(*c.ok_latency, 99.9), p.server_p50_us, p.server_p99_us, p.server_p999_us,
        p.server_p0_p99_us, p.durable_p50_us, p.durable_p99_us, c.ok, c.shed, c.degraded,
        c.other_status + c.timeouts + c.connection_errors + c.dropped, p.rss_quarter, p.rss_after,
        best[i] ? "*" : "", p.overload ? " (3x)" : "");
  }
  out += "latencies in µs; cli = client end to end of the 2xx answers (open loop: from the "
         "scheduled send), srv = "
         "the server's decision path (body received → decision encoded), dur = body received → "
         "audit record durable (the answer may leave; /ack: it waits for that, /async: it does "
         "not); * = Pareto-best "
         "(achieved QPS vs client P99 of 2xx)\n";
  return out;
}

int RunBenchHttp(const BenchFlags& flags) {
  if (absl::Status s = flags.config_flags->Apply(); !s.ok()) {
    std::cerr << "vigil bench http: " << s.message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<FxRates> fx = LoadFxRates(flags.base.fx_rates);
  if (!fx.ok()) {
    std::cerr << "vigil bench http: " << fx.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::vector<double>> rates = ParseNumbers(flags.rates, "--rates");
  absl::StatusOr<std::vector<double>> mix_values = ParseNumbers(flags.mix, "--mix");
  if (!rates.ok() || !mix_values.ok() || mix_values->size() != 3) {
    std::cerr << "vigil bench http: "
              << (!rates.ok() ? rates.status().message()
                  : !mix_values.ok() ? mix_values.status().message()
                                     : "--mix: three shares, P0,P1,P2")
              << "\n";
    return kExitUsage;
  }
  if (flags.mode != "open" && flags.mode != "closed") {
    std::cerr << "vigil bench http: --mode: open or closed\n";
    return kExitUsage;
  }
  const std::array<int, 3> mix = {static_cast<int>((*mix_values)[0]),
                                  static_cast<int>((*mix_values)[1]),
                                  static_cast<int>((*mix_values)[2])};
  absl::StatusOr<std::vector<Transaction>> pool = PaymentPool(*fx);
  if (!pool.ok()) {
    std::cerr << "vigil bench http: " << pool.status().message() << "\n";
    return kExitUsage;
  }
  Payments payments{*std::move(pool), {}};
  if (!flags.base.screening.lists.empty()) {
    if (absl::Status s = NameParties(flags.base.screening.lists, &payments); !s.ok()) {
      std::cerr << "vigil bench http: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  std::vector<Point> points;
  int run = 0;
  const std::string settings = flags.target.empty() ? flags.batchers : "external";
  std::vector<bool> ack_modes;
  for (absl::string_view mode : absl::StrSplit(flags.durable_ack, ',', absl::SkipEmpty())) {
    if (mode != "on" && mode != "off") {
      std::cerr << "vigil bench http: --durable-acks: on, off or on,off\n";
      return kExitUsage;
    }
    ack_modes.push_back(mode == "on");
  }
  if (ack_modes.empty()) ack_modes.push_back(true);
  std::vector<bool> transports;
  for (absl::string_view t : absl::StrSplit(flags.transport, ',', absl::SkipEmpty())) {
    if (t != "plain" && t != "tls") {
      std::cerr << "vigil bench http: --transport: plain, tls or plain,tls\n";
      return kExitUsage;
    }
    transports.push_back(t == "tls");
  }
  if (transports.empty()) transports.push_back(false);
  if (!flags.target.empty() && absl::c_linear_search(transports, true) && flags.tls_ca.empty()) {
    std::cerr << "vigil bench http: --transport tls with --target needs --tls-ca (and "
                 "--tls-cert, --tls-key when the server asks for a client certificate)\n";
    return kExitUsage;
  }
  if (flags.target.empty() &&
      !(flags.token.empty() && flags.tls_ca.empty() && flags.tls_cert.empty() &&
        flags.tls_key.empty())) {
    std::cerr << "vigil bench http: --token and --tls-* name a --target's credentials; the "
                 "in-process server makes its own\n";
    return kExitUsage;
  }
  for (absl::string_view preset_view : absl::StrSplit(settings, ',', absl::SkipEmpty())) {
  for (const bool durable_ack : ack_modes) {
  for (const bool tls : transports) {
    const std::string preset(preset_view);
    double sustainable = 0;
    for (const double rate : *rates) {
      absl::StatusOr<Point> p =
          RunPoint(flags, *fx, payments, preset, durable_ack, tls, rate, mix, run++, false);
      if (!p.ok()) {
        std::cerr << "vigil bench http: " << p.status().message() << "\n";
        return kExitUsage;
      }
      const LoadResult& c = p->client;
      if (c.shed == 0 && c.timeouts == 0 && c.dropped == 0 &&
          c.achieved_rps >= 0.95 * rate) {
        sustainable = std::max(sustainable, rate);
      }
      std::cerr << "  " << p->setting << " at " << rate << " req/s: achieved " << c.achieved_rps
                << ", server P99 " << p->server_p99_us << " µs; statuses";
      for (const auto& [status, count] : c.by_status) std::cerr << " " << status << ":" << count;
      for (const auto& [reason, count] : c.errors_by_reason) {
        std::cerr << "; " << reason << ": " << count;
      }
      if (c.timeouts + c.dropped > 0) {
        std::cerr << "; timeouts " << c.timeouts << ", dropped " << c.dropped;
      }
      std::cerr << "\n";
      points.push_back(*std::move(p));
    }
    if (flags.overload && flags.mode == "open" && sustainable > 0) {
      absl::StatusOr<Point> p =
          RunPoint(flags, *fx, payments, preset, durable_ack, tls, 3 * sustainable, mix, run++,
                   true);
      if (!p.ok()) {
        std::cerr << "vigil bench http: " << p.status().message() << "\n";
        return kExitUsage;
      }
      points.push_back(*std::move(p));
    }
  }
  }
  }
  std::cout << "vigil bench http: model " << flags.base.model << ", policy " << flags.base.policy << ", "
            << flags.mode << " loop, at least " << flags.connections
            << " connections (rate x 50 ms), mix P0/P1/P2 "
            << flags.mix << ", " << flags.duration_ms << " ms per point";
  if (!flags.base.screening.lists.empty()) {
    std::cout << ", screening against " << absl::StrJoin(flags.base.screening.lists, ", ") << " ("
              << payments.listed_names.size() << " entries; every " << kListedNameEvery
              << "th beneficiary listed)";
  }
  std::cout << "\n" << Table(points);
  if (!flags.json_out.empty()) {
    std::ofstream out(flags.json_out);
    out << "[";
    for (size_t i = 0; i < points.size(); ++i) {
      const Point& p = points[i];
      const LoadResult& c = p.client;
      out << (i ? ",\n" : "\n")
          << absl::StrFormat(
                 R"({"batcher":"%s","overload":%s,"offered":%.0f,"achieved":%.1f,)"
                 R"("client_p99_us":%.1f,"server_p50_us":%.1f,"server_p99_us":%.1f,)"
                 R"("server_p999_us":%.1f,"server_p0_p99_us":%.1f,"durable_p50_us":%.1f,)"
                 R"("durable_p99_us":%.1f,"ok":%d,"shed":%d,)"
                 R"("degraded":%d,"errors":%d,"rss_mib":%.1f})",
                 p.setting, p.overload ? "true" : "false", c.offered_rps, c.achieved_rps,
                 static_cast<double>(c.ok_latency->Percentile(99).count()) / 1e3,
                 p.server_p50_us, p.server_p99_us, p.server_p999_us, p.server_p0_p99_us,
                 p.durable_p50_us, p.durable_p99_us, c.ok,
                 c.shed, c.degraded, c.other_status + c.timeouts + c.connection_errors + c.dropped,
                 p.rss_after);
    }
    out << "\n]\n";
  }
  return kExitOk;
}

struct DriftBenchFlags {
  std::string input;
  // --model, --policy, --fx-rates, --drift-profile (default: reference_profile.json beside
  // the model), --drift-measured-null (default: drift_null.json beside the profile) and the
  // monitor's other settings, as vigil replay takes them.
  PipelineConfig pipeline;
  config::OptionSet settings;
  std::unique_ptr<ConfigFlags> config_flags;
  int repeat = 5;
  std::string json_out;
};

// The drift monitor's cost on the full replay pipeline (features, model, policy): replays of
// one file alternate without and with the monitor, so both see the same machine state; the
// medians' ratio is the overhead. Beside the wall clock, which a shared machine makes noisy,
// the replay thread's own CPU time says what the monitor adds to the decision path (the tap's
// copies, a colder cache), and the monitor thread's CPU time how much room it has to keep up.
int RunBenchDrift(const DriftBenchFlags& flags) {
  if (absl::Status s = flags.config_flags->Apply(); !s.ok()) {
    std::cerr << "vigil bench drift: " << s.message() << "\n";
    return kExitUsage;
  }
  const PipelineConfig& p = flags.pipeline;
  absl::StatusOr<FxRates> fx = LoadFxRates(p.fx_rates);
  if (!fx.ok()) {
    std::cerr << "vigil bench drift: " << fx.status().message() << "\n";
    return kExitUsage;
  }
  DecisionConfig decision;
  decision.policy_path = p.policy;
  decision.model_path = p.model;
  decision.lists_dir = p.lists;
  decision.chain = ModelChainOptions::For(p, PipelineMode::kReplay);
  absl::StatusOr<std::unique_ptr<DecisionMaker>> decider = BuildDecisionMaker(decision);
  if (!decider.ok()) {
    std::cerr << "vigil bench drift: " << decider.status().message() << "\n";
    return kExitUsage;
  }
  const std::string profile_path = p.DriftProfilePath();
  if (profile_path.empty()) {
    std::cerr << "vigil bench drift: no reference profile: give --drift-profile, or a --model "
                 "with reference_profile.json beside it\n";
    return kExitUsage;
  }
  absl::StatusOr<drift::ReferenceProfile> profile = drift::ReferenceProfile::Load(profile_path);
  if (!profile.ok()) {
    std::cerr << "vigil bench drift: " << profile.status().message() << "\n";
    return kExitUsage;
  }
  const std::string null_path = p.DriftNullPath(profile_path);
  std::shared_ptr<const drift::MeasuredNull> measured;
  if (!null_path.empty()) {
    absl::StatusOr<drift::MeasuredNull> loaded = drift::MeasuredNull::Load(null_path);
    if (!loaded.ok()) {
      std::cerr << "vigil bench drift: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    measured = std::make_shared<const drift::MeasuredNull>(*std::move(loaded));
  }
  std::vector<double> off, on, off_cpu, on_cpu, monitor_cpu, monitor_share;
  int64_t records = 0, evaluations = 0;
  std::string worst;
  for (int i = 0; i < 2 * flags.repeat; ++i) {
    ReplayOptions o;
    o.input_path = flags.input;
    o.decisions = decider->get();
    const bool with_drift = i % 2 == 1;
    if (with_drift) {
      o.drift_profile = &*profile;
      o.drift = p.drift.monitor;
      o.drift.measured_null = measured;
    }
    const double cpu_start = ThreadCpuSeconds();
    absl::StatusOr<ReplaySummary> s = RunReplay(o, *fx, RealClock());
    const double cpu = ThreadCpuSeconds() - cpu_start;
    if (!s.ok()) {
      std::cerr << "vigil bench drift: " << s.status().message() << "\n";
      return kExitUsage;
    }
    records = s->records;
    (with_drift ? on : off).push_back(s->records_per_second);
    (with_drift ? on_cpu : off_cpu).push_back(cpu);
    std::printf("run %2d  drift %-3s  %9.0f records/s  replay thread %.2f s CPU", i + 1,
                with_drift ? "on" : "off", s->records_per_second, cpu);
    if (with_drift && s->drift.has_value()) {
      evaluations = s->drift->evaluations;
      worst = s->drift->worst_level;
      monitor_cpu.push_back(s->drift->monitor_cpu_seconds);
      monitor_share.push_back(s->elapsed_seconds > 0
                                  ? s->drift->monitor_cpu_seconds / s->elapsed_seconds
                                  : 0);
      std::printf("  monitor %.2f s CPU  (replay waited %.2f s for queue room, %.2f s at the end)",
                  s->drift->monitor_cpu_seconds, s->drift->blocked_seconds,
                  s->drift->drain_seconds);
    }
    std::printf("\n");
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  const double m_off = median(off), m_on = median(on);
  const double overhead = 1 - m_on / m_off;
  // Each "on" run against the "off" run just before it: a slow spell of a shared machine
  // then moves both sides of a ratio, not one median.
  std::vector<double> paired;
  for (size_t i = 0; i < on.size(); ++i) paired.push_back(1 - on[i] / off[i]);
  const double paired_overhead = median(paired);
  // The fastest run of each: the one a noisy neighbour disturbed least.
  const double best_overhead =
      1 - *std::max_element(on.begin(), on.end()) / *std::max_element(off.begin(), off.end());
  const double cpu_off = median(off_cpu), cpu_on = median(on_cpu);
  const double cpu_overhead = cpu_on / cpu_off - 1;
  const double m_monitor = median(monitor_cpu), m_share = median(monitor_share);
  std::printf(
      "drift monitoring overhead on the full replay pipeline (%zu features, %lld records, "
      "%lld window evaluations, worst level %s), medians of %d:\n"
      "  throughput          off %.0f records/s, on %.0f records/s: overhead %.1f%% "
      "(median of the runs' pairs %.1f%%, best runs %.1f%%)\n"
      "  replay thread CPU   off %.3f s, on %.3f s: %+.1f%%\n"
      "  monitor thread CPU  %.3f s, busy %.0f%% of the replay's time\n",
      FeatureExtractor::Schema()->size(), static_cast<long long>(records),
      static_cast<long long>(evaluations), worst.c_str(), flags.repeat, m_off, m_on,
      100 * overhead, 100 * paired_overhead, 100 * best_overhead, cpu_off, cpu_on, 100 * cpu_overhead, m_monitor, 100 * m_share);
  if (!flags.json_out.empty()) {
    std::ofstream out(flags.json_out, std::ios::binary | std::ios::trunc);
    out << absl::StrFormat(
        "{\"input\":\"%s\",\"features\":%d,\"records\":%d,\"evaluations\":%d,"
        "\"off_records_per_second\":%.1f,\"on_records_per_second\":%.1f,\"overhead\":%.4f,"
        "\"paired_overhead\":%.4f,\"best_overhead\":%.4f,\"off_replay_cpu_seconds\":%.4f,\"on_replay_cpu_seconds\":%.4f,"
        "\"replay_cpu_overhead\":%.4f,\"monitor_cpu_seconds\":%.4f,\"monitor_busy_share\":%.4f}\n",
        flags.input, FeatureExtractor::Schema()->size(), records, evaluations, m_off, m_on,
        overhead, paired_overhead, best_overhead, cpu_off, cpu_on, cpu_overhead, m_monitor, m_share);
  }
  return kExitOk;
}

}  // namespace

Command AddBenchCommand(CLI::App& vigil) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* app = vigil.add_subcommand("bench", "Measure vigil end to end");
  app->require_subcommand(1);
  CLI::App* http = app->add_subcommand(
      "http",
      "Sweep offered load over loopback against an in-process vigil serve (a fresh one per "
      "point), for each batcher preset: offered and achieved QPS, client and server latency "
      "percentiles, shed (503) and degraded counts, memory; marks the Pareto-best; then 3x the "
      "highest sustainable rate (open loop)");
  // The server's own settings: --model, --policy, --workers, --no-drift, --screening-list, ...
  flags->base.model = "testdata/models/serve_model.json";
  flags->base.policy = "policies/default.yaml";
  DeclareServeOptions(&flags->base, &flags->settings);
  flags->config_flags = std::make_unique<ConfigFlags>(http, &flags->settings, config::kBench);
  http->add_option("--batchers", flags->batchers, "Batcher presets to compare")
      ->capture_default_str();
  http->add_option("--rates", flags->rates, "Offered loads, requests per second")
      ->capture_default_str();
  http->add_option("--mix", flags->mix, "Shares of P0,P1,P2 requests")->capture_default_str();
  http->add_option("--mode", flags->mode, "open (arrivals at the offered rate) or closed")
      ->capture_default_str();
  http->add_option("--duration-ms", flags->duration_ms, "Measured time per point")
      ->capture_default_str();
  http->add_option("--warmup-ms", flags->warmup_ms, "Unmeasured time per point")
      ->capture_default_str();
  http->add_option("--connections", flags->connections,
                   "Keep-alive connections, at least (a point opens rate x 50 ms of them, the 3x "
                   "point 512 or more, up to 2048)")
      ->capture_default_str();
  http->add_option("--client-threads", flags->client_threads, "Load generator threads")
      ->capture_default_str();
  http->add_flag("!--no-overload", flags->overload, "Skip the 3x-sustainable point");
  http->add_flag("--stages", flags->stages, "Print the server's per-stage latency per point");
  http->add_option("--durable-acks", flags->durable_ack,
                   "on: each answer waits for its audit record to be durable (vigil serve's "
                   "default); off: it does not; on,off: both, compared")
      ->capture_default_str();
  http->add_option("--json-out", flags->json_out, "Also write the points as JSON");
  http->add_option("--transport", flags->transport,
                   "plain: HTTP; tls: HTTPS with mutual TLS (a throwaway CA, server and client "
                   "certificate, EC P-256); plain,tls: both, compared. Every request carries a "
                   "scorer's bearer token either way")
      ->capture_default_str();
  http->add_option("--token", flags->token,
                   "With --target: the bearer token to send (vigil token create --role scorer)");
  http->add_option("--tls-ca", flags->tls_ca, "With --target and --transport tls: the server's CA");
  http->add_option("--tls-cert", flags->tls_cert,
                   "With --target and --transport tls: the client certificate for mutual TLS");
  http->add_option("--tls-key", flags->tls_key, "Its private key");
  http->add_option("--target", flags->target,
                   "HOST:PORT of a running vigil serve to load instead of one in this process "
                   "(one batcher setting: the server's; its own latency figures are on /metrics)");
  http->footer(
      "Examples:\n"
      "  vigil bench http --model build/demo/model/model.json --rates 10000,20000,30000\n"
      "  vigil bench http --model build/demo/model/model.json --batchers immediate \\\n"
      "      --transport plain,tls\n"
      "  vigil bench http --model build/demo/model/model.json --batchers immediate \\\n"
      "      --screening-list testdata/sanctions/ofac_sdn_legacy_csv_2019\n"
      "The client and the server share this machine: figures are for the pair.");
  auto drift_flags = std::make_shared<DriftBenchFlags>();
  CLI::App* drift = app->add_subcommand(
      "drift",
      "The drift monitor's overhead on the full replay pipeline (features, model, policy): "
      "replays of FILE alternate without and with the monitor; medians and their ratio");
  drift->add_option("FILE", drift_flags->input, "Transactions to replay")->required();
  drift_flags->pipeline.model = "build/demo/model/model.json";
  drift_flags->pipeline.policy = "policies/default.yaml";
  DeclarePipelineOptions(&drift_flags->pipeline, &drift_flags->settings);
  drift_flags->config_flags =
      std::make_unique<ConfigFlags>(drift, &drift_flags->settings, config::kBench);
  drift->add_option("--repeat", drift_flags->repeat, "Runs of each")->capture_default_str();
  drift->add_option("--json-out", drift_flags->json_out, "Also write the result as JSON");
  return Command{app, [flags, http, drift_flags, drift] {
                   if (http->parsed()) return RunBenchHttp(*flags);
                   if (drift->parsed()) return RunBenchDrift(*drift_flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
