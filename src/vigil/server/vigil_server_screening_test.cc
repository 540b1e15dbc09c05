// End-to-end tests of watchlist screening in `vigil serve`: the real VigilServer in-process (the
// testdata model, the default policy with its screening thresholds 0.88 / 0.95, the FX table)
// over a small list file each test writes, spoken to over loopback HTTP. The reload tests
// rewrite the file and wait (bounded) for the poller, which checks it every second.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/screening/watchlist.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::Eventually;
using ::vigil::testing::MetricValue;
using ::vigil::testing::ReadFile;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::HttpOnce;
using testing::TestHttpResponse;
using Millis = std::chrono::milliseconds;

constexpr char kHeader[] = "id,name,aliases,type,countries,identifiers,list\n";
constexpr char kListV1[] =
    "id,name,aliases,type,countries,identifiers,list\n"
    "T1,ACME SANCTIONED TRADING LLC,ACME TRDG,entity,Iran,BNCUCUHHXXX,TEST LIST\n";
// The same entry and one more: another version of the same list.
constexpr char kListV2[] =
    "id,name,aliases,type,countries,identifiers,list\n"
    "T1,ACME SANCTIONED TRADING LLC,ACME TRDG,entity,Iran,BNCUCUHHXXX,TEST LIST\n"
    "T2,NORTHWIND SHIPPING COMPANY,,entity,Syria,,TEST LIST\n";

// A payment from a clean originator to "beneficiary" (its name), USD 120.
std::string Payment(const std::string& id, const std::string& beneficiary) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":"A1","bank_id":"B1","name":"Maria Lopez"},)",
                      R"("beneficiary":{"account_id":"A2","bank_id":"B2","name":")", beneficiary,
                      R"("},"amount":{"value":"120.00","currency":"USD"}})");
}

// The decision's reasons of kind screening.
std::vector<nlohmann::json> ScreeningReasons(const nlohmann::json& decision) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& r : decision["reasons"]) {
    if (r.value("kind", "") == "screening") out.push_back(r);
  }
  return out;
}

class VigilServerScreeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid too: two builds' test runs may share the machine's temporary directory.
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_screening_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    list_ = dir_ + "/test_list.csv";
    config_ = testing::TestServeConfig(dir_);
    config_.worker_threads = 4;
    config_.worker_queue = 64;
    config_.score_budget = Millis(2000);
    config_.screening.lists = {list_};
    config_.screening.reload_interval = std::chrono::seconds(1);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Replaces the list file at once (a rename), as a list update should: the poller never
  // reads half a file.
  void WriteList(const std::string& text) {
    const std::string tmp = list_ + ".tmp";
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
    std::filesystem::rename(tmp, list_);
  }
  // The version a decision names for "text" in the list file. The list is named after its
  // file (LoadWatchlistFile), not after the entries' `list` column.
  static std::string Version(const std::string& text) {
    return absl::StrCat("test_list.csv@", screening::ContentVersion(text));
  }

  absl::StatusOr<std::unique_ptr<VigilServer>> Start() {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    if (!fx.ok()) return fx.status();
    return VigilServer::Start(config_, *std::move(fx));
  }
  void StartServer() {
    auto server = Start();
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  nlohmann::json Score(const std::string& body) {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), "POST", "/v1/score", body);
    EXPECT_OK(r);
    if (!r.ok()) return nlohmann::json();
    EXPECT_EQ(r->status, 200) << r->body;
    return r->Json();
  }
  nlohmann::json Ready() {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), "GET", "/readyz");
    EXPECT_OK(r);
    return r.ok() ? r->Json() : nlohmann::json();
  }
  double Metric(const std::string& series) {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), "GET", "/metrics");
    EXPECT_OK(r);
    return r.ok() ? MetricValue(r->body, series) : -1;
  }

  std::string dir_, list_;
  ServeConfig config_;
  std::unique_ptr<VigilServer> server_;
};

TEST_F(VigilServerScreeningTest, ANearMatchOfAListedNameBlocksAndNamesTheListVersion) {
  WriteList(kListV1);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const nlohmann::json d = Score(Payment("scr-1", "Acme Sanctioned Trading"));
  EXPECT_EQ(d["action"], "BLOCK") << d.dump();
  const std::vector<nlohmann::json> hits = ScreeningReasons(d);
  ASSERT_EQ(hits.size(), 1u) << d.dump();
  EXPECT_EQ(hits[0]["code"], "TEST LIST:T1");
  EXPECT_THAT(hits[0]["text"].get<std::string>(), HasSubstr("ACME SANCTIONED TRADING LLC"));
  // At or above the default policy's block threshold: the hit alone blocks.
  EXPECT_GE(hits[0]["score"].get<double>(), 0.95) << d.dump();
  ASSERT_TRUE(d.contains("screening")) << d.dump();
  EXPECT_EQ(d["screening"]["max_score"], hits[0]["score"]);
  EXPECT_THAT(d["screening"]["lists"], ElementsAre(Version(kListV1)));

  // A clean payment: screened (the object is there), nothing found.
  const nlohmann::json clean = Score(Payment("scr-2", "Green Valley Bakery"));
  EXPECT_TRUE(ScreeningReasons(clean).empty()) << clean.dump();
  ASSERT_TRUE(clean.contains("screening")) << clean.dump();
  EXPECT_EQ(clean["screening"]["max_score"], 0.0) << clean.dump();
  EXPECT_THAT(clean["screening"]["lists"], ElementsAre(Version(kListV1)));

  EXPECT_THAT(Ready()["screening_lists"], ElementsAre(Version(kListV1)));
  EXPECT_EQ(Metric("vigil_screening_list_entries"), 1);
  EXPECT_EQ(Metric("vigil_screening_reloads_total"), 0);
  EXPECT_EQ(Metric("vigil_screening_reload_failures_total"), 0);
}

// Without a model the rules-only decision maker screens too.
TEST_F(VigilServerScreeningTest, RulesOnlyDecisionsAreScreenedToo) {
  WriteList(kListV1);
  config_.model.clear();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const nlohmann::json d = Score(Payment("scr-1", "Acme Sanctioned Trading"));
  EXPECT_EQ(d["model_role"], "none") << d.dump();
  EXPECT_EQ(d["action"], "BLOCK") << d.dump();
  ASSERT_EQ(ScreeningReasons(d).size(), 1u) << d.dump();
  EXPECT_THAT(d["screening"]["lists"], ElementsAre(Version(kListV1)));
}

// Without screening.lists decisions carry no screening object, /readyz no lists, /metrics no
// screening series.
TEST_F(VigilServerScreeningTest, NoListsNoScreening) {
  config_.screening.lists.clear();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const nlohmann::json d = Score(Payment("scr-1", "Acme Sanctioned Trading"));
  EXPECT_FALSE(d.contains("screening")) << d.dump();
  EXPECT_TRUE(ScreeningReasons(d).empty()) << d.dump();
  EXPECT_FALSE(Ready().contains("screening_lists"));
  EXPECT_TRUE(std::isnan(Metric("vigil_screening_list_entries")));
}

TEST_F(VigilServerScreeningTest, AListThatCannotBeReadFailsTheStartNamingIt) {
  // Absent.
  EXPECT_THAT(Start(), testing::StatusIs(absl::StatusCode::kNotFound, HasSubstr(list_)));
  // Present but not a list (an unknown type on line 2).
  WriteList(absl::StrCat(kHeader, "T1,ACME,,spaceship,,,TEST LIST\n"));
  absl::StatusOr<std::unique_ptr<VigilServer>> bad = Start();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr(list_));
}

// A changed list is swapped in by the poller: later decisions name the new version. A list
// that no longer reads is logged and counted; the lists in force stay.
TEST_F(VigilServerScreeningTest, ReloadsAChangedListAndKeepsTheOldOneWhenTheNewOneIsBroken) {
  WriteList(kListV1);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_THAT(Score(Payment("scr-1", "Acme Sanctioned Trading"))["screening"]["lists"],
              ElementsAre(Version(kListV1)));

  WriteList(kListV2);
  ASSERT_TRUE(Eventually([&] { return Metric("vigil_screening_reloads_total") == 1; }))
      << ReadFile(config_.log_path);
  // A new payment (the same id would be answered from the idempotency cache).
  const nlohmann::json d = Score(Payment("scr-2", "Northwind Shipping Company"));
  EXPECT_EQ(d["action"], "BLOCK") << d.dump();
  ASSERT_EQ(ScreeningReasons(d).size(), 1u) << d.dump();
  EXPECT_EQ(ScreeningReasons(d)[0]["code"], "TEST LIST:T2");
  EXPECT_THAT(d["screening"]["lists"], ElementsAre(Version(kListV2)));
  EXPECT_THAT(Ready()["screening_lists"], ElementsAre(Version(kListV2)));
  EXPECT_EQ(Metric("vigil_screening_list_entries"), 2);

  // Broken: an entry without a name.
  WriteList(absl::StrCat(kListV2, "T3,,,entity,,,TEST LIST\n"));
  ASSERT_TRUE(Eventually([&] { return Metric("vigil_screening_reload_failures_total") == 1; }))
      << ReadFile(config_.log_path);
  const nlohmann::json kept = Score(Payment("scr-3", "Acme Sanctioned Trading"));
  EXPECT_EQ(kept["action"], "BLOCK") << kept.dump();
  EXPECT_THAT(kept["screening"]["lists"], ElementsAre(Version(kListV2)));
  EXPECT_EQ(Metric("vigil_screening_reloads_total"), 1);
  EXPECT_EQ(Metric("vigil_screening_list_entries"), 2);
  server_->log().Flush();
  const std::string log = ReadFile(config_.log_path);
  EXPECT_THAT(log, HasSubstr("screening lists reloaded"));
  EXPECT_THAT(log, HasSubstr("screening lists not reloaded"));
  EXPECT_THAT(log, HasSubstr(list_));  // the error names the list
}

}  // namespace
}  // namespace vigil
