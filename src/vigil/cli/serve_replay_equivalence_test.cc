// A backtest is production on history: the same payments, policy and model give the same
// decisions through `vigil serve` (one POST /v1/score each, in event-time order, or
// POST /v1/score/batch of 64 at a time) and through `vigil replay` (batches of 256, ordered by
// event time). Compared as both audit logs record
// them (`vigil audit export`): the decision, the features it was made on, the rules that fired
// and the payment, byte for byte; only what belongs to one run (trace ids, latencies, the
// record's own times and hashes, the payment fingerprint's data-dir key) may differ.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::ServeProcess;

// What of a recorded decision belongs to the run that made it, not to the decision.
constexpr const char* kPerRunDecisionFields[] = {"trace_id", "traceparent", "latency_us"};

class ServeReplayEquivalenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/serve_replay_equivalence";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    source_ = ::vigil::testing::SourceDir();
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  int Run(const std::vector<std::string>& args, const std::string& out) {
    return ::vigil::testing::RunProcess(VIGIL_BINARY, args, out);
  }

  // The records of a data dir's audit log by transaction id, each reduced to what a decision
  // is: the canonical JSON text of {decision without per-run fields, features, fired_rules,
  // screening_hits, transaction}.
  std::map<std::string, std::string> Decisions(const std::string& data_dir) {
    const std::string out = dir_ + "/export.jsonl";
    EXPECT_EQ(Run({"audit", "export", "--data-dir", data_dir, "--out", out}, dir_ + "/export.log"),
              0)
        << ReadFile(dir_ + "/export.log");
    std::map<std::string, std::string> by_id;
    std::istringstream lines(ReadFile(out));
    for (std::string line; std::getline(lines, line);) {
      nlohmann::json record = nlohmann::json::parse(line);
      // Both record the payment's fingerprint (under each data dir's own key, so the values
      // differ between the two logs).
      EXPECT_TRUE(record["payment_fingerprint"].is_string() &&
                  record["payment_fingerprint"].get<std::string>().size() == 64)
          << data_dir << ": " << record["payment_fingerprint"];
      nlohmann::json decision = record["decision"];
      for (const char* field : kPerRunDecisionFields) decision.erase(field);
      const nlohmann::json kept = {{"decision", decision},
                                   {"features", record["features"]},
                                   {"fired_rules", record["fired_rules"]},
                                   {"screening_hits", record["screening_hits"]},
                                   {"transaction", record["transaction"]}};
      by_id[record["transaction"]["id"].get<std::string>()] = kept.dump();
    }
    return by_id;
  }

  std::string dir_, source_;
};

TEST_F(ServeReplayEquivalenceTest, ServeAndReplayDecideAlike) {
  // The payments: the AMLworld sample as JSON Lines, in event-time order (file order among
  // equal times, as replay orders them), so that serve sees them as replay replays them.
  const std::string parsed = dir_ + "/parsed.jsonl";
  ASSERT_EQ(Run({"parse", ::vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv")},
                parsed),
            0);
  std::vector<std::pair<std::string, std::string>> payments;  // (timestamp, line)
  {
    std::istringstream lines(ReadFile(parsed));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] != '{') continue;
      payments.emplace_back(nlohmann::json::parse(line)["timestamp"].get<std::string>(), line);
    }
  }
  std::stable_sort(payments.begin(), payments.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_GT(payments.size(), 500u);
  const std::string stream = dir_ + "/stream.jsonl";
  {
    std::ofstream out(stream);
    for (const auto& [time, line] : payments) out << line << "\n";
  }
  const std::string policy = source_ + "/policies/default.yaml";
  const std::string model = ::vigil::testing::TestDataPath("models/serve_model.json");
  const std::vector<std::string> pipeline = {
      "--policy", policy, "--model", model, "--lists", source_ + "/policies/lists",
      "--fx-rates", source_ + "/data/fx_rates.csv"};

  // vigil serve: one request per payment (batch 1), or POST /v1/score/batch of "batch"
  // payments at a time; returns the payments answered with a decision.
  const auto serve_all = [&](const std::string& data_dir, size_t batch) -> int {
    std::vector<std::string> serve = {VIGIL_BINARY,  "serve",      "--listen", "127.0.0.1:0",
                                      "--plaintext", "--auth",     "none",     "--no-drift",
                                      "--data-dir",  data_dir,     "--log",    data_dir + ".log"};
    serve.insert(serve.end(), pipeline.begin(), pipeline.end());
    absl::StatusOr<std::unique_ptr<ServeProcess>> server =
        ServeProcess::Start(serve, data_dir + ".stderr");
    EXPECT_OK(server) << ReadFile(data_dir + ".stderr");
    if (!server.ok()) return -1;
    int decided = 0;
    for (size_t start = 0; start < payments.size(); start += batch) {
      const size_t end = std::min(payments.size(), start + batch);
      std::string body = batch == 1 ? payments[start].second : "[";
      for (size_t i = start; batch > 1 && i < end; ++i) {
        absl::StrAppend(&body, i > start ? "," : "", payments[i].second);
      }
      if (batch > 1) body += "]";
      absl::StatusOr<::vigil::testing::TestHttpResponse> r = ::vigil::testing::HttpOnce(
          (*server)->port(), "POST", batch == 1 ? "/v1/score" : "/v1/score/batch", body);
      EXPECT_OK(r);
      if (!r.ok()) return -1;
      if (batch == 1) {
        decided += r->status == 200;
        continue;
      }
      EXPECT_EQ(r->status, 200) << r->body;
      const nlohmann::json reply = nlohmann::json::parse(r->body);
      for (const nlohmann::json& item : reply["results"]) {
        decided += item.contains("action");
        // Refused: final refusals (400, 422) only, as one request each refuses them.
        if (!item.contains("action")) {
          EXPECT_TRUE(item["status"] == 400 || item["status"] == 422) << item.dump();
        }
      }
    }
    EXPECT_EQ((*server)->Stop(SIGTERM), 0) << ReadFile(data_dir + ".stderr");
    return decided;
  };
  const int answered = serve_all(dir_ + "/serve", 1);
  const int refused = static_cast<int>(payments.size()) - answered;
  // Batches decide at once on rows computed before any of their payments was decided, and
  // repair what an earlier payment of the batch made stale (engine/decide_in_order.h).
  EXPECT_EQ(serve_all(dir_ + "/serve-batch", 64), answered);

  // vigil replay of the same stream.
  std::vector<std::string> replay = {"replay", stream, "--quiet", "--data-dir", dir_ + "/replay",
                                     "--summary-json", dir_ + "/summary.json"};
  replay.insert(replay.end(), pipeline.begin(), pipeline.end());
  ASSERT_EQ(Run(replay, dir_ + "/replay.log"), 0) << ReadFile(dir_ + "/replay.log");
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(dir_ + "/summary.json"));
  EXPECT_EQ(summary["records"].get<int>(), answered);
  EXPECT_EQ(summary["rejected"].get<int>(), refused);  // the same payments refused by both

  const std::map<std::string, std::string> served = Decisions(dir_ + "/serve");
  const std::map<std::string, std::string> replayed = Decisions(dir_ + "/replay");
  ASSERT_EQ(served.size(), static_cast<size_t>(answered));
  ASSERT_EQ(replayed.size(), served.size());
  int differing = 0;
  for (const auto& [id, decision] : served) {
    const auto other = replayed.find(id);
    ASSERT_NE(other, replayed.end()) << id;
    if (other->second != decision && ++differing <= 3) {
      ADD_FAILURE() << id << "\n  serve:  " << decision << "\n  replay: " << other->second;
    }
  }
  EXPECT_EQ(differing, 0);
  const std::map<std::string, std::string> batched = Decisions(dir_ + "/serve-batch");
  ASSERT_EQ(batched.size(), served.size());
  differing = 0;
  for (const auto& [id, decision] : served) {
    const auto other = batched.find(id);
    ASSERT_NE(other, batched.end()) << id;
    if (other->second != decision && ++differing <= 3) {
      ADD_FAILURE() << id << "\n  serve:       " << decision << "\n  serve batch: " << other->second;
    }
  }
  EXPECT_EQ(differing, 0);
  // The stream is busy enough that some rows of a batch read an account an earlier payment of
  // the batch changed: the repair that keeps replay causal was exercised.
  EXPECT_GT(summary["redecided"].get<int>(), 0);
}

}  // namespace
}  // namespace vigil
