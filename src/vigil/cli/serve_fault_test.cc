// `vigil serve` on a failing disk, from outside the process: the real binary run under libfiu
// (`fiu-run -x`, Debian's fiu-utils), whose fsync/fdatasync or write(2) are made to fail at run
// time with `fiu-ctrl` while it serves. The server must then stop acknowledging (POST /v1/score
// answers 503 audit_unavailable, batches too) and turn unready (/readyz 503); once the fault is
// lifted, the process killed and restarted without libfiu on the same data dir, every decision
// answered 200 is in the intact log (re-sending its id answers the identical body without
// growing the log), and the refused transactions, retried, are decided with each payment counted
// once.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
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
using ::vigil::testing::HttpOnce;
using ::vigil::testing::MetricValue;
using ::vigil::testing::TestHttpResponse;

// The body as a JSON object; an empty one when it is not (a failed exchange, not JSON).
nlohmann::json Object(const TestHttpResponse& r) {
  nlohmann::json j = r.Json();
  return j.is_object() ? j : nlohmann::json::object();
}

// The error code of an error answer; "" for anything else.
std::string ErrorCode(const TestHttpResponse& r) {
  const nlohmann::json j = Object(r);
  const auto e = j.find("error");
  return e != j.end() && e->is_object() ? e->value("code", "") : "";
}

std::multiset<int> OneTo(int n) {
  std::multiset<int> out;
  for (int i = 1; i <= n; ++i) out.insert(i);
  return out;
}

// "name" on the PATH, "" when it is not there.
std::string FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The disk's failure: failure points of libfiu's POSIX preload library
// (/usr/share/doc/fiu-utils/function_list.gz), enabled in the running server.
struct FaultCase {
  std::vector<std::string> points;
};

class ServeFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fiu_run_ = FindProgram("fiu-run");
    fiu_ctrl_ = FindProgram("fiu-ctrl");
    ASSERT_FALSE(fiu_run_.empty() || fiu_ctrl_.empty())
        << "fiu-run and fiu-ctrl (Debian package fiu-utils) are not installed: run scripts/setup";
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_fault_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << kCountingPolicy;
    const std::string source = ::vigil::testing::SourceDir();
    serve_ = {VIGIL_BINARY, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
              "--data-dir", dir_ + "/data",
              "--model", ::vigil::testing::TestDataPath("models/serve_model.json"), "--policy",
              dir_ + "/count.yaml", "--lists", source + "/policies/lists", "--fx-rates",
              source + "/data/fx_rates.csv", "--log", dir_ + "/requests.log", "--no-drift",
              "--workers", "8"};
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  void Start(bool under_fiu) {
    std::vector<std::string> argv = serve_;
    if (under_fiu) {
      argv.insert(argv.begin(), {fiu_run_, "-x", "-f", dir_ + "/fiu-ctrl"});
    }
    absl::StatusOr<std::unique_ptr<ServeProcess>> started =
        ServeProcess::Start(std::move(argv), dir_ + "/serve.stderr");
    ASSERT_OK(started);
    server_ = *std::move(started);
  }

  // Sends one libfiu remote control command to the server ("enable name=...").
  void Control(const std::string& command) {
    const std::string out = dir_ + "/fiu-ctrl.out";
    const int code = ::vigil::testing::RunProcess(
        fiu_ctrl_, {"-f", dir_ + "/fiu-ctrl", "-c", command, std::to_string(server_->pid())},
        out);
    const std::string said = ::vigil::testing::ReadFile(out);
    ASSERT_EQ(code, 0) << command << ": " << said;
    // fiu-ctrl exits 0 even when the command failed; it says so.
    ASSERT_FALSE(absl::StrContains(absl::AsciiStrToLower(said), "error")) << command << ": "
                                                                           << said;
  }

  TestHttpResponse Request(const std::string& method, const std::string& target,
                           const std::string& body = "") {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), method, target, body);
    EXPECT_OK(r) << method << " " << target;
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  TestHttpResponse Score(const std::string& id) {
    return Request("POST", "/v1/score", Tx(id, account_of_.at(id)));
  }
  std::string StderrTail() {
    const std::string text = ::vigil::testing::ReadFile(dir_ + "/serve.stderr");
    return text.substr(text.size() > 1500 ? text.size() - 1500 : 0);
  }
  uint64_t VerifiedRecords() {
    const TestHttpResponse r = Request("GET", "/v1/audit/verify");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(Object(r).value("intact", false), true) << r.body;
    return Object(r).value("records", uint64_t{0});
  }

  void Run(const FaultCase& fault) {
    ASSERT_NO_FATAL_FAILURE(Start(/*under_fiu=*/true));
    std::map<std::string, std::string> answered;  // id -> body
    for (int i = 0; i < 8; ++i) {
      const std::string id = absl::StrCat("before-", i);
      account_of_[id] = i % 2 == 0 ? "A1" : "A2";
      const TestHttpResponse r = Score(id);
      ASSERT_EQ(r.status, 200) << r.body;
      answered[id] = r.body;
    }
    ASSERT_EQ(Request("GET", "/readyz").status, 200);

    // failinfo=5: each call fails with EIO, as on a failing disk. Without it libfiu picks a
    // random errno of the call's, EINTR included, which callers rightly retry.
    for (const std::string& point : fault.points) {
      ASSERT_NO_FATAL_FAILURE(Control(absl::StrCat("enable name=", point, ",failinfo=5")));
    }
    std::vector<std::string> refused = {"during-0", "during-1", "during-b0", "during-b1"};
    account_of_["during-0"] = "A1";
    account_of_["during-1"] = "A2";
    account_of_["during-b0"] = "A1";
    account_of_["during-b1"] = "A1";
    for (const char* id : {"during-0", "during-1"}) {
      absl::StatusOr<TestHttpResponse> r =
          HttpOnce(server_->port(), "POST", "/v1/score", Tx(id, account_of_.at(id)));
      ASSERT_OK(r) << "no answer: the server died when its disk failed; its stderr ends\n"
                   << StderrTail();
      EXPECT_EQ(r->status, 503) << id << " acknowledged while the disk fails: " << r->body;
      EXPECT_EQ(ErrorCode(*r), "audit_unavailable") << r->body;
    }
    const TestHttpResponse batch =
        Request("POST", "/v1/score/batch",
                absl::StrCat("[", Tx("during-b0", "A1"), ",", Tx("during-b1", "A1"), "]"));
    EXPECT_EQ(batch.status, 200) << batch.body;
    const nlohmann::json items = Object(batch).value("results", nlohmann::json::array());
    EXPECT_EQ(items.size(), 2u) << batch.body;
    for (const nlohmann::json& item : items) {
      EXPECT_EQ(item.value("status", 0), 503) << batch.body;
      EXPECT_THAT(item.dump(), ::testing::HasSubstr("\"code\":\"audit_unavailable\""))
          << batch.body;
    }
    const TestHttpResponse ready = Request("GET", "/readyz");
    EXPECT_EQ(ready.status, 503) << ready.body;
    EXPECT_EQ(ErrorCode(ready), "audit_unavailable") << ready.body;
    EXPECT_EQ(MetricValue(Request("GET", "/metrics").body, "vigil_audit_healthy"), 0);
    for (const std::string& point : fault.points) {
      ASSERT_NO_FATAL_FAILURE(Control(absl::StrCat("disable name=", point)));
    }
    // The failed log stays failed (fail closed) until the process restarts.
    EXPECT_EQ(Score("during-0").status, 503);
    EXPECT_EQ(server_->Stop(SIGKILL), 128 + SIGKILL);

    ASSERT_NO_FATAL_FAILURE(Start(/*under_fiu=*/false));
    EXPECT_EQ(Request("GET", "/readyz").status, 200);
    const uint64_t records = VerifiedRecords();
    // Every answer is there; a group whose sync failed may be too (its bytes reached the OS).
    EXPECT_GE(records, answered.size());
    EXPECT_LE(records, answered.size() + refused.size());
    for (const auto& [id, body] : answered) {
      EXPECT_EQ(Score(id).body, body) << id << ": not the acknowledged decision";
    }
    EXPECT_EQ(VerifiedRecords(), records) << "re-sending decided ids grew the log";
    std::map<std::string, std::multiset<int>> counts;
    for (const auto& [id, body] : answered) {
      counts[account_of_[id]].insert(CountOf(nlohmann::json::parse(body)));
    }
    for (const std::string& id : refused) {
      const TestHttpResponse r = Score(id);
      ASSERT_EQ(r.status, 200) << id << ": " << r.body;
      counts[account_of_[id]].insert(CountOf(Object(r)));
    }
    EXPECT_EQ(VerifiedRecords(), answered.size() + refused.size());
    // Each payment counted once: before-0,2,4,6 and during-0,b0,b1 of A1; the rest of A2.
    EXPECT_EQ(counts["A1"], OneTo(7));
    EXPECT_EQ(counts["A2"], OneTo(5));
    EXPECT_EQ(server_->Stop(SIGTERM), 0);
    const int verified = ::vigil::testing::RunProcess(
        VIGIL_BINARY, {"audit", "verify", "--data-dir", dir_ + "/data"}, dir_ + "/verify.out");
    EXPECT_EQ(verified, 0) << ::vigil::testing::ReadFile(dir_ + "/verify.out");
  }

  std::string fiu_run_, fiu_ctrl_, dir_;
  std::vector<std::string> serve_;
  std::map<std::string, std::string> account_of_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(ServeFaultTest, FailingSyncsStopAcknowledging) {
  Run({.points = {"posix/io/sync/fdatasync", "posix/io/sync/fsync"}});
}

TEST_F(ServeFaultTest, FailingWritesStopAcknowledging) {
  Run({.points = {"posix/io/rw/write", "posix/io/rw/pwrite"}});
}

}  // namespace
}  // namespace vigil
