// End-to-end tests of the vigil binary: exit codes, help, and crash recovery of `vigil replay`
// (the process dies mid-stream without any cleanup, then a second run resumes).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::SameFile;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Result RunVigil(const std::vector<std::string>& args, const std::string& dir) {
  const std::string log = dir + "/vigil.log";
  Result r;
  r.exit_code = ::vigil::testing::RunProcess(VIGIL_BINARY, args, log);
  r.out = ReadFile(log);
  return r;
}

class VigilBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    fx_ = ::vigil::testing::SourceDir() + "/data/fx_rates.csv";
    sample_ = ::vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, fx_, sample_;
};

TEST_F(VigilBinaryTest, HelpListsSubcommandsAndExitsZero) {
  Result r = RunVigil({"--help"}, dir_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("replay"), std::string::npos);
  EXPECT_NE(r.out.find("gen"), std::string::npos);
  r = RunVigil({"replay", "--help"}, dir_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
}

TEST_F(VigilBinaryTest, UsageAndEnvironmentErrorsExitTwo) {
  EXPECT_EQ(RunVigil({}, dir_).exit_code, 2);  // no subcommand
  EXPECT_EQ(RunVigil({"replay", "--no-such-flag", sample_}, dir_).exit_code, 2);
  Result missing = RunVigil({"replay", dir_ + "/missing.csv", "--fx-rates", fx_}, dir_);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("missing.csv"), std::string::npos) << missing.out;
}

TEST_F(VigilBinaryTest, FailOnRejectExitsOne) {
  const std::string input = dir_ + "/bad.csv";
  std::ofstream(input)
      << "Timestamp,From Bank,Account,To Bank,Account,Amount Received,"
         "Receiving Currency,Amount Paid,Payment Currency,Payment Format,"
         "Is Laundering\n2022/09/01 00:20,1,A,2,B,1.00,US Dollar,x,US Dollar,ACH,0\n";
  EXPECT_EQ(RunVigil({"replay", input, "--fx-rates", fx_, "--quiet"}, dir_).exit_code, 0);
  EXPECT_EQ(
      RunVigil({"replay", input, "--fx-rates", fx_, "--quiet", "--fail-on-reject"}, dir_).exit_code,
      1);
}

// Payment message files replay like the others: the format is detected, every message of a type
// vigil reads is decided, the rest are rejected with their reasons.
TEST_F(VigilBinaryTest, ReplaysSwiftMtAndIso20022Files) {
  const std::string mt = dir_ + "/payments.fin";
  {
    std::ofstream out(mt, std::ios::binary);
    for (const char* f : {"mt103_0002", "mt103_0004", "mt202_0005", "mt205_0001", "mt103_0010"}) {
      out << ReadFile(::vigil::testing::TestDataPath(std::string("swift_mt/messages/") + f +
                                                     ".fin"))
          << "\n$\n";
    }
  }
  const std::string summary = dir_ + "/summary.json";
  Result r = RunVigil({"replay", mt, "--fx-rates", fx_, "--quiet", "--summary-json", summary},
                      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json s = nlohmann::json::parse(ReadFile(summary));
  EXPECT_EQ(s["format"], "swift_mt") << s.dump();
  EXPECT_EQ(s["records"], 4) << s.dump();
  EXPECT_EQ(s["rejected"], 1) << s.dump();
  EXPECT_EQ(s["rejects_by_reason"]["unsupported_message_type"], 1) << s.dump();

  r = RunVigil({"replay",
                ::vigil::testing::TestDataPath("iso20022/messages/mx_pacs.008.001.08_0008.xml"),
                "--fx-rates", fx_, "--quiet", "--summary-json", summary},
               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  s = nlohmann::json::parse(ReadFile(summary));
  EXPECT_EQ(s["format"], "iso20022") << s.dump();
  EXPECT_EQ(s["records"], 1) << s.dump();
  EXPECT_EQ(s["rejected"], 0) << s.dump();
}

// The process dies twice mid-stream (no destructors, nothing flushed), each time after its last
// checkpoint; the runs that follow resume. The features written across all runs must equal an
// uninterrupted run's, byte for byte: no row lost, none repeated, no counter reset or doubled.
// The backtest's counts against the same counts taken from the features the replay wrote: the
// decisions must follow the rules on exactly those values, and the labels.
TEST_F(VigilBinaryTest, ReplayWithPolicyBacktestsAgainstTheLabels) {
  const std::string policy = dir_ + "/p.yaml";
  std::ofstream(policy) << R"(version: "t1"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: large
    when: amount_reporting >= 5000
    action: review
    reason: "{amount_reporting}"
  - id: busy
    when: orig_out_count_24h >= 2
    action: block
    mode: shadow
    reason: "{orig_out_count_24h}"
)";
  const std::string features = dir_ + "/f.csv", summary = dir_ + "/s.json";
  Result r = RunVigil({"replay", sample_, "--fx-rates", fx_, "--quiet", "--features-out", features,
                       "--policy", policy, "--summary-json", summary},
                      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("backtest of policy t1@"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(rules only)"), std::string::npos) << r.out;

  std::vector<std::string> lines = absl::StrSplit(ReadFile(features), '\n', absl::SkipEmpty());
  ASSERT_GT(lines.size(), 1u);
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t amount = column("amount_reporting"), out24 = column("orig_out_count_24h"),
               label = column("label");
  int64_t large = 0, large_laundering = 0, laundering = 0, busy = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    double a = 0, o = 0;
    ASSERT_TRUE(absl::SimpleAtod(cells[amount], &a));
    ASSERT_TRUE(absl::SimpleAtod(cells[out24], &o));
    const bool positive = cells[label] == "1";
    large += a >= 5000;
    large_laundering += a >= 5000 && positive;
    laundering += positive;
    busy += o >= 2;
  }
  const nlohmann::json j = nlohmann::json::parse(ReadFile(summary));
  const nlohmann::json& b = j["backtest"];
  EXPECT_EQ(b["decisions"], static_cast<int64_t>(lines.size() - 1));
  EXPECT_EQ(b["confusion"]["true_positives"], large_laundering);
  EXPECT_EQ(b["confusion"]["false_positives"], large - large_laundering);
  EXPECT_EQ(b["confusion"]["false_negatives"], laundering - large_laundering);
  EXPECT_EQ(b["rules"]["large"]["hits"], large);
  EXPECT_EQ(b["rules"]["busy"]["hits"], busy);
  EXPECT_EQ(b["rules"]["busy"]["shadow"], true);
  EXPECT_EQ(b["by_action_and_label"].contains("BLOCK"), false);  // the block rule is shadow
  EXPECT_EQ(j["model_version"], "");
  EXPECT_GT(large, 0);
  EXPECT_GT(busy, 0);
}

// --compare: the decisions that change are exactly the records where the candidate's extra
// rule fires and the baseline's does not.
TEST_F(VigilBinaryTest, ReplayCompareReportsHowDecisionsChange) {
  const std::string base = R"(version: "base"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: large
    when: amount_reporting >= 5000
    action: review
    reason: r
)";
  std::ofstream(dir_ + "/a.yaml") << base;
  std::ofstream(dir_ + "/b.yaml") << base << R"(  - id: busy
    when: orig_out_count_24h >= 2
    action: block
    reason: r
)";
  const std::string features = dir_ + "/f.csv", summary = dir_ + "/s.json";
  Result r = RunVigil(
      {"replay", sample_, "--fx-rates", fx_, "--quiet", "--features-out", features, "--policy",
       dir_ + "/a.yaml", "--compare", dir_ + "/b.yaml", "--summary-json", summary},
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> lines = absl::StrSplit(ReadFile(features), '\n', absl::SkipEmpty());
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t amount = column("amount_reporting"), out24 = column("orig_out_count_24h");
  int64_t allow_to_block = 0, review_to_block = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    double a = 0, o = 0;
    ASSERT_TRUE(absl::SimpleAtod(cells[amount], &a));
    ASSERT_TRUE(absl::SimpleAtod(cells[out24], &o));
    if (o >= 2) (a >= 5000 ? review_to_block : allow_to_block) += 1;
  }
  const nlohmann::json c = nlohmann::json::parse(ReadFile(summary))["comparison"];
  EXPECT_EQ(c["changes"]["ALLOW→BLOCK"]["count"], allow_to_block);
  EXPECT_EQ(c["changes"]["REVIEW→BLOCK"]["count"], review_to_block);
  EXPECT_EQ(c["unchanged"],
            static_cast<int64_t>(lines.size() - 1) - allow_to_block - review_to_block);
  EXPECT_LE(c["changes"]["ALLOW→BLOCK"]["examples"].size(), 5u);
  EXPECT_EQ(c["candidate_backtest"]["rules"]["busy"]["hits"], allow_to_block + review_to_block);
  EXPECT_NE(r.out.find("compared with policy base"), std::string::npos);
}

// --screening-list: the same payments and policy, decided again with a watchlist: the payment
// to a close variant of a listed name is blocked, the other one's decision does not change.
TEST_F(VigilBinaryTest, ReplayScreeningListChangesTheDecision) {
  const std::string policy = dir_ + "/p.yaml", list = dir_ + "/list.csv",
                    payments = dir_ + "/payments.jsonl", decisions = dir_ + "/d.csv";
  // No rule fires on these payments; screening thresholds default to 0.88 / 0.95.
  std::ofstream(policy) << "version: s\nthresholds: {review: 0.5, block: 0.9}\nrules:\n"
                           "  - id: huge\n    when: amount_reporting > 1000000\n"
                           "    action: review\n    reason: r\n";
  std::ofstream(list) << "id,name,aliases,type,countries,identifiers,list\n"
                         "T1,ACME SANCTIONED TRADING LLC,ACME TRDG,entity,Iran,BNCUCUHHXXX,"
                         "TEST LIST\n";
  {
    std::ofstream out(payments);
    int n = 0;
    for (const char* name : {"Acme Sanctioned Trading", "Green Valley Bakery"}) {
      ++n;
      out << R"({"id":"p)" << n << R"(","timestamp":"2022-09-01T08:0)" << n
          << R"(:00Z","originator":{"account_id":"A1","bank_id":"B1","name":"Maria Lopez"},)"
          << R"("beneficiary":{"account_id":"A)" << n + 1 << R"(","bank_id":"B2","name":")" << name
          << R"("},"amount":{"value":"120.00","currency":"USD"}})"
          << "\n";
    }
  }
  // tx_id -> action, from --decisions-out.
  const auto actions = [&] {
    std::map<std::string, std::string> out;
    std::vector<std::string> lines = absl::StrSplit(ReadFile(decisions), '\n', absl::SkipEmpty());
    for (size_t i = 1; i < lines.size(); ++i) {
      const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
      out[cells[0]] = cells[4];
    }
    return out;
  };
  const std::vector<std::string> base = {"replay", payments,          "--fx-rates",
                                         fx_,      "--quiet",         "--policy",
                                         policy,   "--decisions-out", decisions};
  Result r = RunVigil(base, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(actions(), (std::map<std::string, std::string>{{"p1", "ALLOW"}, {"p2", "ALLOW"}}));

  std::vector<std::string> screened = base;
  screened.insert(screened.end(), {"--screening-list", list});
  r = RunVigil(screened, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(actions(), (std::map<std::string, std::string>{{"p1", "BLOCK"}, {"p2", "ALLOW"}}));

  // A list that cannot be read stops the replay, naming it; without --policy the flag is a
  // usage error.
  screened.back() = dir_ + "/missing.csv";
  r = RunVigil(screened, dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("missing.csv"), std::string::npos) << r.out;
  EXPECT_EQ(
      RunVigil({"replay", payments, "--fx-rates", fx_, "--screening-list", list}, dir_).exit_code,
      2);
}

TEST_F(VigilBinaryTest, ReplayWithABadPolicyExitsOneWithTheErrors) {
  const std::string policy = dir_ + "/p.yaml";
  std::ofstream(policy) << "version: x\nthresholds: {review: 0.5, block: 0.9}\nrules:\n"
                           "  - id: a\n    when: amount > 1\n    action: review\n    reason: r\n";
  Result r = RunVigil({"replay", sample_, "--fx-rates", fx_, "--quiet", "--policy", policy}, dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("p.yaml:5:11: unknown name 'amount'"), std::string::npos) << r.out;
  EXPECT_EQ(RunVigil({"replay", sample_, "--fx-rates", fx_, "--model", "m.json"}, dir_).exit_code,
            2);  // --model without --policy
}

// --gpu scores the replay's batches on the GPU: the same decisions, bit for bit, as the CPU's.
// Without a usable GPU (or a build without CUDA) the replay refuses to start, naming --gpu.
TEST_F(VigilBinaryTest, ReplayOnTheGpuDecidesAsOnTheCpuOrRefusesToStart) {
  const std::string policy = ::vigil::testing::SourceDir() + "/policies/default.yaml";
  const std::string model = ::vigil::testing::TestDataPath("models/serve_model.json");
  const std::vector<std::string> base = {"replay", sample_, "--fx-rates", fx_, "--quiet",
                                         "--policy", policy, "--model", model};
  std::vector<std::string> cpu = base, gpu = base;
  cpu.insert(cpu.end(), {"--decisions-out", dir_ + "/cpu.csv"});
  gpu.insert(gpu.end(), {"--decisions-out", dir_ + "/gpu.csv", "--gpu"});
  const Result on_cpu = RunVigil(cpu, dir_);
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.out;
  const Result on_gpu = RunVigil(gpu, dir_);
  if (on_gpu.exit_code == 2) {
    EXPECT_NE(on_gpu.out.find("--gpu: the CUDA backend cannot score model@"), std::string::npos)
        << on_gpu.out;
  } else {
    ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.out;
    EXPECT_EQ(ReadFile(dir_ + "/gpu.csv"), ReadFile(dir_ + "/cpu.csv"));
  }
  const Result no_model =
      RunVigil({"replay", sample_, "--fx-rates", fx_, "--quiet", "--policy", policy, "--gpu"},
               dir_);
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_NE(no_model.out.find("--gpu needs --policy and --model"), std::string::npos)
      << no_model.out;
  const Result no_policy = RunVigil({"replay", sample_, "--fx-rates", fx_, "--gpu"}, dir_);
  EXPECT_EQ(no_policy.exit_code, 2);
  EXPECT_NE(no_policy.out.find("--gpu needs --policy and --model"), std::string::npos)
      << no_policy.out;
}

TEST_F(VigilBinaryTest, ReplayKilledMidStreamResumesToTheSameFeatures) {
  const std::string clean = dir_ + "/clean.csv";
  ASSERT_EQ(
      RunVigil({"replay", sample_, "--fx-rates", fx_, "--quiet", "--features-out", clean}, dir_)
          .exit_code,
      0);

  const std::string out = dir_ + "/resumed.csv";
  const std::vector<std::string> base = {
      "replay",     sample_,         "--fx-rates",     fx_, "--quiet",
      "--data-dir", dir_ + "/state", "--features-out", out, "--checkpoint-every",
      "100"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  Result crash1 = RunVigil(with({"--crash-after", "250"}), dir_);
  ASSERT_EQ(crash1.exit_code, 137) << crash1.out;
  Result crash2 =
      RunVigil(with({"--crash-after", "180", "--summary-json", dir_ + "/s2.json"}), dir_);
  ASSERT_EQ(crash2.exit_code, 137) << crash2.out;  // resumed at 200, died at 380
  Result finish = RunVigil(with({"--summary-json", dir_ + "/s3.json"}), dir_);
  ASSERT_EQ(finish.exit_code, 0) << finish.out;
  EXPECT_NE(finish.out.find("resumed after 300"), std::string::npos) << finish.out;
  EXPECT_NE(ReadFile(dir_ + "/s3.json").find("\"records\": 367"), std::string::npos);
  EXPECT_TRUE(SameFile(out, clean));
}

}  // namespace
}  // namespace vigil
