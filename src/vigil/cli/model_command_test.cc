// End-to-end tests of `vigil model inspect` and `vigil model predict` through the binary.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/model_file.h"
#include "vigil/model/testing_models.h"
#include "vigil/common/clock.h"
#include "vigil/common/sha256.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::ReadFile;
using ::vigil::testing::RunProcess;

class ModelCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vigil_model_cli_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    Write("m.json", testing::kXgboostTwoTrees);
    Write("model.txt", testing::kLightGbmThreeTrees);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& content) const {
    std::ofstream(Path(name), std::ios::binary) << content;
  }
  int Vigil(std::vector<std::string> args) const {
    return RunProcess(VIGIL_BINARY, std::move(args), Path("log"));
  }

  std::string dir_;
};

TEST_F(ModelCommandTest, InspectDescribesTheModel) {
  ASSERT_EQ(Vigil({"model", "inspect", Path("m.json")}), 0);
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("format: xgboost, objective binary:logistic, link sigmoid"));
  EXPECT_THAT(out, HasSubstr("trees: 2 (output groups: 1), nodes: 6 (leaves: 4)"));
  EXPECT_THAT(out, HasSubstr("depth: max 2"));
  EXPECT_THAT(out, HasSubstr("base margin: 0\n"));
  EXPECT_THAT(out, HasSubstr("features: 2 in the model, 2 used in splits"));
  EXPECT_THAT(out, HasSubstr("feature schema vigil.features.v3: does not bind: model features "
                             "missing from feature schema vigil.features.v3 (2): a, b"));
}

TEST_F(ModelCommandTest, PredictBindsToTheHeaderAndWritesMarginsProbabilitiesAndShap) {
  // Columns in another order plus one the model does not use (not parsed); an empty cell is
  // missing.
  Write("rows.csv", "b,id,a\n0,tx-7,1\n-1,tx-8,2\n0,tx-9,\n");
  ASSERT_EQ(Vigil({"model", "predict", Path("m.json"), Path("rows.csv"), "--shap", "--out",
                   Path("out.csv")}),
            0)
      << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("out.csv"));
  const std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "margin,probability,a,b,bias");
  // Row 1: a = 1 < 1.5 → 0.25, + 0.0625 (see testing_models.h).
  EXPECT_THAT(lines[1], ::testing::StartsWith("0.3125,"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("-0.0625,"));
  EXPECT_THAT(lines[3], ::testing::StartsWith("0.3125,"));  // a missing: default left
  // Row 2's SHAP values, worked by hand in reason_codes_test.cc; bias = 0.21875 + 0.0625.
  // Written with round-trip precision; the explainer's quadrature may differ in the last bit.
  const std::vector<std::string> cells = absl::StrSplit(lines[2], ',');
  ASSERT_EQ(cells.size(), 5u);
  const double want[] = {-0.109375, -0.234375, 0.28125};
  for (size_t i = 0; i < 3; ++i) {
    double got = 0;
    ASSERT_TRUE(absl::SimpleAtod(cells[2 + i], &got)) << cells[2 + i];
    EXPECT_NEAR(got, want[i], 1e-12) << "column " << 2 + i;
  }
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("3 rows scored"));
}

TEST_F(ModelCommandTest, PredictWithLightGbmModel) {
  Write("rows.csv", "a,b\n1.5,1\n2,\n");
  ASSERT_EQ(
      Vigil({"model", "predict", Path("model.txt"), Path("rows.csv"), "--out", Path("out.csv")}),
      0);
  const std::vector<std::string> lines =
      absl::StrSplit(ReadFile(Path("out.csv")), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[1], ::testing::StartsWith("1.3125,"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("2.5625,"));
}

TEST_F(ModelCommandTest, BadInputGetsAnErrorNamingLineAndColumn) {
  Write("rows.csv", "a,b\n1,2\n1,x\n");
  EXPECT_EQ(Vigil({"model", "predict", Path("m.json"), Path("rows.csv")}), 1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("rows.csv:3: column 'b': 'x' is not a number"));
  Write("rows.csv", "a,c\n1,2\n");
  EXPECT_EQ(Vigil({"model", "predict", Path("m.json"), Path("rows.csv")}), 1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("model features missing from the header of"));
  EXPECT_EQ(Vigil({"model", "inspect", Path("rows.csv")}), 1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("not a model file"));
  EXPECT_EQ(Vigil({"model", "predict", Path("m.json"), Path("missing.csv")}), 2);
}

// tools/train.py end to end on a small stream: the model it writes loads in vigil and binds to
// the engine's schema, the thresholds are probabilities, the drift reference covers every
// feature with sorted samples, and XGBoost's test margins equal vigil's.
TEST_F(ModelCommandTest, TrainPyWritesAModelVigilScoresIdentically) {
  for (const char* seed : {"5", "6"}) {
    ASSERT_EQ(Vigil({"gen", "--accounts", "3000", "--days", "14", "--seed", seed,
                     "--laundering-rate", "0.01", "--out", Path(std::string("s") + seed + ".csv")}),
              0)
        << ReadFile(Path("log"));
    ASSERT_EQ(Vigil({"replay", Path(std::string("s") + seed + ".csv"), "--quiet", "--features-out",
                     Path(std::string("f") + seed + ".csv")}),
              0)
        << ReadFile(Path("log"));
  }
  ASSERT_EQ(
      RunProcess("/usr/bin/python3",
                 {testing::SourceDir() + "/tools/train.py", "--train", Path("f5.csv"), "--test",
                  Path("f6.csv"), "--out-dir", Path("model"), "--rounds", "20", "--threads", "2"},
                 Path("train.log")),
      0)
      << ReadFile(Path("train.log"));
  EXPECT_THAT(ReadFile(Path("train.log")), HasSubstr("test (another stream):"));
  auto model = LoadModelFile(Path("model/model.json"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(CpuPredictor::Create(*model, *FeatureExtractor::Schema()).ok());
  const auto thresholds = nlohmann::json::parse(ReadFile(Path("model/thresholds.json")));
  const double review = thresholds["review"], block = thresholds["block"];
  EXPECT_GE(review, 0.0);
  EXPECT_LE(review, block);
  EXPECT_LE(block, 1.0);
  const auto card = nlohmann::json::parse(ReadFile(Path("model/model_card.json")));
  EXPECT_EQ(card["feature_schema_version"], FeatureExtractor::Schema()->version());
  EXPECT_EQ(card["training_data"]["sha256"].get<std::string>().size(), 64u);
  const auto profile = nlohmann::json::parse(ReadFile(Path("model/reference_profile.json")));
  for (const std::string& name : FeatureExtractor::Schema()->names()) {
    ASSERT_TRUE(profile["features"].contains(name)) << name;
    const auto& f = profile["features"][name];
    if (!f.contains("sample")) continue;
    const std::vector<double> sample = f["sample"];
    EXPECT_TRUE(std::is_sorted(sample.begin(), sample.end())) << name;
    EXPECT_EQ(f["bin_counts"].size() + 1, f["bin_edges"].size()) << name;
  }
  // vigil's margins on the test stream equal XGBoost's.
  ASSERT_EQ(Vigil({"model", "predict", Path("model/model.json"), Path("f6.csv"), "--out",
                   Path("scores.csv")}),
            0);
  const std::vector<std::string> ours =
      absl::StrSplit(ReadFile(Path("scores.csv")), '\n', absl::SkipEmpty());
  const std::vector<std::string> theirs =
      absl::StrSplit(ReadFile(Path("model/test_margins.csv")), '\n', absl::SkipEmpty());
  ASSERT_EQ(ours.size(), theirs.size() + 1);
  for (size_t i = 0; i < theirs.size(); ++i) {
    const std::string margin = ours[i + 1].substr(0, ours[i + 1].find(','));
    double a = 0, b = 0;
    ASSERT_TRUE(absl::SimpleAtod(margin, &a) && absl::SimpleAtod(theirs[i], &b));
    ASSERT_EQ(a, b) << "row " << i;
  }
}

TEST_F(ModelCommandTest, AddStoresTheModelUnderItsSha256AndListShowsIt) {
  ASSERT_EQ(Vigil({"model", "add", "--data-dir", Path("state"), Path("m.json")}), 0);
  const std::string added = ReadFile(Path("log"));
  const std::string ref = Sha256Hex(testing::kXgboostTwoTrees);
  EXPECT_THAT(added, HasSubstr(ref + "  " + Path("state") + "/models/" + ref + ".model"));
  ASSERT_EQ(Vigil({"model", "list", "--data-dir", Path("state")}), 0);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr(ref));
  Write("junk.json", "{\"not\": \"a model\"}");
  EXPECT_EQ(Vigil({"model", "add", "--data-dir", Path("state"), Path("junk.json")}), 1);
  EXPECT_EQ(Vigil({"model", "add", "--data-dir", Path("state"), Path("missing.json")}), 2);
}

TEST_F(ModelCommandTest, ServeRoutesListsTheApi) {
  ASSERT_EQ(Vigil({"serve", "--routes"}), 0);
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("POST /v1/score\n"));
  EXPECT_THAT(out, HasSubstr("POST /v1/engine/activate\n"));
  EXPECT_THAT(out, HasSubstr("GET /metrics\n"));
  EXPECT_NE(Vigil({"serve", "--listen", "127.0.0.1:0"}), 0);  // no data dir
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// Feature rows as vigil replay --features-out writes them: a stream where the label needs two
// columns together ("leaky" false) or where one column gives it away.
std::string FeatureRowsCsv(size_t n, bool leaky, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::uniform_int_distribution<int> account(0, 499);
  std::string out = "tx_id,timestamp,originator,beneficiary,x,y,noise,label,typology\n";
  for (size_t i = 0; i < n; ++i) {
    const double x = z(rng), y = z(rng), e = z(rng);
    const bool positive = leaky ? x > 1.7 : x * y > 1.2;
    absl::StrAppend(&out, "t", i, ",", FormatUtc(FromUnixMicros(1'661'990'400'000'000 +
                                                                static_cast<int64_t>(i) * 60'000'000)),
                    ",A", account(rng), ",A", account(rng), ",", x, ",", y, ",", e, ",",
                    positive ? "1" : "0", ",", positive ? "FAN-OUT" : "", "\n");
  }
  absl::StrAppend(&out, "unlabelled,2022-09-01T00:00:00Z,A1,A2,0,0,0,,\n");
  return out;
}

class ModelTrainCommandTest : public ModelCommandTest {};

// On the engine's own rows, vigil model train leaves the drift reference beside the model: the
// training rows' columns and the validation scores, as the drift monitor reads it.
TEST_F(ModelTrainCommandTest, WritesTheDriftReferenceOfTheEnginesRows) {
  ASSERT_EQ(Vigil({"gen", "--accounts", "3000", "--days", "14", "--seed", "5", "--laundering-rate",
                   "0.01", "--out", Path("s.csv")}),
            0)
      << ReadFile(Path("log"));
  ASSERT_EQ(Vigil({"replay", Path("s.csv"), "--quiet", "--features-out", Path("f.csv")}), 0)
      << ReadFile(Path("log"));
  // The gate may fail a model of so small a stream (exit 1); the files are written either way.
  const int code = Vigil({"model", "train", "--features", Path("f.csv"), "--out-dir", Path("m"),
                          "--rounds", "20", "--bootstrap", "20"});
  ASSERT_TRUE(code == 0 || code == 1) << code << ": " << ReadFile(Path("log"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("reference_profile.json"));
  const nlohmann::json card = nlohmann::json::parse(ReadFile(Path("m/model_card.json")));
  absl::StatusOr<drift::ReferenceProfile> profile =
      drift::ReferenceProfile::Load(Path("m/reference_profile.json"));
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->feature_schema_version(), FeatureExtractor::Schema()->version());
  EXPECT_EQ(profile->rows(), card["split"]["train"]["rows"].get<uint64_t>());
  EXPECT_EQ(profile->features().size(), FeatureExtractor::Schema()->size());
  const drift::FeatureReference* amount = profile->Find("amount_reporting");
  ASSERT_NE(amount, nullptr);
  EXPECT_EQ(amount->missing, 0u);
  EXPECT_GT(amount->stddev, 0);
  EXPECT_FALSE(amount->dispersion.empty()) << "event times make the dispersion";
  ASSERT_TRUE(profile->score().has_value());
  EXPECT_EQ(profile->score()->count, card["split"]["validation"]["rows"].get<uint64_t>());
  // The monitor takes it for the engine's schema.
  EXPECT_TRUE(drift::DriftMonitor::Create(*profile, FeatureExtractor::Schema()->version(),
                                          FeatureExtractor::Schema()->names(), {}, nullptr)
                  .ok());
}

TEST_F(ModelTrainCommandTest, TrainsSplitByTimeAndWritesAModelCardWithBaselines) {
  Write("rows.csv", FeatureRowsCsv(6000, false, 1));
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out"),
                   "--depth", "4", "--bootstrap", "100"}),
            0)
      << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("trained on 3600 rows"));
  EXPECT_THAT(out, HasSubstr("gate: passed"));
  const nlohmann::json card = nlohmann::json::parse(ReadFile(Path("out/model_card.json")));
  EXPECT_EQ(card["split"]["train"]["rows"], 3600);
  EXPECT_EQ(card["split"]["test"]["rows"], 1200);
  EXPECT_EQ(card["training_data"]["unlabelled_rows_left_out"], 1);
  EXPECT_EQ(card["training_data"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(card["gate"]["passed"].get<bool>());
  EXPECT_EQ(card["baselines"].size(), 3u);
  ASSERT_FALSE(card["feature_importance"].empty());
  EXPECT_NE(card["feature_importance"][0]["feature"], "noise");
  const nlohmann::json& ap = card["metrics"]["test"]["pr_auc"];
  EXPECT_LE(ap["low"].get<double>(), ap["estimate"].get<double>());
  EXPECT_GE(ap["high"].get<double>(), ap["estimate"].get<double>());
  // The model is one vigil reads and scores.
  ASSERT_EQ(Vigil({"model", "inspect", Path("out/model.json")}), 0) << ReadFile(Path("log"));
  const nlohmann::json thresholds = nlohmann::json::parse(ReadFile(Path("out/thresholds.json")));
  EXPECT_GE(thresholds["block"].get<double>(), thresholds["review"].get<double>());
  EXPECT_THAT(thresholds["chosen_by"].get<std::string>(), HasSubstr("best F1"));
  EXPECT_FALSE(std::filesystem::exists(Path("out/reference_profile.json")))
      << "rows of another schema have no drift reference the monitor could bind";
  EXPECT_THAT(out, HasSubstr("no drift reference"));

  // With an alert budget (the rows span 6000 minutes: validation ~0.83 days, counted as one).
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("budget"),
                   "--depth", "4", "--bootstrap", "50", "--alerts-per-day", "30"}),
            0)
      << ReadFile(Path("log"));
  const nlohmann::json budget = nlohmann::json::parse(ReadFile(Path("budget/model_card.json")));
  EXPECT_LE(budget["thresholds"]["review_alerts_per_day"]["validation"].get<double>(), 30);
  EXPECT_THAT(budget["thresholds"]["review_chosen_by"].get<std::string>(),
              HasSubstr("at most 30 alerts a day"));

  // With a budget in accounts (500 accounts on validation: at most 5% of them alerted).
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("share"),
                   "--depth", "4", "--bootstrap", "50", "--alert-accounts", "0.05"}),
            0)
      << ReadFile(Path("log"));
  const nlohmann::json share = nlohmann::json::parse(ReadFile(Path("share/model_card.json")));
  const double alerted =
      share["thresholds"]["review_alerted_account_share"]["validation"].get<double>();
  EXPECT_LE(alerted, 0.05);
  EXPECT_GT(alerted, 0.02);  // the lowest threshold within it
  EXPECT_THAT(share["thresholds"]["review_chosen_by"].get<std::string>(),
              HasSubstr("at most 5% of the accounts"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("% of the accounts on validation"));
  // Account figures on test, from the rows' parties.
  const nlohmann::json& accounts = share["metrics"]["test"]["accounts"];
  EXPECT_GT(accounts["accounts"].get<int>(), 100);
  EXPECT_GT(accounts["laundering"].get<int>(), 0);
  EXPECT_LE(accounts["pr_auc"]["low"].get<double>(), accounts["pr_auc"]["estimate"].get<double>());
  EXPECT_EQ(accounts["max_fpr"].get<double>(), 0.01);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("recall at FPR <= 0.01"));
  // The account alert score for the policy, chosen on validation, and test's figures at it.
  const nlohmann::json share_thresholds =
      nlohmann::json::parse(ReadFile(Path("share/thresholds.json")));
  ASSERT_TRUE(share_thresholds["account_alert_score"].is_number()) << share_thresholds.dump();
  EXPECT_EQ(share_thresholds["account_alert_score"], share["thresholds"]["account_alert_score"]);
  const double fpr = accounts["at_account_alert_score"]["fpr"].get<double>();
  EXPECT_LE(fpr, 0.05) << "chosen for 1% on validation; test may differ, not by this much";
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("the policy's accounts.alert_score"));
}

TEST_F(ModelTrainCommandTest, AModelNoBetterThanOneColumnExitsOneAndSaysSo) {
  Write("rows.csv", FeatureRowsCsv(6000, true, 2));
  EXPECT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out"),
                   "--depth", "3", "--bootstrap", "100"}),
            1)
      << ReadFile(Path("log"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("gate: FAILED"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("'x' alone"));
  const nlohmann::json card = nlohmann::json::parse(ReadFile(Path("out/model_card.json")));
  EXPECT_FALSE(card["gate"]["passed"].get<bool>());
  EXPECT_EQ(card["baselines"][0]["feature"], "x");
}

TEST_F(ModelTrainCommandTest, DropLeavesColumnsOutByNameOrPattern) {
  // The leaky stream: without x, the model has only y and noise.
  Write("rows.csv", FeatureRowsCsv(6000, true, 2));
  EXPECT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out"),
                   "--depth", "3", "--bootstrap", "50", "--drop", "x", "--drop", "n*e"}),
            1)
      << ReadFile(Path("log"));
  const nlohmann::json card = nlohmann::json::parse(ReadFile(Path("out/model_card.json")));
  EXPECT_EQ(card["features"], nlohmann::json({"y"}));
  EXPECT_EQ(card["features_dropped"], nlohmann::json({"x", "noise"}));
  for (const auto& b : card["baselines"]) EXPECT_EQ(b["feature"], "y");
  EXPECT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out2"),
                   "--drop", "amount_*"}),
            2);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("--drop amount_*: matches no column"));
}

// Evaluate on another stream's rows: the threshold comes from thresholds.json beside the model,
// and the figures are those evaluation::EvaluatePayments computes from the model's scores.
TEST_F(ModelTrainCommandTest, EvaluateReportsOnAnotherStreamWithTheModelsThreshold) {
  Write("rows.csv", FeatureRowsCsv(6000, false, 1));
  Write("other.csv", FeatureRowsCsv(3000, false, 9));
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out"),
                   "--depth", "4", "--bootstrap", "50"}),
            0)
      << ReadFile(Path("log"));
  ASSERT_EQ(Vigil({"model", "evaluate", Path("out/model.json"), Path("other.csv"), "--json-out",
                   Path("eval.json"), "--bootstrap", "50", "--amount-column", "x", "--pr-curve",
                   Path("pr.svg")}),
            0)
      << ReadFile(Path("log"));
  EXPECT_THAT(ReadFile(Path("pr.svg")), HasSubstr("<polyline"));
  EXPECT_THAT(ReadFile(Path("pr.svg")), HasSubstr("model.json on other.csv: PR-AUC"));
  const nlohmann::json e = nlohmann::json::parse(ReadFile(Path("eval.json")));
  const nlohmann::json t = nlohmann::json::parse(ReadFile(Path("out/thresholds.json")));
  EXPECT_EQ(e["threshold"], t["review"]);
  EXPECT_THAT(e["threshold_from"].get<std::string>(), HasSubstr("thresholds.json"));
  EXPECT_EQ(e["all"]["rows"], 3000);  // the unlabelled row is left out
  EXPECT_GT(e["all"]["pr_auc"]["estimate"].get<double>(), 3 * e["base_rate"].get<double>());
  ASSERT_EQ(e["typologies"].size(), 1u);
  EXPECT_EQ(e["typologies"][0]["name"], "FAN-OUT");
  EXPECT_EQ(e["amount_bands"].size(), 4u);  // bands of the column named
  // Per account: the rows name the parties (500 accounts in the pool).
  EXPECT_LE(e["accounts"]["accounts"].get<int>(), 500);
  EXPECT_GT(e["accounts"]["laundering"].get<int>(), 0);
  EXPECT_EQ(e["accounts"]["max_fpr"], 0.01);
  // A model that does not bind to the rows is refused, naming the features.
  Write("narrow.csv", "tx_id,timestamp,x,label,typology\nt1,2022-09-01T00:00:00Z,1,1,\n");
  EXPECT_EQ(Vigil({"model", "evaluate", Path("out/model.json"), Path("narrow.csv")}), 2);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("missing"));
}

// The gate travels with the model: `vigil model add` refuses a model whose card says it did not
// beat its baselines, unless forced; one that passed is added.
TEST_F(ModelTrainCommandTest, ModelAddRefusesAModelThatFailedItsGateUnlessForced) {
  Write("leaky.csv", FeatureRowsCsv(6000, true, 2));
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("leaky.csv"), "--out-dir", Path("bad"),
                   "--depth", "3", "--bootstrap", "50"}),
            1);
  EXPECT_EQ(Vigil({"model", "add", "--data-dir", Path("data"), Path("bad/model.json")}), 1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("failed its baseline gate"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("--force"));
  EXPECT_FALSE(std::filesystem::exists(Path("data/models")) &&
               !std::filesystem::is_empty(Path("data/models")));
  EXPECT_EQ(Vigil({"model", "add", "--data-dir", Path("data"), Path("bad/model.json"),
                   "--force"}),
            0);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("WARNING"));

  Write("rows.csv", FeatureRowsCsv(6000, false, 1));
  ASSERT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("good"),
                   "--depth", "4", "--bootstrap", "50"}),
            0);
  EXPECT_EQ(Vigil({"model", "add", "--data-dir", Path("data"), Path("good/model.json")}), 0)
      << ReadFile(Path("log"));
}

TEST_F(ModelTrainCommandTest, BadInputIsAUsageErrorNamingIt) {
  Write("rows.csv", "tx_id,timestamp,x,label,typology\nt1,2022-09-01T00:00:00Z,abc,1,\n");
  EXPECT_EQ(Vigil({"model", "train", "--features", Path("rows.csv"), "--out-dir", Path("out")}),
            2);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("rows.csv:2: x: 'abc' is not a number"));
  Write("ok.csv", FeatureRowsCsv(100, false, 3));
  EXPECT_EQ(Vigil({"model", "train", "--features", Path("ok.csv"), "--out-dir", Path("out"),
                   "--split", "60/40"}),
            2);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("--split: '60/40'"));
}

}  // namespace
}  // namespace vigil
