#include "vigil/server/http_status.h"

#include <utility>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(HttpStatusOf, EveryStatusCodeHasItsAnswer) {
  using C = absl::StatusCode;
  const std::pair<C, int> expected[] = {
      {C::kInvalidArgument, 400},   {C::kFailedPrecondition, 400}, {C::kOutOfRange, 400},
      {C::kUnauthenticated, 401},   {C::kPermissionDenied, 403},   {C::kNotFound, 404},
      {C::kAlreadyExists, 409},     {C::kAborted, 409},            {C::kUnimplemented, 422},
      {C::kResourceExhausted, 503}, {C::kUnavailable, 503},        {C::kDeadlineExceeded, 503},
      {C::kCancelled, 503},         {C::kUnknown, 500},            {C::kInternal, 500},
      {C::kDataLoss, 500},
  };
  for (const auto& [code, status] : expected) {
    EXPECT_EQ(HttpStatusOf(code), status) << absl::StatusCodeToString(code);
  }
  // A code from a newer Abseil is the server's failure until it is mapped.
  EXPECT_EQ(HttpStatusOf(static_cast<C>(1000)), 500);
}

}  // namespace
}  // namespace vigil
