#include "vigil/common/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

int g_calls = 0;

absl::StatusOr<int> Half(int x) {
  ++g_calls;
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  VIGIL_ASSIGN_OR_RETURN(int h, Half(x));
  VIGIL_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int x) {
  VIGIL_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST(StatusMacros, PropagateFirstErrorAndEvaluateOnce) {
  g_calls = 0;
  EXPECT_THAT(Quarter(8), IsOkAndHolds(2));
  EXPECT_EQ(g_calls, 2);
  g_calls = 0;
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(g_calls, 2);  // the second Half(3) fails; nothing runs twice
  EXPECT_THAT(CheckEven(3), StatusIs(absl::StatusCode::kInvalidArgument, "odd"));
  EXPECT_TRUE(CheckEven(4).ok());
}

absl::StatusOr<std::unique_ptr<int>> MakeBox(int x) {
  if (x < 0) return absl::OutOfRangeError("negative");
  return std::make_unique<int>(x);
}

absl::StatusOr<int> Unbox(int x) {
  // Move-only values pass through VIGIL_ASSIGN_OR_RETURN without a copy.
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(x));
  return *box + 1;
}

TEST(StatusMacros, AssignWorksWithMoveOnlyTypesAndKeepsTheCode) {
  EXPECT_THAT(Unbox(41), IsOkAndHolds(42));
  EXPECT_THAT(Unbox(-1), StatusIs(absl::StatusCode::kOutOfRange, "negative"));
}

TEST(StatusMacros, ReturnIfErrorUsableInIfWithoutBraces) {
  // The do/while(false) wrapper makes the macro one statement, so a dangling else binds right.
  const auto f = [](bool fail) -> absl::Status {
    if (fail)
      VIGIL_RETURN_IF_ERROR(absl::InternalError("boom"));
    else
      return absl::OkStatus();
    return absl::UnknownError("unreachable");
  };
  EXPECT_THAT(f(true), StatusIs(absl::StatusCode::kInternal, "boom"));
  EXPECT_TRUE(f(false).ok());
}

}  // namespace
}  // namespace vigil
