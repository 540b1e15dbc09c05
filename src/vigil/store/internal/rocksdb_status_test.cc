#include "vigil/store/internal/rocksdb_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::store_internal {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(ToAbslStatus, MapsEachRocksDbCodeToACanonicalCode) {
  using rocksdb::Status;
  const struct {
    Status in;
    absl::StatusCode out;
    const char* why;
  } kCases[] = {
      {Status::NotFound("x"), absl::StatusCode::kNotFound, "same meaning"},
      {Status::Corruption("bad block"), absl::StatusCode::kDataLoss,
       "corruption is unrecoverable data loss, not a retryable error"},
      {Status::NotSupported("x"), absl::StatusCode::kUnimplemented, "same meaning"},
      {Status::InvalidArgument("x"), absl::StatusCode::kInvalidArgument, "same meaning"},
      {Status::IOError("While lock file: /db/LOCK", "Resource temporarily unavailable"),
       absl::StatusCode::kFailedPrecondition, "held by another process: a state problem"},
      {Status::IOError("lock hold by current process, acquire time 1", "/db/LOCK"),
       absl::StatusCode::kFailedPrecondition, "held by this process"},
      {Status::NoSpace("disk full"), absl::StatusCode::kResourceExhausted, "disk full"},
      {Status::IOError("read error"), absl::StatusCode::kUnavailable, "other I/O errors"},
      {Status::TimedOut(), absl::StatusCode::kDeadlineExceeded, "same meaning"},
      {Status::Aborted(), absl::StatusCode::kAborted, "same meaning"},
      {Status::ShutdownInProgress(), absl::StatusCode::kUnavailable, "shutting down"},
      {Status::Busy(), absl::StatusCode::kUnavailable, "retry later"},
      {Status::TryAgain(), absl::StatusCode::kUnavailable, "retry later"},
      {Status::ColumnFamilyDropped(), absl::StatusCode::kFailedPrecondition, "state problem"},
      {Status::MergeInProgress(), absl::StatusCode::kInternal, "never expected: no merges"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.in.ToString() << ": " << c.why);
    EXPECT_EQ(ToAbslCode(c.in), c.out);
    EXPECT_EQ(ToAbslStatus(c.in, "/db", "get").code(), c.out);
  }
}

TEST(ToAbslStatus, MessageNamesPathAndOperation) {
  EXPECT_TRUE(ToAbslStatus(rocksdb::Status::OK(), "/db", "get").ok());
  EXPECT_THAT(
      ToAbslStatus(rocksdb::Status::Corruption("bad block"), "/var/db", "get"),
      StatusIs(absl::StatusCode::kDataLoss, "KvStore '/var/db': get: Corruption: bad block"));
  EXPECT_THAT(
      ToAbslStatus(rocksdb::Status::IOError("While lock file: /db/LOCK", "Resource busy"), "/db",
                   "open"),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("in use by another process")));
}

TEST(IsLockHeld, OnlyForLockErrors) {
  EXPECT_TRUE(IsLockHeld(rocksdb::Status::IOError("While lock file: /db/LOCK", "EAGAIN")));
  EXPECT_FALSE(IsLockHeld(rocksdb::Status::IOError("While open a file for appending: /db/x")));
  EXPECT_FALSE(IsLockHeld(rocksdb::Status::InvalidArgument("lock file")));
}

}  // namespace
}  // namespace vigil::store_internal
