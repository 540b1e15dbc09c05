// tools/amlsim_to_amlworld.py and tools/account_metrics.py (the external checks of make demo)
// on a tiny AMLSim-shaped run whose answers are worked out by hand.
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

}  // namespace
}  // namespace vigil
