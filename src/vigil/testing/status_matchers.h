// GoogleTest matchers for absl::Status and absl::StatusOr (Abseil 20220623 ships none):
//
//   EXPECT_THAT(ParseJson(bad), StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(ParseJson(bad), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("amount")));
//   EXPECT_THAT(ParseJson(good), IsOkAndHolds(Field(&Transaction::id, "t1")));
//   ASSERT_OK(status);  ASSERT_OK_AND_ASSIGN(auto tx, ParseJson(good));
#ifndef VIGIL_TESTING_STATUS_MATCHERS_H_
#define VIGIL_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

}  // namespace internal

MATCHER_P2(StatusIs, code, message_matcher,
           std::string("has status code ") + absl::StatusCodeToString(code)) {
  const absl::Status& s = internal::GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()),
                                       result_listener);
}

MATCHER_P(StatusIs, code, std::string("has status code ") + absl::StatusCodeToString(code)) {
  const absl::Status& s = internal::GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code;
}

MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = internal::GetStatus(arg);
  *result_listener << "status is " << s;
  return s.ok();
}

}  // namespace vigil::testing

#define VIGIL_TESTING_CONCAT_INNER_(a, b) a##b
#define VIGIL_TESTING_CONCAT_(a, b) VIGIL_TESTING_CONCAT_INNER_(a, b)

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::vigil::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::vigil::testing::IsOk())
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(VIGIL_TESTING_CONCAT_(statusor_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();       \
  lhs = std::move(statusor).value()

#endif  // VIGIL_TESTING_STATUS_MATCHERS_H_
