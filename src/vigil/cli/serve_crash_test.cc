// `vigil serve` killed under load: a real child process on a temporary data dir, scored by a
// pool of client connections (unique transaction ids over several accounts), SIGKILLed at a
// random point (seeded: after a random number of acknowledged decisions and a random fraction
// of a millisecond, with a request in flight on every connection), restarted on the same data
// dir, again and again. After each restart:
//
//  - GET /v1/audit/verify is 200 and intact (chain, tree, index, signed heads);
//  - every decision the clients received with 200 is in the log with identical content:
//    re-sending its id answers the byte-identical body, and the log does not grow;
//  - the requests left without an answer by the kill are retried with their ids and decided
//    (or answered from the log) once: afterwards the log holds exactly the ids acknowledged.
//
// At the end every account's count feature must equal the number of its transactions in the log
// (see CheckFeatureState), the server must stop cleanly on SIGTERM, `vigil audit verify` must
// pass on the data dir, and the log read directly must hold every acknowledged body.
//
// The default suite (serve_process_test) kills five times, in about two seconds;
// serve_crash_long_test (make test-long) twenty times, with more load between kills.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/decision/decision_json.h"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::CountOf;
using ::vigil::testing::kCountingPolicy;
using ::vigil::testing::ServeProcess;
using ::vigil::testing::Tx;
using ::vigil::testing::TestHttpClient;
using ::vigil::testing::TestHttpResponse;

constexpr int kClients = 4;
constexpr int kAccounts = 5;

// What the clients were told. Thread safety: safe for concurrent use.
class Ledger {
 public:
  void Acknowledged(const std::string& id, std::string body) {
    absl::MutexLock lock(&mu_);
    acked_[id] = std::move(body);
    unknown_.erase(id);
    ++round_acks_;
  }
  // Sent without an answer (the kill), or refused for the moment (503): may or may not be
  // decided; retried after the restart.
  void Unknown(const std::string& id) {
    absl::MutexLock lock(&mu_);
    unknown_.insert(id);
  }
  void Unexpected(std::string what) {
    absl::MutexLock lock(&mu_);
    unexpected_.push_back(std::move(what));
  }
  // Waits until "n" decisions were acknowledged since StartRound (false after 60 s).
  bool AwaitAcks(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return round_acks_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(60));
  }
  void StartRound() {
    absl::MutexLock lock(&mu_);
    round_acks_ = 0;
  }
  std::map<std::string, std::string> acked() const {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  std::vector<std::string> unknown() const {
    absl::MutexLock lock(&mu_);
    return {unknown_.begin(), unknown_.end()};
  }
  std::vector<std::string> unexpected() const {
    absl::MutexLock lock(&mu_);
    return unexpected_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> acked_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> unknown_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> unexpected_ ABSL_GUARDED_BY(mu_);
  int round_acks_ ABSL_GUARDED_BY(mu_) = 0;
};

// Ids carry their account: "r<round>-c<client>-<n>@acct-<k>".
std::string AccountOf(const std::string& id) { return id.substr(id.find('@') + 1); }

struct CrashLoopOptions {
  int kills = 3;
  uint32_t seed = 1;
  // Decisions acknowledged before a kill, drawn uniformly from [min_acks, max_acks].
  int min_acks = 20;
  int max_acks = 300;
};

class CrashLoop {
 public:
  explicit CrashLoop(CrashLoopOptions options) : options_(options), rng_(options.seed) {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_crash_", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << kCountingPolicy;
    const std::string source = ::vigil::testing::SourceDir();
    argv_ = {VIGIL_BINARY,
             "serve",
             "--listen",
             "127.0.0.1:0",
             "--plaintext",
             "--auth",
             "none",
             "--data-dir",
             data_dir(),
             "--model",
             ::vigil::testing::TestDataPath("models/serve_model.json"),
             "--policy",
             dir_ + "/count.yaml",
             "--lists",
             source + "/policies/lists",
             "--fx-rates",
             source + "/data/fx_rates.csv",
             "--log",
             dir_ + "/requests.log",
             "--no-drift",
             "--workers",
             "16"};
  }
  ~CrashLoop() {
    server_.reset();
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::string data_dir() const { return dir_ + "/data"; }

  void Run() {
    ASSERT_NO_FATAL_FAILURE(StartServer());
    for (int kill = 1; kill <= options_.kills; ++kill) {
      SCOPED_TRACE(absl::StrCat("kill ", kill, " of ", options_.kills));
      const int acks = options_.min_acks +
                       static_cast<int>(rng_() % (options_.max_acks - options_.min_acks + 1));
      ASSERT_NO_FATAL_FAILURE(LoadAndKill(kill, acks));
      ASSERT_NO_FATAL_FAILURE(StartServer());
      ASSERT_NO_FATAL_FAILURE(CheckAfterRestart(/*all=*/kill == options_.kills));
    }
    EXPECT_TRUE(ledger_.unexpected().empty())
        << "unexpected answers, the first: " << ledger_.unexpected().front();
    ASSERT_NO_FATAL_FAILURE(CheckFeatureState());
    EXPECT_EQ(server_->Stop(SIGTERM), 0) << "see " << dir_ << "/serve.stderr";
    server_.reset();
    ASSERT_NO_FATAL_FAILURE(CheckLogOffline());
    std::cout << "serve crash loop: " << options_.kills << " kills, "
              << ledger_.acked().size() << " decisions acknowledged, " << retried_
              << " requests unanswered at a kill retried (" << in_log_before_retry_
              << " of them already in the log)\n";
  }

 private:
  void StartServer() {
    absl::StatusOr<std::unique_ptr<ServeProcess>> started =
        ServeProcess::Start(argv_, dir_ + "/serve.stderr");
    ASSERT_OK(started);
    server_ = *std::move(started);
  }

  TestHttpResponse Post(TestHttpClient& client, const std::string& id) {
    absl::StatusOr<TestHttpResponse> r = client.Request("POST", "/v1/score", Tx(id, AccountOf(id)));
    EXPECT_OK(r) << id;
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }

  // Runs fn(client, item) over "items" on kClients connections.
  void ForEachParallel(const std::vector<std::string>& items,
                       const std::function<void(TestHttpClient&, const std::string&)>& fn) {
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&] {
        TestHttpClient client(server_->port());
        for (size_t i = next++; i < items.size(); i = next++) fn(client, items[i]);
      });
    }
    for (std::thread& t : threads) t.join();
  }

  // Scores new transactions on kClients connections until "acks" were acknowledged, then
  // SIGKILLs the server while they keep sending.
  void LoadAndKill(int round, int acks) {
    ledger_.StartRound();
    std::atomic<bool> killed{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([this, c, round, &killed] {
        TestHttpClient client(server_->port());
        for (int n = 0; !killed.load(); ++n) {
          const std::string id =
              absl::StrCat("r", round, "-c", c, "-", n, "@acct-", (c + n) % kAccounts);
          absl::StatusOr<TestHttpResponse> r =
              client.Request("POST", "/v1/score", Tx(id, AccountOf(id)));
          if (!r.ok()) {  // the kill: this one may or may not have been decided
            ledger_.Unknown(id);
            return;
          }
          if (r->status == 200) {
            ledger_.Acknowledged(id, std::move(r->body));
          } else {
            ledger_.Unknown(id);
            if (r->status != 503) {
              ledger_.Unexpected(absl::StrCat(id, ": ", r->status, " ", r->body));
            }
          }
        }
      });
    }
    const bool reached = ledger_.AwaitAcks(acks);
    // Not a wait for state: a random offset (under a group commit's time) that moves the kill
    // around the committer's cycle of encode, write and sync.
    std::this_thread::sleep_for(std::chrono::microseconds(rng_() % 2000));
    EXPECT_EQ(server_->Stop(SIGKILL), 128 + SIGKILL);
    killed.store(true);
    for (std::thread& t : clients) t.join();
    ASSERT_TRUE(reached) << "fewer than " << acks << " decisions acknowledged within 60 s";
  }

  // The records the running server's log holds (GET /v1/audit/verify, which must be intact).
  uint64_t VerifiedRecords() {
    absl::StatusOr<TestHttpResponse> r =
        ::vigil::testing::HttpOnce(server_->port(), "GET", "/v1/audit/verify");
    EXPECT_OK(r);
    if (!r.ok()) return 0;
    EXPECT_EQ(r->status, 200) << r->body;
    nlohmann::json report = r->Json();
    if (!report.is_object()) report = nlohmann::json::object();
    EXPECT_EQ(report.value("intact", false), true) << r->body;
    return report.value("records", uint64_t{0});
  }

  void CheckAfterRestart(bool all) {
    const uint64_t records = VerifiedRecords();
    const std::map<std::string, std::string> acked = ledger_.acked();
    ASSERT_GE(records, acked.size()) << "acknowledged decisions are missing from the log";
    // Re-sent, every acknowledged id (those of the last round, or all at the end) is answered
    // with its body, byte for byte: the log holds it, as it was answered.
    std::vector<std::string> ids;
    for (const auto& [id, body] : acked) {
      if (all || !checked_.contains(id)) ids.push_back(id);
    }
    std::atomic<int> differing{0};
    ForEachParallel(ids, [&](TestHttpClient& client, const std::string& id) {
      const TestHttpResponse r = Post(client, id);
      if (r.body != acked.at(id) && differing.fetch_add(1) < 3) {
        ADD_FAILURE() << id << " acknowledged as\n  " << acked.at(id) << "\nis now answered\n  "
                      << r.status << " " << r.body;
      }
    });
    EXPECT_EQ(differing.load(), 0) << "of " << ids.size() << " acknowledged ids re-sent";
    EXPECT_EQ(VerifiedRecords(), records) << "re-sending decided ids grew the log";
    checked_.insert(ids.begin(), ids.end());
    // The requests the kill left unanswered, retried as a client would: each is decided once.
    const std::vector<std::string> unknown = ledger_.unknown();
    ForEachParallel(unknown, [&](TestHttpClient& client, const std::string& id) {
      TestHttpResponse r = Post(client, id);
      EXPECT_EQ(r.status, 200) << id << ": " << r.body;
      if (r.status == 200) ledger_.Acknowledged(id, std::move(r.body));
    });
    for (const std::string& id : unknown) checked_.insert(id);  // answered after the restart
    retried_ += unknown.size();
    in_log_before_retry_ += records - acked.size();
    // Now every id ever sent is decided, each recorded once.
    EXPECT_EQ(VerifiedRecords(), ledger_.acked().size())
        << "the log does not hold exactly the acknowledged decisions";
  }

  // The observable: the count feature orig_out_count_24h, which every decision's "count"
  // reason states. All transactions share one timestamp, so one new transaction of an account
  // states how many of its payments the feature state holds, itself included. It must be the
  // account's transactions in the log plus one: a transaction acknowledged (hence logged) but
  // lost from the state by a crash makes it smaller, one counted twice (a retry after a crash
  // counted again) larger. The log holds exactly the acknowledged ids (CheckAfterRestart), so
  // the account's share of the ledger is its share of the log; CheckLogOffline counts the log
  // itself too.
  void CheckFeatureState() {
    std::map<std::string, int> logged;
    for (const auto& [id, body] : ledger_.acked()) ++logged[AccountOf(id)];
    for (int k = 0; k < kAccounts; ++k) {
      const std::string account = absl::StrCat("acct-", k);
      const std::string id = absl::StrCat("final@", account);
      TestHttpClient client(server_->port());
      TestHttpResponse r = Post(client, id);
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(CountOf(r.Json()), logged[account] + 1) << account << ": " << r.body;
      ledger_.Acknowledged(id, std::move(r.body));
    }
  }

  // The data dir once the server stopped: `vigil audit verify` passes, and the log read
  // directly holds each acknowledged decision as answered, and nothing else.
  void CheckLogOffline() {
    const int verified = ::vigil::testing::RunProcess(
        VIGIL_BINARY, {"audit", "verify", "--data-dir", data_dir()}, dir_ + "/audit_verify.out");
    EXPECT_EQ(verified, 0) << ::vigil::testing::ReadFile(dir_ + "/audit_verify.out");
    KvStoreOptions options;
    options.path = data_dir() + "/features";
    options.create_if_missing = false;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> kv, KvStore::Open(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                         audit::AuditLog::OpenForReading(kv.get()));
    std::map<std::string, std::string> acked = ledger_.acked();
    std::map<std::string, int> per_account, acked_per_account;
    for (const auto& [id, body] : acked) ++acked_per_account[AccountOf(id)];
    int differing = 0;
    ASSERT_OK(log->ForEachRecord(0, [&](uint64_t sequence, std::string_view bytes) {
      absl::StatusOr<audit::AuditRecord> record = audit::DecodeRecord(bytes);
      if (!record.ok()) return record.status();
      ++per_account[record->transaction.originator.account_id];
      const auto it = acked.find(record->transaction.id);
      if (it == acked.end()) {
        ADD_FAILURE() << "record " << sequence << " of " << record->transaction.id
                      << " was never acknowledged";
      } else if (DecisionToJson(record->decision) != it->second && ++differing <= 3) {
        ADD_FAILURE() << "record " << sequence << " holds\n  " << DecisionToJson(record->decision)
                      << "\nbut was answered\n  " << it->second;
      } else {
        acked.erase(it);
      }
      return absl::OkStatus();
    }));
    EXPECT_EQ(differing, 0);
    EXPECT_TRUE(acked.empty()) << acked.size() << " acknowledged decisions are not in the log, "
                               << "the first: " << (acked.empty() ? "" : acked.begin()->first);
    EXPECT_EQ(per_account, acked_per_account);
  }

  const CrashLoopOptions options_;
  std::mt19937 rng_;
  std::string dir_;
  std::vector<std::string> argv_;
  std::unique_ptr<ServeProcess> server_;
  Ledger ledger_;
  std::set<std::string> checked_;  // acknowledged ids already re-sent after a restart
  size_t retried_ = 0;
  uint64_t in_log_before_retry_ = 0;
};

#ifdef VIGIL_SERVE_CRASH_LONG
TEST(ServeCrashLong, TwentyKillsUnderLoadLoseNoAcknowledgedDecision) {
  CrashLoop loop({.kills = 20, .seed = 2020, .min_acks = 20, .max_acks = 600});
  loop.Run();
}
#else
TEST(ServeCrash, KillsUnderLoadLoseNoAcknowledgedDecision) {
  CrashLoop loop({.kills = 5, .seed = 7, .min_acks = 20, .max_acks = 300});
  loop.Run();
}
#endif

}  // namespace
}  // namespace vigil
