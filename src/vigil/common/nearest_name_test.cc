#include "vigil/common/nearest_name.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(NearestName, PicksTheClosestWithinTheBound) {
  const std::vector<std::string> known = {"orig_out_count_24h", "orig_in_count_24h", "when"};
  EXPECT_EQ(NearestName("orig_out_cnt_24h", known), "orig_out_count_24h");
  EXPECT_EQ(NearestName("whn", known), "when");
  EXPECT_EQ(NearestName("amount", known), "");  // nothing close
  EXPECT_EQ(NearestName("x", {}), "");
}

}  // namespace
}  // namespace vigil
