#include "vigil/model/reason_codes.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

TEST(TopReasons, LargestContributionsFirstWithValuesAndSigns) {
  auto m = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(m);
  auto e = TreeShapExplainer::Create(std::make_shared<const TreeEnsemble>(*m),
                                     std::vector<std::string>{"b", "a"}, "test columns");
  ASSERT_OK(e);
  // a = 2 (right of 1.5), b = -1 (left of -0.5): tree 0 gives -0.125 (tree 1 is a constant).
  const std::vector<double> row = {-1, 2};  // columns b, a
  std::vector<double> phi(e->output_size());
  e->Explain(row, absl::MakeSpan(phi));
  const std::vector<Reason> reasons = TopReasons(*e, row, phi, 5);
  ASSERT_EQ(reasons.size(), 2u);
  // Worked by hand from the covers (10/10 at the root, 5/5 below): E[f] = 0.21875,
  // E[f | a=2] = 0.1875, E[f | b=-1] = 0.0625, f = -0.125;
  // phi_a = ((0.1875 - 0.21875) + (-0.125 - 0.0625)) / 2 = -0.109375,
  // phi_b = ((0.0625 - 0.21875) + (-0.125 - 0.1875)) / 2 = -0.234375.
  EXPECT_EQ(reasons[0].code, "b");
  EXPECT_DOUBLE_EQ(reasons[0].contribution, -0.234375);
  EXPECT_EQ(reasons[0].text, "b=-1 (-0.2344)");
  EXPECT_EQ(reasons[0].kind, Reason::Kind::kModel);
  EXPECT_EQ(reasons[1].code, "a");
  EXPECT_DOUBLE_EQ(reasons[1].contribution, -0.109375);
  EXPECT_EQ(TopReasons(*e, row, phi, 1).size(), 1u);
  // A missing value is named as such.
  const std::vector<double> missing = {-1, std::nan("")};
  e->Explain(missing, absl::MakeSpan(phi));
  const auto r2 = TopReasons(*e, missing, phi, 2);
  ASSERT_FALSE(r2.empty());
  bool saw_missing = false;
  for (const Reason& r : r2) saw_missing |= r.text.rfind("a=missing", 0) == 0;
  EXPECT_TRUE(saw_missing);
}

}  // namespace
}  // namespace vigil
