// `vigil serve` as nodes of a cluster (docs/cluster.md), each a child process, over a real
// nats-server on loopback: payments posted to any node are decided once by their partition's
// owner and answered by the node that took them; nodes killed with SIGKILL under load lose no
// acknowledged decision and double none; `vigil cluster status` shows the nodes and leases.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/cluster/cluster_layout.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/decision/decision_json.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::cluster::testing::NatsServers;
using ::vigil::testing::CountOf;
using ::vigil::testing::kCountingPolicy;
using ::vigil::testing::ServeProcess;
using ::vigil::testing::TestHttpClient;
using ::vigil::testing::TestHttpResponse;
using ::vigil::testing::Tx;

constexpr int kNodes = 3;
constexpr int kPartitions = 8;
constexpr int kAccounts = 12;
constexpr int kClients = 4;

// Ids carry their account: "...@acct-<k>".
std::string AccountOf(const std::string& id) { return id.substr(id.find('@') + 1); }

// What the log holds: each decided transaction id with its decisions' JSON, in log order.
std::map<std::string, std::vector<std::string>> DecisionsInLog(cluster::NatsConnection& nats,
                                                               const std::string& stream) {
  std::map<std::string, std::vector<std::string>> out;
  absl::StatusOr<cluster::StreamStatus> status = nats.StatusOf(stream);
  EXPECT_OK(status);
  if (!status.ok()) return out;
  absl::StatusOr<std::unique_ptr<cluster::StreamReader>> reader = nats.Read(stream, "", 1);
  EXPECT_OK(reader);
  if (!reader.ok()) return out;
  uint64_t at = 0;
  while (at < status->last_sequence) {
    absl::StatusOr<std::optional<cluster::StreamMessage>> next =
        (*reader)->Next(std::chrono::milliseconds(5000));
    EXPECT_OK(next);
    if (!next.ok() || !next->has_value()) break;
    const cluster::StreamMessage& m = **next;
    at = m.sequence;
    if (m.Header(cluster::kKindHeader) != cluster::kDecisionsKind) continue;
    absl::StatusOr<std::vector<cluster::DecidedPayment>> batch = cluster::DecodeDecisions(m.data);
    EXPECT_OK(batch);
    if (!batch.ok()) continue;
    for (const cluster::DecidedPayment& d : *batch) {
      absl::StatusOr<audit::AuditRecord> record = cluster::DecodeDecidedRecord(d.record);
      EXPECT_OK(record);
      if (record.ok()) out[d.transaction_id].push_back(DecisionToJson(record->decision));
    }
  }
  return out;
}

// A TCP relay on loopback between a node and its nats-server, which the test can cut (every
// connection closed, new ones refused: a network partition of that node) and heal.
class LoopbackRelay {
 public:
  explicit LoopbackRelay(uint16_t upstream) : upstream_(upstream) {
    port_ = static_cast<uint16_t>(cluster::testing::FreeLoopbackPort());
    Listen();
    thread_ = std::thread([this] { Run(); });
  }
  ~LoopbackRelay() {
    stop_ = true;
    thread_.join();
    CloseAll();
  }
  std::string url() const { return absl::StrCat("nats://127.0.0.1:", port_); }
  void Cut() { cut_ = true; }
  void Heal() { cut_ = false; }

 private:
  void Listen() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port_);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
  }
  void CloseAll() {
    for (const auto& [a, b] : pairs_) {
      ::close(a);
      ::close(b);
    }
    pairs_.clear();
    if (listener_ >= 0) ::close(listener_);
    listener_ = -1;
  }
  void Run() {
    while (!stop_) {
      if (cut_) {  // the partition: nothing passes, nothing connects
        if (listener_ >= 0) CloseAll();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (listener_ < 0) Listen();
      std::vector<pollfd> fds = {{listener_, POLLIN, 0}};
      for (const auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client >= 0) {
          const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          sockaddr_in address{};
          address.sin_family = AF_INET;
          address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
          address.sin_port = htons(upstream_);
          if (::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
            pairs_.push_back({client, server});
          } else {
            ::close(client);
            ::close(server);
          }
        }
      }
      std::vector<size_t> closed;
      for (size_t k = 0; k < pairs_.size(); ++k) {
        for (int side = 0; side < 2; ++side) {
          if (!(fds[1 + 2 * k + side].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          const int from = side == 0 ? pairs_[k].first : pairs_[k].second;
          const int to = side == 0 ? pairs_[k].second : pairs_[k].first;
          char buffer[65536];
          const ssize_t n = ::read(from, buffer, sizeof(buffer));
          if (n <= 0 || ::send(to, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) != n) {
            closed.push_back(k);
            break;
          }
        }
      }
      for (auto it = closed.rbegin(); it != closed.rend(); ++it) {
        ::close(pairs_[*it].first);
        ::close(pairs_[*it].second);
        pairs_.erase(pairs_.begin() + static_cast<std::ptrdiff_t>(*it));
      }
    }
  }

  uint16_t upstream_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::vector<std::pair<int, int>> pairs_;  // client, server; the relay thread's only
  std::atomic<bool> cut_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class ServeClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_cluster_", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << kCountingPolicy;
    std::filesystem::create_directories(dir_ + "/nats");
    absl::StatusOr<std::unique_ptr<NatsServers>> nats = NatsServers::Start(1, dir_ + "/nats");
    ASSERT_OK(nats);
    nats_ = *std::move(nats);
    nodes_.resize(kNodes);
    for (int k = 0; k < kNodes; ++k) ASSERT_NO_FATAL_FAILURE(StartNode(k));
  }
  void TearDown() override {
    nodes_.clear();
    nats_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Node k, on a data dir of its own: emptied (it builds its state from the log, or from the
  // last shipped checkpoint), or with "keep_data" as the node left it. "nats": the URL the node
  // connects to ("" for the server's own).
  void StartNode(int k, const std::string& nats = "", bool keep_data = false) {
    const std::string data = absl::StrCat(dir_, "/node", k);
    if (!keep_data) std::filesystem::remove_all(data);
    const std::string source = ::vigil::testing::SourceDir();
    std::vector<std::string> argv = {VIGIL_BINARY,
                                     "serve",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--plaintext",
                                     "--auth",
                                     "none",
                                     "--data-dir",
                                     data,
                                     "--policy",
                                     dir_ + "/count.yaml",
                                     "--fx-rates",
                                     source + "/data/fx_rates.csv",
                                     "--log",
                                     absl::StrCat(dir_, "/node", k, ".requests.log"),
                                     "--no-drift",
                                     "--workers",
                                     "16",
                                     "--cluster-nats",
                                     nats.empty() ? nats_->url(0) : nats,
                                     "--cluster-node-id",
                                     absl::StrCat("n", k),
                                     "--cluster-partitions",
                                     absl::StrCat(kPartitions),
                                     "--cluster-replicas",
                                     "1",
                                     "--cluster-lease-ttl-ms",
                                     "1000"};
    argv.insert(argv.end(), flags_.begin(), flags_.end());
    absl::StatusOr<std::unique_ptr<ServeProcess>> started =
        ServeProcess::Start(argv, absl::StrCat(dir_, "/node", k, ".stderr"));
    ASSERT_OK(started);
    nodes_[k] = *std::move(started);
  }

  // Posts "id" to node "first", then to the others in turn, until one answers 200 (a node
  // killed, or a partition between owners, answers nothing or 503): the decision's body.
  std::string Decide(const std::string& id, int first) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int attempt = 0; std::chrono::steady_clock::now() < give_up; ++attempt) {
      const int k = (first + attempt) % kNodes;
      uint16_t port = 0;
      {
        absl::MutexLock lock(&nodes_mu_);
        if (nodes_[k] != nullptr) port = nodes_[k]->port();
      }
      if (port == 0) continue;
      TestHttpClient client(port, std::chrono::milliseconds(5000));
      absl::StatusOr<TestHttpResponse> r =
          client.Request("POST", "/v1/score", Tx(id, AccountOf(id)));
      if (r.ok() && r->status == 200) return r->body;
      if (r.ok() && r->status != 503) {
        ADD_FAILURE() << id << " answered " << r->status << ": " << r->body;
        return "";
      }
      if (!r.ok() || r->Header("Retry-After").empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    ADD_FAILURE() << id << " not decided within 60 s";
    return "";
  }

  // `vigil cluster status --json`, once.
  nlohmann::json Status() {
    const std::string out = dir_ + "/status.json";
    EXPECT_EQ(::vigil::testing::RunProcess(
                  VIGIL_BINARY, {"cluster", "status", "--nats", nats_->url(0), "--json"}, out),
              0)
        << ::vigil::testing::ReadFile(out);
    return nlohmann::json::parse(::vigil::testing::ReadFile(out), nullptr, false);
  }

  // Until every node decides its share (rendezvous hashing) and every partition is decided.
  void WaitSettled() {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      const nlohmann::json status = Status();
      int deciding = 0;
      int nodes = 0;
      for (const nlohmann::json& node : status.value("nodes", nlohmann::json::array())) {
        const int partitions = node.value("partitions", 0);
        deciding += partitions;
        nodes += partitions > 0 ? 1 : 0;
      }
      if (deciding == kPartitions && nodes == kNodes) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the nodes did not settle on their shares within 30 s: " << Status().dump();
  }

  // Decides "count" new payments ("<prefix>-<n>@acct-<k>") one at a time, first through
  // "first_node", recording the answers in acked_.
  void Send(const std::string& prefix, int count, int first_node) {
    for (int k = 0; k < count; ++k, ++sent_) {
      const std::string id = absl::StrCat(prefix, "-", sent_, "@acct-", sent_ % kAccounts);
      std::string body = Decide(id, first_node);
      ASSERT_FALSE(body.empty()) << id;
      acked_[id] = std::move(body);
    }
  }

  // Every decision in "acked" is in the log exactly once, byte for byte, and no decision is in
  // the log twice; with "all_answered", the log holds no decision besides them. The log's
  // decisions by transaction id.
  std::map<std::string, std::vector<std::string>> CheckAgainstLog(
      const std::map<std::string, std::string>& acked, bool all_answered) {
    absl::StatusOr<std::unique_ptr<cluster::NatsConnection>> reader = nats_->Connect();
    EXPECT_OK(reader);
    if (!reader.ok()) return {};
    std::map<std::string, std::vector<std::string>> in_log =
        DecisionsInLog(**reader, cluster::LogStreamName(cluster::ClusterLayout{}));
    for (const auto& [id, body] : acked) {
      const auto it = in_log.find(id);
      if (it == in_log.end()) {
        ADD_FAILURE() << id << " was answered but is not in the log";
        continue;
      }
      EXPECT_EQ(it->second.size(), 1u) << id << " decided " << it->second.size() << " times";
      EXPECT_EQ(it->second[0], body) << id;
    }
    for (const auto& [id, decisions] : in_log) EXPECT_EQ(decisions.size(), 1u) << id;
    if (all_answered) {
      EXPECT_EQ(in_log.size(), acked.size());
    }
    return in_log;
  }

  // Whether node "node" decides some partition within 30 s (`vigil cluster status`).
  bool AwaitDeciding(const std::string& node) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      const nlohmann::json status = Status();  // kept: the loop views into it
      for (const nlohmann::json& n : status.value("nodes", nlohmann::json::array())) {
        if (n.value("node", "") == node && n.value("partitions", 0) > 0) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  // The lines of node "port"'s /metrics that state what it applied from the log: equal on
  // every node once each has applied the log to its end.
  static std::string AppliedState(uint16_t port) {
    TestHttpClient client(port, std::chrono::milliseconds(5000));
    absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/metrics", "");
    std::string out;
    if (!r.ok()) return out;
    for (const std::string& line : std::vector<std::string>(absl::StrSplit(r->body, '\n'))) {
      if (line.rfind("vigil_cluster_log_position ", 0) == 0 ||
          line.rfind("vigil_cluster_payments_applied ", 0) == 0 ||
          line.rfind("vigil_cluster_decisions_applied ", 0) == 0 ||
          line.rfind("vigil_cluster_partition_pending{", 0) == 0 ||
          line.rfind("vigil_cluster_partition_decisions{", 0) == 0) {
        absl::StrAppend(&out, line, "\n");
      }
    }
    return out;
  }

  // Gauge "name" (no labels) of node "port"'s /metrics; -1 when it is not there.
  static double Metric(uint16_t port, const std::string& name) {
    TestHttpClient client(port, std::chrono::milliseconds(5000));
    absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/metrics", "");
    if (!r.ok()) return -1;
    for (const std::string& line : std::vector<std::string>(absl::StrSplit(r->body, '\n'))) {
      double value = 0;
      if (line.rfind(name + " ", 0) == 0 &&
          absl::SimpleAtod(line.substr(name.size() + 1), &value)) {
        return value;
      }
    }
    return -1;
  }

  // Until every node states the same applied state (20 s at most): each rebuilt the same
  // state, from the log, a checkpoint or a shipped one.
  void ExpectSameAppliedState() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::vector<std::string> states(kNodes);
    while (true) {
      for (int k = 0; k < kNodes; ++k) states[k] = AppliedState(nodes_[k]->port());
      if ((states[0] == states[1] && states[1] == states[2]) ||
          std::chrono::steady_clock::now() > until) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(states[0].empty());
    EXPECT_EQ(states[0], states[1]);
    EXPECT_EQ(states[1], states[2]);
  }

  // Nothing counted twice or lost: an account's payments state the counts 1..n, each once, in
  // the features of whichever node decided them (some restored after a kill).
  static void ExpectEachCountOnce(const std::map<std::string, std::string>& acked) {
    std::map<std::string, std::set<int>> counts;
    std::map<std::string, int> payments;
    for (const auto& [id, body] : acked) {
      const int count = CountOf(nlohmann::json::parse(body));
      EXPECT_TRUE(counts[AccountOf(id)].insert(count).second)
          << id << " states count " << count << " twice for its account";
      ++payments[AccountOf(id)];
    }
    for (const auto& [account, n] : payments) {
      EXPECT_EQ(*counts[account].begin(), 1) << account;
      EXPECT_EQ(*counts[account].rbegin(), n) << account;
    }
  }

  std::vector<std::string> flags_;  // more flags for every node, set before SetUp
  std::string dir_;
  std::unique_ptr<NatsServers> nats_;
  std::map<std::string, std::string> acked_;  // Send's answers by transaction id
  int sent_ = 0;
  absl::Mutex nodes_mu_;
  std::vector<std::unique_ptr<ServeProcess>> nodes_;
};

TEST_F(ServeClusterTest, PaymentsThroughAnyNodeAreDecidedOnceAndSurviveKilledNodes) {
  absl::Mutex mu;
  std::map<std::string, std::string> acked;  // id → body the client got
  std::mt19937 rng(7);
  std::atomic<int> sequence{0};
  const auto load = [&](std::atomic<bool>& stop, int client) {
    while (!stop.load()) {
      const int n = sequence++;
      const std::string id = absl::StrCat("c", client, "-", n, "@acct-", n % kAccounts);
      std::string body = Decide(id, n % kNodes);
      if (body.empty()) return;
      absl::MutexLock lock(&mu);
      acked[id] = std::move(body);
    }
  };
  const auto acked_count = [&] {
    absl::MutexLock lock(&mu);
    return acked.size();
  };
#ifdef VIGIL_SERVE_CLUSTER_LONG
  constexpr int kKills = 20;  // make test-long
#else
  constexpr int kKills = 3;
#endif
  for (int kill = 0; kill < kKills; ++kill) {
    SCOPED_TRACE(absl::StrCat("kill ", kill + 1, " of ", kKills));
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) clients.emplace_back(load, std::ref(stop), c);
    const size_t before = acked_count();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (acked_count() < before + 40 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const int victim = static_cast<int>(rng() % kNodes);
    std::unique_ptr<ServeProcess> killed;
    {
      absl::MutexLock lock(&nodes_mu_);
      killed = std::move(nodes_[victim]);
    }
    EXPECT_EQ(killed->Stop(SIGKILL), 128 + SIGKILL);
    killed.reset();
    // The others go on deciding (the victim's partitions after their leases expire).
    const size_t at_kill = acked_count();
    while (acked_count() < at_kill + 40 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Back on an empty data dir: it rebuilds its state from the log.
    {
      absl::MutexLock lock(&nodes_mu_);
      StartNode(victim);
    }
    stop.store(true);
    for (std::thread& t : clients) t.join();
    ASSERT_FALSE(HasFailure());
  }

  // Every decision a client got is in the log exactly once, and is the log's, byte for byte
  // (the log may hold more: requests cut off by a kill and decided after).
  ASSERT_GE(acked.size(), 200u);
  const std::map<std::string, std::vector<std::string>> in_log =
      CheckAgainstLog(acked, /*all_answered=*/false);
  ASSERT_FALSE(HasFailure());
  ExpectEachCountOnce(acked);
  // The nodes restarted on an empty data dir rebuilt from the log the state of those that ran
  // throughout: at the same position, the same payments and decisions applied, the same
  // payments pending in every partition.
  ExpectSameAppliedState();
  std::cout << "serve cluster: " << kKills << " kills, " << acked.size()
            << " decisions acknowledged, each once in the log\n";

  // Each partition's audit log, built from the cluster's log: every decision in one of them,
  // each log intact, and a decision's inclusion proven in the partition that made it.
  const std::string key = dir_ + "/audit_key.pem", pub = dir_ + "/audit_pub.pem";
  ASSERT_EQ(::vigil::testing::RunProcess(VIGIL_BINARY,
                                         {"audit", "keygen", "--out", key, "--public-out", pub},
                                         dir_ + "/keygen.out"),
            0);
  const std::string exported = dir_ + "/audit";
  const std::string export_out = dir_ + "/export.out";
  ASSERT_EQ(::vigil::testing::RunProcess(VIGIL_BINARY,
                                         {"cluster", "audit-export", "--nats", nats_->url(0),
                                          "--out", exported, "--key", key},
                                         export_out),
            0)
      << ::vigil::testing::ReadFile(export_out);
  // One command checks them all, a line per partition and one for the whole export.
  const std::string verify_out = dir_ + "/verify.out";
  EXPECT_EQ(
      ::vigil::testing::RunProcess(
          VIGIL_BINARY, {"audit", "verify", "--data-dir", exported, "--pubkey", pub}, verify_out),
      0)
      << ::vigil::testing::ReadFile(verify_out);
  EXPECT_NE(::vigil::testing::ReadFile(verify_out)
                .find(absl::StrCat("intact: ", kPartitions, " partition logs, ", in_log.size(),
                                   " records in all")),
            std::string::npos)
      << ::vigil::testing::ReadFile(verify_out);
  size_t records = 0;
  const std::vector<std::string> lines =
      absl::StrSplit(::vigil::testing::ReadFile(export_out), '\n');
  for (const std::string& line : lines) {
    const std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() < 2) continue;
    size_t n = 0;
    if (absl::SimpleAtoi(fields[1].substr(0, fields[1].find(' ')), &n)) records += n;
  }
  EXPECT_EQ(records, in_log.size()) << ::vigil::testing::ReadFile(export_out);
  // A proof for the first acknowledged decision, from the export: found in the one partition
  // that holds it.
  const std::string first = acked.begin()->first;
  const std::string proof = dir_ + "/proof.json";
  ASSERT_EQ(::vigil::testing::RunProcess(
                VIGIL_BINARY, {"audit", "prove", "--data-dir", exported, first, "--out", proof},
                proof + ".out"),
            0)
      << ::vigil::testing::ReadFile(proof + ".out");
  int found_in = 0;
  for (int p = 0; p < kPartitions; ++p) {
    const std::string one = absl::StrCat(dir_, "/proof", p, ".json");
    if (::vigil::testing::RunProcess(
            VIGIL_BINARY,
            {"audit", "prove", "--data-dir", absl::StrCat(exported, "/partition-", p), first,
             "--out", one},
            one + ".out") != 0) {
      continue;
    }
    ++found_in;
    EXPECT_NE(::vigil::testing::ReadFile(proof + ".out")
                  .find(absl::StrCat(exported, "/partition-", p, ")")),
              std::string::npos)
        << ::vigil::testing::ReadFile(proof + ".out");
  }
  EXPECT_EQ(found_in, 1) << first;
  EXPECT_EQ(::vigil::testing::RunProcess(
                VIGIL_BINARY, {"audit", "check-proof", proof, "--pubkey", pub}, proof + ".chk"),
            0)
      << ::vigil::testing::ReadFile(proof + ".chk");

  // `vigil cluster status` sees the three nodes and every partition held.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  nlohmann::json status;
  while (std::chrono::steady_clock::now() < give_up) {
    status = Status();
    int held = 0;
    for (const nlohmann::json& lease : status["leases"]) held += lease["holder"].is_string();
    if (held == kPartitions && status["nodes"].size() == kNodes) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(status["partitions"], kPartitions);
  EXPECT_EQ(status["nodes"].size(), static_cast<size_t>(kNodes)) << status.dump();
  for (const nlohmann::json& lease : status["leases"]) {
    EXPECT_TRUE(lease["holder"].is_string()) << lease.dump();
  }
}

// The old owner paused (SIGSTOP) past its lease: the others take its partitions over; resumed,
// it writes nothing (its writes are fenced) and rejoins, taking its share back by planned
// moves; no payment is decided twice.
TEST_F(ServeClusterTest, APausedOwnerWritesNothingOnceResumedAndRejoins) {
  ASSERT_NO_FATAL_FAILURE(WaitSettled());
  ASSERT_NO_FATAL_FAILURE(Send("p", 60, 0));
  ::kill(nodes_[1]->pid(), SIGSTOP);
  // Payments of every account, through the nodes that run: those of node 1's partitions wait
  // for its lease to expire (1 s), then are decided by another node.
  const auto paused = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(Send("p", 60, 0));
  EXPECT_GE(std::chrono::steady_clock::now() - paused, std::chrono::milliseconds(900));
  ::kill(nodes_[1]->pid(), SIGCONT);
  ASSERT_NO_FATAL_FAILURE(Send("p", 60, 1));  // through the resumed node too
  CheckAgainstLog(acked_, /*all_answered=*/true);
  // It rejoined: registered again, and deciding its share once the others handed it back.
  EXPECT_TRUE(AwaitDeciding("n1")) << "node n1 decides no partition again after its resume";
}

// A node cut off from the NATS servers (its connection relayed, then cut): the others take its
// partitions after its lease expires, it decides nothing meanwhile (nothing is doubled), and
// once the network heals it rejoins and decides its share again.
TEST_F(ServeClusterTest, ANodeCutOffFromTheLogLosesItsPartitionsAndDoublesNothing) {
  const std::string server_url = nats_->url(0);
  int upstream = 0;
  ASSERT_TRUE(absl::SimpleAtoi(server_url.substr(server_url.rfind(':') + 1), &upstream));
  LoopbackRelay relay(static_cast<uint16_t>(upstream));
  {
    absl::MutexLock lock(&nodes_mu_);
    EXPECT_EQ(nodes_[2]->Stop(SIGTERM), 0);  // hands its leases over
    StartNode(2, relay.url());
  }
  ASSERT_NO_FATAL_FAILURE(WaitSettled());
  ASSERT_NO_FATAL_FAILURE(Send("net", 40, 2));
  relay.Cut();
  // Its /readyz says so, for a load balancer to send the traffic elsewhere.
  const auto ready_status = [this] {
    uint16_t port = 0;
    {
      absl::MutexLock lock(&nodes_mu_);
      port = nodes_[2]->port();
    }
    TestHttpClient client(port, std::chrono::milliseconds(5000));
    absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/readyz", "");
    return r.ok() ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
  };
  const auto await_ready = [&](int status) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::pair<int, std::string> r = ready_status();
    while (r.first != status && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      r = ready_status();
    }
    return r;
  };
  const std::pair<int, std::string> cut_off = await_ready(503);
  EXPECT_EQ(cut_off.first, 503);
  EXPECT_NE(cut_off.second.find("cluster_unavailable"), std::string::npos) << cut_off.second;
  ASSERT_NO_FATAL_FAILURE(Send("net", 60, 0));  // node 2's partitions move after its lease
  const nlohmann::json during = Status();
  for (const nlohmann::json& lease : during["leases"]) {
    EXPECT_NE(lease["holder"], "n2") << "a cut-off node still holds a lease: " << lease.dump();
  }
  relay.Heal();
  EXPECT_EQ(await_ready(200).first, 200);
  EXPECT_TRUE(AwaitDeciding("n2")) << "n2 does not decide again after the network healed";
  ASSERT_NO_FATAL_FAILURE(Send("net", 40, 2));
  CheckAgainstLog(acked_, /*all_answered=*/true);
}

// Nodes that checkpoint every 200 ms and ship every 500 ms.
class ServeClusterRestartTest : public ServeClusterTest {
 protected:
  ServeClusterRestartTest() {
    flags_ = {"--cluster-checkpoint-interval-ms", "200", "--cluster-ship-interval-ms", "500"};
  }
};

// A node killed and restarted on its own data dir starts from its last checkpoint; one
// restarted on an empty data dir starts from the last checkpoint shipped. Either replays the
// log from there to the others' state, and counts no payment twice.
TEST_F(ServeClusterRestartTest, ANodeStartsFromItsCheckpointOrTheShippedOne) {
  ASSERT_NO_FATAL_FAILURE(WaitSettled());
  ASSERT_NO_FATAL_FAILURE(Send("r", 60, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a checkpoint and a shipment
  for (int k = 0; k < kNodes; ++k) {
    EXPECT_GT(Metric(nodes_[k]->port(), "vigil_cluster_checkpoints"), 0) << "node " << k;
    EXPECT_EQ(Metric(nodes_[k]->port(), "vigil_cluster_restored_position"), 0) << "node " << k;
  }

  // Killed, back on its own data dir.
  EXPECT_EQ(nodes_[1]->Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartNode(1, "", /*keep_data=*/true));
  EXPECT_GT(Metric(nodes_[1]->port(), "vigil_cluster_restored_position"), 0)
      << "node 1 did not start from its checkpoint";
  ASSERT_NO_FATAL_FAILURE(ExpectSameAppliedState());
  ASSERT_NO_FATAL_FAILURE(Send("r", 60, 1));

  // Killed, back on an empty data dir: the shipped checkpoint, at or past what had been
  // shipped before the kill.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  double shipped = 0;
  while (shipped <= 0 && std::chrono::steady_clock::now() < until) {
    for (int k = 0; k < kNodes; ++k) {
      shipped = std::max(shipped, Metric(nodes_[k]->port(), "vigil_cluster_shipped_position"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(shipped, 0) << "no node shipped a checkpoint within 10 s";
  EXPECT_EQ(nodes_[2]->Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartNode(2));
  EXPECT_GE(Metric(nodes_[2]->port(), "vigil_cluster_restored_position"), shipped)
      << "node 2 did not start from the shipped checkpoint: "
      << ::vigil::testing::ReadFile(dir_ + "/node2.stderr");
  ASSERT_NO_FATAL_FAILURE(ExpectSameAppliedState());
  ASSERT_NO_FATAL_FAILURE(Send("r", 60, 2));

  CheckAgainstLog(acked_, /*all_answered=*/true);
  ExpectEachCountOnce(acked_);
  ExpectSameAppliedState();
}

}  // namespace
}  // namespace vigil
