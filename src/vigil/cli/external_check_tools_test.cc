// tools/amlsim_to_amlworld.py, tools/account_metrics.py and tools/detection_report.py (the
// external checks of make demo) on tiny inputs whose answers are worked out by hand.
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::ReadFile;

TEST(ExternalCheckTools, ConvertAmlsimAndMeasureAccounts) {
  const std::string dir = ::testing::TempDir() + "/external_check_tools";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/run");
  std::ofstream(dir + "/run/nodes.csv") << "nodeid,isFraud,init_balance,fraudStep\n"
                                           "0,1,10.0,3\n1,1,10.0,3\n2,0,10.0,-1\n3,0,10.0,-1\n";
  std::ofstream(dir + "/run/transactions.csv") << "sourceNodeId,targetNodeId,value,time\n"
                                                  "0,1,150.5,1\n2,3,99,1\n1,2,7,2\n";
  const std::string tools = ::vigil::testing::SourceDir() + "/tools/";
  ASSERT_EQ(::vigil::testing::RunProcess(
                "/usr/bin/env",
                {"python3", tools + "amlsim_to_amlworld.py", dir + "/run", dir + "/out.csv"},
                dir + "/log"),
            0)
      << ReadFile(dir + "/log");
  EXPECT_EQ(ReadFile(dir + "/out.csv"),
            "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,"
            "Amount Paid,Payment Currency,Payment Format,Is Laundering\n"
            "2022/09/01 00:00,001,A0,001,A1,150.50,US Dollar,150.50,US Dollar,Wire,1\n"
            "2022/09/01 12:00,001,A2,001,A3,99.00,US Dollar,99.00,US Dollar,Wire,0\n"
            "2022/09/02 00:00,001,A1,001,A2,7.00,US Dollar,7.00,US Dollar,Wire,0\n");
  // Alerts on A1→A2 only: A1 (fraud) and A2 (normal) are flagged; A0 (fraud) and A3 are not.
  std::ofstream(dir + "/decisions.csv")
      << "tx_id,timestamp,originator,beneficiary,action,score,degraded,rules,shadow_rules,label,"
         "typology\n"
         "t1,x,A0,A1,ALLOW,,0,,,1,\nt2,x,A2,A3,ALLOW,,0,,,0,\nt3,x,A1,A2,REVIEW,,0,r,,0,\n";
  ASSERT_EQ(::vigil::testing::RunProcess("/usr/bin/env",
                                         {"python3", tools + "account_metrics.py",
                                          dir + "/decisions.csv", dir + "/run/nodes.csv", "tiny"},
                                         dir + "/log"),
            0);
  EXPECT_THAT(ReadFile(dir + "/log"),
              HasSubstr("tiny: 4 accounts (2 fraud); flagged 1 fraud, 1 normal: account recall "
                        "0.500, false-positive rate 0.5000"));
  std::filesystem::remove_all(dir);
}

// detection_report.py reads what scripts/detection-figures wrote: a model card, an evaluation,
// the zero-shot decisions; the >= $100 figure is the one band above $100 that has rows.
TEST(ExternalCheckTools, DetectionReportTabulatesTheProtocols) {
  const std::string dir = ::testing::TempDir() + "/detection_report";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/runA.model");
  const auto band = [](const char* name, int rows, double ap, double recall) {
    return std::string("{\"band\": \"") + name + "\", \"name\": \"" + name +
           "\", \"rows\": " + std::to_string(rows) +
           ", \"pr_auc\": {\"estimate\": " + std::to_string(ap) +
           ", \"low\": 0.1, \"high\": 0.9}, \"at_review\": {\"recall\": " +
           std::to_string(recall) + ", \"f1\": 0.5}, \"f1\": 0.5, \"recall\": " +
           std::to_string(recall) + "}";
  };
  const std::string bands = "[" + band("< 100", 5, 1.0, 1.0) + ", " +
                            band("[100, 1000)", 50, 0.25, 0.125) + ", " +
                            band("[1000, 10000)", 0, 0, 0) + "]";
  std::ofstream(dir + "/runA.model/model_card.json")
      << "{\"metrics\": {\"test\": {\"pr_auc\": {\"estimate\": 0.8, \"low\": 0.7, "
         "\"high\": 0.9}, \"at_review\": {\"f1\": 0.75}, \"amount_bands\": "
      << bands
      << "}}, \"baselines\": [{\"feature\": \"amount_reporting\", \"test_pr_auc\": "
         "{\"estimate\": 0.6}}], \"gate\": {\"passed\": false}}";
  std::ofstream(dir + "/runA_on_runB.json")
      << "{\"all\": {\"pr_auc\": {\"estimate\": 0.7, \"low\": 0.6, \"high\": 0.8}, "
         "\"f1\": 0.65}, \"amount_bands\": "
      << bands << ", \"accounts\": {\"recall_at_max_fpr\": 0.72}}";
  // Zero shot: laundering accounts A, B (t1, payment alert) and E (t4: only an account alert
  // on the beneficiary); normal C (a payment alert by t3, an account alert by t2) and D.
  // Account alerts find E of three (recall 1/3) and C of two (FPR 1/2), payment alerts A and
  // B (2/3) and C (1/2), either all three (1) and C (1/2); payments TP 1, FP 1, FN 1: F1 0.5.
  std::ofstream(dir + "/runA.zero.csv")
      << "tx_id,timestamp,originator,beneficiary,action,score,degraded,rules,shadow_rules,label,"
         "typology,originator_alert,beneficiary_alert\n"
         "t1,x,A,B,REVIEW,,0,r,,1,,,\nt2,x,C,D,ALLOW,,0,,,0,,score,\n"
         "t3,x,C,C,BLOCK,,0,r,,0,,,\nt4,x,B,E,ALLOW,,0,,,1,,,rule_hits\n";
  const std::string tools = ::vigil::testing::SourceDir() + "/tools/";
  ASSERT_EQ(::vigil::testing::RunProcess(
                "/usr/bin/env", {"python3", tools + "detection_report.py", dir, "runA"},
                dir + "/log"),
            0)
      << ReadFile(dir + "/log");
  const std::string out = ReadFile(dir + "/log");
  EXPECT_THAT(out, ::testing::ContainsRegex("runA +0.800 \\[0.700, 0.900\\] +0.750 +0.250 "
                                            "\\[0.100, 0.900\\] +0.125 +amount_reporting 0.600 "
                                            "+\\(gate: FAILED\\)"));
  EXPECT_THAT(out, ::testing::ContainsRegex("runA_on_runB +0.700 \\[0.600, 0.800\\] +0.650 "
                                            "+0.250 \\[0.100, 0.900\\] +0.720"));
  EXPECT_THAT(out, HasSubstr("runA                   5 accounts (3 laundering): account recall "
                             "1.000 at account FPR 0.5000 (account alerts 0.333 / 0.5000, "
                             "payment alerts 0.667 / 0.5000); payment F1 0.500"));
  EXPECT_THAT(out, HasSubstr("runA.scale_free          (no model card)"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
