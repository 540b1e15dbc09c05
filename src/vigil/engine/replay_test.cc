#include "vigil/engine/replay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/common/sha256.h"
#include "vigil/drift/measured_null.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/rules/policy.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::StatusIs;
using ::vigil::testing::TestDataPath;


std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines;
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/replay_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto fx = FxRates::LoadFile(::vigil::testing::SourceDir() + "/data/fx_rates.csv");
    ASSERT_OK(fx.status());
    fx_ = *std::move(fx);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ReplayOptions Options(const std::string& input) {
    ReplayOptions o;
    o.input_path = input;
    o.temp_dir = dir_;
    return o;
  }

  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  std::string dir_;
  FxRates fx_;
};

constexpr char kHeader[] =
    "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,"
    "Amount Paid,Payment Currency,Payment Format,Is Laundering\n";

TEST_F(ReplayTest, ReplaysTheAmlworldSampleInEventTimeOrder) {
  ReplayOptions o = Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  o.features_out = dir_ + "/features.csv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(s.format, "amlworld_csv");
  EXPECT_EQ(s.records, 667);  // every row of the sample
  EXPECT_EQ(s.rejected, 0);
  EXPECT_EQ(s.labelled_laundering, 27);  // rows with Is Laundering = 1 (PROVENANCE.md)
  EXPECT_EQ(s.first_event_time, "2022-09-01T00:00:00.000000Z");
  EXPECT_GT(s.accounts, 0);
  ASSERT_EQ(s.stages.size(), 4u);
  EXPECT_EQ(s.stages[2].stage, "features");
  EXPECT_EQ(s.stages[2].count, 667u);

  const std::vector<std::string> rows = Lines(ReadFile(o.features_out));
  ASSERT_EQ(rows.size(), 668u);
  const std::vector<std::string> header = absl::StrSplit(rows[0], ',');
  EXPECT_EQ(header.size(), FeatureExtractor::Schema()->size() + 6);  // ids, time, parties
  EXPECT_EQ(header.front(), "tx_id");
  EXPECT_EQ(header.back(), "typology");
  // Rows come out in event-time order (the file is not sorted) with file order breaking ties.
  std::string previous;
  int laundering = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(rows[i], ',');
    ASSERT_EQ(cells.size(), header.size()) << rows[i];
    ASSERT_LE(previous, cells[1]) << "row " << i;
    previous = cells[1];
    laundering += cells[cells.size() - 2] == "1";
  }
  EXPECT_EQ(laundering, 27);
}

TEST_F(ReplayTest, CountsRejectsByReasonAndKeepsGoing) {
  const std::string input = dir_ + "/bad.csv";
  Write(input, std::string(kHeader) +
                   "2022/09/01 00:20,001,A1,002,B1,10.00,US Dollar,10.00,US Dollar,ACH,0\n"
                   "2022/09/01 00:21,001,A1,002,B1,10.00,US Dollar,ten,US Dollar,ACH,0\n"
                   "2022/13/01 00:22,001,A1,002,B1,10.00,US Dollar,10.00,US Dollar,ACH,0\n"
                   "2022/09/01 00:23,001,A1,002,B1,10.00,Zloty,10.00,Zloty,ACH,0\n"
                   "2022/09/01 00:10,001,A1,002,B1,10.00,US Dollar,10.00,US Dollar,ACH,0\n");
  ReplayOptions o = Options(input);
  o.rejects_out = dir_ + "/rejects.tsv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(s.records, 2);
  EXPECT_EQ(s.rejected, 3);
  EXPECT_EQ(s.rejects_by_reason.at("invalid_amount"), 1);
  EXPECT_EQ(s.rejects_by_reason.at("invalid_timestamp"), 1);
  EXPECT_EQ(s.rejects_by_reason.at("unknown_currency"), 1);
  const std::vector<std::string> rejects = Lines(ReadFile(o.rejects_out));
  ASSERT_EQ(rejects.size(), 4u);  // header + 3
  EXPECT_EQ(rejects[0], "line\tfield\treason\tmessage\trecord");
  EXPECT_TRUE(absl::StartsWith(rejects[1], "3\tAmount Paid\tinvalid_amount\t")) << rejects[1];
  EXPECT_NE(rejects[1].find("ten,US Dollar"), std::string::npos);
}

TEST_F(ReplayTest, SpilledOrderingGivesTheSameRowsAsInMemory) {
  ReplayOptions in_memory = Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  in_memory.features_out = dir_ + "/a.csv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary a, RunReplay(in_memory, fx_, RealClock()));
  EXPECT_EQ(a.spilled_runs, 0);
  ReplayOptions spilled = in_memory;
  spilled.features_out = dir_ + "/b.csv";
  spilled.order_memory_bytes = 8 << 10;  // forces many sorted runs
  ASSERT_OK_AND_ASSIGN(ReplaySummary b, RunReplay(spilled, fx_, RealClock()));
  EXPECT_GT(b.spilled_runs, 3);
  EXPECT_EQ(ReadFile(in_memory.features_out), ReadFile(spilled.features_out));
}

// State carried across runs: replaying the first half, then the second half into the same data
// dir, gives the second half exactly the rows a single run over the whole stream gives it.
TEST_F(ReplayTest, StateInTheDataDirContinuesAcrossRuns) {
  const std::string sample = ReadFile(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  std::vector<std::string> lines = Lines(sample);
  // Sort by timestamp so that splitting the file splits event time too (a stable sort, as
  // replay's own ordering is).
  std::stable_sort(lines.begin() + 1, lines.end(),
                   [](const std::string& x, const std::string& y) { return x.substr(0, 16) < y.substr(0, 16); });
  std::string first = lines[0] + "\n", second = lines[0] + "\n", whole = lines[0] + "\n";
  for (size_t i = 1; i < lines.size(); ++i) {
    (i <= 300 ? first : second) += lines[i] + "\n";
    whole += lines[i] + "\n";
  }
  Write(dir_ + "/first.csv", first);
  Write(dir_ + "/second.csv", second);
  Write(dir_ + "/whole.csv", whole);

  ReplayOptions one = Options(dir_ + "/whole.csv");
  one.features_out = dir_ + "/whole_features.csv";
  ASSERT_OK(RunReplay(one, fx_, RealClock()).status());

  ReplayOptions a = Options(dir_ + "/first.csv");
  a.data_dir = dir_ + "/state";
  ASSERT_OK(RunReplay(a, fx_, RealClock()).status());
  ReplayOptions b = Options(dir_ + "/second.csv");
  b.data_dir = dir_ + "/state";
  b.features_out = dir_ + "/second_features.csv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(b, fx_, RealClock()));
  EXPECT_EQ(s.resumed_from, 0);  // another input: a new stream on the same accounts

  // Ids name the source file, so compare everything after the id column.
  const auto strip_ids = [](const std::vector<std::string>& rows) {
    std::vector<std::string> out;
    for (size_t i = 1; i < rows.size(); ++i) out.push_back(rows[i].substr(rows[i].find(',')));
    return out;
  };
  std::vector<std::string> whole_rows = strip_ids(Lines(ReadFile(one.features_out)));
  const std::vector<std::string> second_rows = strip_ids(Lines(ReadFile(b.features_out)));
  ASSERT_EQ(whole_rows.size(), 667u);
  ASSERT_EQ(second_rows.size(), 667u - 300u);
  EXPECT_EQ(std::vector<std::string>(whole_rows.begin() + 300, whole_rows.end()), second_rows);
}

// One record with a mistyped year must not become the state's watermark: it is reported, and
// the next file replayed into the same data dir is not "too late".
TEST_F(ReplayTest, ARecordFarAheadOfItsNeighboursIsRejectedNotApplied) {
  std::vector<std::string> lines = Lines(ReadFile(TestDataPath("amlworld/HI-Small_Trans.sample.csv")));
  std::stable_sort(lines.begin() + 1, lines.end(), [](const std::string& x, const std::string& y) {
    return x.substr(0, 16) < y.substr(0, 16);
  });
  std::string first = lines[0] + "\n", second = lines[0] + "\n";
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (i == 150) line.replace(0, 4, "2099");  // "2022/09/01 ..." -> "2099/09/01 ..."
    (i <= 300 ? first : second) += line + "\n";
  }
  Write(dir_ + "/first.csv", first);
  Write(dir_ + "/second.csv", second);
  ReplayOptions a = Options(dir_ + "/first.csv");
  a.data_dir = dir_ + "/state";
  a.rejects_out = dir_ + "/rejects.tsv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s1, RunReplay(a, fx_, RealClock()));
  EXPECT_EQ(s1.rejected, 1);
  EXPECT_EQ(s1.rejects_by_reason["event_time_outlier"], 1);
  EXPECT_EQ(s1.last_event_time.substr(0, 4), "2022");
  const std::vector<std::string> rejects = Lines(ReadFile(a.rejects_out));
  ASSERT_EQ(rejects.size(), 2u);
  EXPECT_THAT(rejects[1], ::testing::HasSubstr("151\t$.timestamp\tevent_time_outlier\tevent time 2099-09-01"));
  ReplayOptions b = Options(dir_ + "/second.csv");
  b.data_dir = dir_ + "/state";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s2, RunReplay(b, fx_, RealClock()));
  EXPECT_EQ(s2.rejected, 0);
  EXPECT_EQ(s2.records, 367);
  // Off: the record is applied, and it is the file's last event.
  ReplayOptions off = Options(dir_ + "/first.csv");
  off.max_event_lead = std::chrono::microseconds(0);
  ASSERT_OK_AND_ASSIGN(ReplaySummary s3, RunReplay(off, fx_, RealClock()));
  EXPECT_EQ(s3.rejected, 0);
  EXPECT_EQ(s3.last_event_time.substr(0, 4), "2099");
}

TEST_F(ReplayTest, ReplayingTheSameInputAgainIsANoOp) {
  ReplayOptions o = Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  o.data_dir = dir_ + "/state";
  o.features_out = dir_ + "/features.csv";
  o.checkpoint_every = 100;
  ASSERT_OK_AND_ASSIGN(ReplaySummary first, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(first.checkpoints, 7);  // 6 periodic (100..600) + the final one
  const std::string output = ReadFile(o.features_out);
  ASSERT_OK_AND_ASSIGN(ReplaySummary again, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(again.resumed_from, 667);
  EXPECT_EQ(again.records, 0);  // nothing counted twice
  EXPECT_EQ(ReadFile(o.features_out), output);
  // Resuming into another features file would leave a gap: refused.
  o.features_out = dir_ + "/other.csv";
  EXPECT_THAT(RunReplay(o, fx_, RealClock()), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(ReplayTest, DecisionsWithADataDirAreRecordedInItsAuditLogOnce) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(R"(version: "replayed"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: big
    when: amount_reporting > 10000
    action: review
    reason: "large"
)",
                              "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy.status());
  DecisionMaker decider(*policy, nullptr, layout);
  const std::string input = TestDataPath("amlworld/HI-Small_Trans.sample.csv");
  ReplayOptions o = Options(input);
  o.data_dir = dir_ + "/state";
  o.decisions = &decider;
  o.checkpoint_every = 100;
  ASSERT_OK_AND_ASSIGN(o.audit_signer, LoadOrCreateSigningKey(DefaultSigningKeyPath(o.data_dir)));
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  ASSERT_TRUE(s.audit.has_value());
  EXPECT_EQ(s.audit->recorded, s.records);
  EXPECT_EQ(s.audit->log_size, s.records);
  EXPECT_NE(ReplaySummaryToText(s).find("audit: 667 decisions recorded"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(ReplaySummaryToJson(s))["audit"]["recorded"], 667);

  // Run again: every record resumed, nothing recorded twice.
  ASSERT_OK_AND_ASSIGN(ReplaySummary again, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(again.audit->recorded, 0);
  EXPECT_EQ(again.audit->log_size, 667);

  KvStoreOptions store_options;
  store_options.path = o.data_dir + "/features";
  store_options.create_if_missing = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(store_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                       audit::AuditLog::OpenForReading(store.get()));
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(*log, {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.records, 667u);
  ASSERT_TRUE(report.latest_tree_head.has_value());
  EXPECT_EQ(report.latest_tree_head->size, 667u);  // signed when the replay closed the log
  // Each record names its input line: the input's lines hash to the records' input hashes.
  std::set<std::string> line_hashes;
  for (const std::string& line : Lines(ReadFile(input))) line_hashes.insert(Sha256Hex(line));
  ASSERT_OK(log->ForEachRecord(0, [&](uint64_t, std::string_view bytes) -> absl::Status {
    absl::StatusOr<audit::AuditRecord> r = audit::DecodeRecord(bytes);
    if (!r.ok()) return r.status();
    EXPECT_EQ(r->source, "replay");
    EXPECT_EQ(r->input_format, "amlworld_csv");
    EXPECT_TRUE(line_hashes.contains(audit::HashHex(r->input_sha256))) << r->transaction.id;
    EXPECT_EQ(r->decision.policy_version.substr(0, 9), "replayed@");
    EXPECT_TRUE(r->decision.accounts_scored) << "the account step ran before recording";
    return absl::OkStatus();
  }));
}

// The account alerts in --decisions-out against a recomputation from its own columns: an account
// alerts on the payment that brings its rule-hit payments to alert_rule_hits, once (the sample
// spans 11 days, inside one window), and the backtest counts the same alerts.
TEST_F(ReplayTest, AccountAlertsAreRaisedOnceWhenAnAccountsRuleHitsReachTheThreshold) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(R"(version: "accounts"
thresholds: {review: 0.5, block: 0.9}
accounts: {alert_rule_hits: 3}
rules:
  - id: big
    when: amount_reporting > 10000
    action: review
    reason: "large"
)",
                              "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy.status());
  DecisionMaker decider(*policy, nullptr, layout);
  ReplayOptions o = Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  o.decisions = &decider;
  o.decisions_out = dir_ + "/decisions.csv";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  const std::vector<std::string> rows = Lines(ReadFile(o.decisions_out));
  ASSERT_EQ(rows.size(), 668u);
  const std::vector<std::string> header = absl::StrSplit(rows[0], ',');
  ASSERT_EQ(header.size(), 13u);
  EXPECT_EQ(header[11], "originator_alert");
  EXPECT_EQ(header[12], "beneficiary_alert");
  std::map<std::string, int> hits;
  std::map<std::string, int> alerts;
  int64_t alert_cells = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    // No field of this sample is quoted or holds a comma.
    const std::vector<std::string> c = absl::StrSplit(rows[i], ',');
    ASSERT_EQ(c.size(), 13u) << rows[i];
    const bool hit = !c[7].empty();
    for (int party = 0; party < 2; ++party) {
      const std::string& account = c[2 + party];
      if (party == 1 && account == c[2]) continue;  // a payment to oneself counts once
      if (hit) ++hits[account];
      const bool expected = hit && hits[account] == 3;
      const std::string& cell = c[11 + party];
      EXPECT_EQ(!cell.empty(), expected) << rows[i] << " party " << party;
      if (!cell.empty()) {
        EXPECT_EQ(cell, "rule_hits");
        ++alerts[account];
        ++alert_cells;
      }
    }
  }
  ASSERT_GT(alert_cells, 0) << "the threshold is low enough to be reached in the sample";
  for (const auto& [account, n] : alerts) EXPECT_EQ(n, 1) << account;
  ASSERT_TRUE(s.backtest.has_value());
  EXPECT_EQ(s.backtest->accounts.alerts, alert_cells);
  EXPECT_EQ(s.backtest->accounts.alerted, static_cast<int64_t>(alerts.size()));
  EXPECT_GT(s.backtest->accounts.laundering, 0);
}

TEST_F(ReplayTest, WithARecordKekTheRecordedPersonalFieldsAreSealed) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy =
      Policy::Parse("version: \"sealed\"\nthresholds: {review: 0.5, block: 0.9}\nrules: []\n",
                    "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy.status());
  DecisionMaker decider(*policy, nullptr, layout);
  const audit::TestKek kek = audit::MakeTestKek(dir_ + "/keys", "kek", audit::KekKind::kSm2);
  ReplayOptions o = Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  o.data_dir = dir_ + "/state";
  o.decisions = &decider;
  ASSERT_OK_AND_ASSIGN(o.audit_signer, LoadOrCreateSigningKey(DefaultSigningKeyPath(o.data_dir)));
  o.audit_record_kek = kek.public_key;
  o.audit_record_suite = crypto::CipherSuite::kSm4CtrHmacSm3;
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  ASSERT_EQ(s.audit->recorded, 667);

  KvStoreOptions store_options;
  store_options.path = o.data_dir + "/features";
  store_options.create_if_missing = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(store_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                       audit::AuditLog::OpenForReading(store.get()));
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(*log, {}));
  EXPECT_TRUE(report.intact());  // without any key
  const std::unique_ptr<audit::RecordOpener> opener =
      audit::RecordOpener::ForLog(*log, kek.private_key);
  int sealed = 0;
  ASSERT_OK(log->ForEachRecord(0, [&](uint64_t, std::string_view bytes) -> absl::Status {
    absl::StatusOr<audit::AuditRecord> r = audit::DecodeRecord(bytes);
    if (!r.ok()) return r.status();
    EXPECT_TRUE(r->transaction.originator.account_id.empty());  // sealed, not readable
    sealed += r->sealed.empty() ? 0 : 1;
    absl::StatusOr<audit::AuditRecord> opened = opener->Decode(bytes);
    if (!opened.ok()) return opened.status();
    EXPECT_FALSE(opened->transaction.originator.account_id.empty());
    return absl::OkStatus();
  }));
  EXPECT_EQ(sealed, 667);
}

TEST_F(ReplayTest, ReplaysJsonLines) {
  ReplayOptions o = Options(::vigil::testing::SourceDir() + "/examples/transactions.jsonl");
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(s.format, "json_lines");
  EXPECT_GT(s.records, 0);
  EXPECT_EQ(s.rejected, 0);
}

TEST_F(ReplayTest, MissingInputIsAnError) {
  EXPECT_THAT(RunReplay(Options(dir_ + "/nope.csv"), fx_, RealClock()),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("nope.csv")));
}

TEST_F(ReplayTest, SummaryJsonHasTheDocumentedKeys) {
  ASSERT_OK_AND_ASSIGN(ReplaySummary s,
                       RunReplay(Options(TestDataPath("amlworld/HI-Small_Trans.sample.csv")),
                                 fx_, RealClock()));
  const std::string json = ReplaySummaryToJson(s);
  for (const char* key : {"\"records\": 667", "\"rejected\": 0", "\"records_per_second\"",
                          "\"stage_latency\"", "\"features\"", "\"p99_us\"", "\"accounts\"",
                          "\"state_bytes_per_account\"", "\"peak_rss_bytes\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  EXPECT_NE(ReplaySummaryToText(s).find("667 accepted, 0 rejected"), std::string::npos);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// Two hours of payments, 100 a minute, amounts uniform in [100, 1000); from "shift_minute" on,
// ten times larger.
std::string DriftStream(int shift_minute) {
  std::string out = kHeader;
  uint64_t x = 7;
  for (int minute = 0; minute < 120; ++minute) {
    for (int i = 0; i < 100; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      double amount = 100 + static_cast<double>(x >> 11) / 9007199254740992.0 * 900;
      if (minute >= shift_minute) amount *= 10;
      out += absl::StrFormat("2022/09/01 %02d:%02d,001,A%d,002,B%d,%.2f,US Dollar,%.2f,US Dollar,ACH,0\n",
                             minute / 60, minute % 60, i, (i * 7) % 100, amount, amount);
    }
  }
  return out;
}

// A profile of amount_reporting alone (uniform [100, 1000) deciles); the other features are
// reported as unmonitored.
drift::ReferenceProfile AmountProfile() {
  std::vector<double> edges, counts, sample;
  for (int i = 0; i <= 10; ++i) edges.push_back(100 + 90 * i);
  for (int i = 0; i < 10; ++i) counts.push_back(1000);
  for (int i = 0; i < 2000; ++i) sample.push_back(100 + 0.45 * i);
  nlohmann::json j = {{"feature_schema_version", FeatureExtractor::Schema()->version()},
                      {"rows", 10000}};
  j["features"]["amount_reporting"] = {{"count", 10000}, {"missing", 0}, {"bin_edges", edges},
                                       {"bin_counts", counts}, {"mean", 550},
                                       {"std", 259.8}, {"sample", sample}};
  return *drift::ReferenceProfile::Parse(j.dump(), "profile");
}

TEST_F(ReplayTest, DriftIsWatchedOnEventTimeAndReported) {
  const std::string input = dir_ + "/shifted.csv";
  Write(input, DriftStream(60));
  const drift::ReferenceProfile profile = AmountProfile();
  ReplayOptions o = Options(input);
  o.drift_profile = &profile;
  o.drift.warmup = std::chrono::seconds(0);  // a two-hour stream: no warm-up
  o.drift_report = dir_ + "/drift.html";
  ASSERT_OK_AND_ASSIGN(ReplaySummary s, RunReplay(o, fx_, RealClock()));
  ASSERT_TRUE(s.drift.has_value());
  EXPECT_EQ(s.drift->worst_level, "L3");
  EXPECT_EQ(s.drift->drifted.at("amount_reporting"), "L3");
  EXPECT_GT(s.drift->events.at("retrain_requested"), 0);
  EXPECT_GT(s.drift->events.at("freeze"), 0);
  // The shifted hour, less the detection delay and the two 15-minute dwells before L3.
  EXPECT_GT(s.drift->frozen_seconds, 1200);
  EXPECT_LT(s.drift->frozen_seconds, 3700);
  const std::string html = ReadFile(o.drift_report);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("amount_reporting"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(ReplaySummaryToJson(s));
  EXPECT_EQ(j["drift"]["worst_level"], "L3");
  EXPECT_NE(ReplaySummaryToText(s).find("drift: worst level L3"), std::string::npos);
}

TEST_F(ReplayTest, AMeasuredNullFromOneReplayCalibratesTheNext) {
  const std::string quiet = dir_ + "/quiet.csv";
  Write(quiet, DriftStream(1000));  // never shifted
  const drift::ReferenceProfile profile = AmountProfile();
  ReplayOptions o = Options(quiet);
  o.drift_profile = &profile;
  o.drift.warmup = std::chrono::seconds(0);
  o.drift_null_out = dir_ + "/null.json";
  ASSERT_OK_AND_ASSIGN(ReplaySummary first, RunReplay(o, fx_, RealClock()));
  EXPECT_EQ(first.drift->calibration, "null");
  EXPECT_TRUE(first.drift->worst_level == "none" || first.drift->worst_level == "L1")
      << first.drift->worst_level;
  ASSERT_OK_AND_ASSIGN(drift::MeasuredNull null, drift::MeasuredNull::Load(o.drift_null_out));
  ASSERT_EQ(null.windows.size(), 2u);
  EXPECT_EQ(null.windows[0].scores.count("amount_reporting"), 1u);
  ReplayOptions again = Options(quiet);
  again.drift_profile = &profile;
  again.drift.warmup = std::chrono::seconds(0);
  again.drift.measured_null = std::make_shared<const drift::MeasuredNull>(null);
  ASSERT_OK_AND_ASSIGN(ReplaySummary second, RunReplay(again, fx_, RealClock()));
  EXPECT_EQ(second.drift->calibration, "null+measured");
}

}  // namespace
}  // namespace vigil
