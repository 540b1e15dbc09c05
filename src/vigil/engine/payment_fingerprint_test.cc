#include "vigil/engine/payment_fingerprint.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::StatusIs;

Transaction Payment(const char* value) {
  Transaction tx;
  tx.id = "tx-1";
  tx.originator.account_id = "A1";
  tx.beneficiary.account_id = "B1";
  tx.amount = *Money::Parse(value, *Currency::FromCode("USD"));
  return tx;
}

class PaymentFingerprinterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/payment_fingerprint_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<KvStore> Open() {
    absl::StatusOr<std::unique_ptr<KvStore>> kv =
        KvStore::Open({.path = dir_, .column_families = {"meta"}});
    EXPECT_OK(kv.status());
    return kv.ok() ? *std::move(kv) : nullptr;
  }
  std::string dir_;
};

// The data dir's key outlives the process, so recorded fingerprints still match; another key
// (another data dir, or an ephemeral one) gives other fingerprints.
TEST_F(PaymentFingerprinterTest, TheStoresKeyIsKeptAndTellsPaymentsApart) {
  audit::Hash first;
  {
    std::unique_ptr<KvStore> kv = Open();
    ASSERT_OK_AND_ASSIGN(PaymentFingerprinter f, PaymentFingerprinter::ForStore(*kv));
    first = f.Of(Payment("500.00"), EventTimeSource::kSender);
    EXPECT_EQ(f.Of(Payment("500"), EventTimeSource::kSender), first);  // the same amount
    EXPECT_NE(f.Of(Payment("900000.00"), EventTimeSource::kSender), first);
  }
  std::unique_ptr<KvStore> kv = Open();
  ASSERT_OK_AND_ASSIGN(PaymentFingerprinter again, PaymentFingerprinter::ForStore(*kv));
  EXPECT_EQ(again.Of(Payment("500.00"), EventTimeSource::kSender), first);
  EXPECT_NE(PaymentFingerprinter::Ephemeral().Of(Payment("500.00"), EventTimeSource::kSender),
            first);
}

TEST_F(PaymentFingerprinterTest, AStoredKeyOfTheWrongLengthIsDataLoss) {
  std::unique_ptr<KvStore> kv = Open();
  ASSERT_OK(kv->Put("meta", "payment_fingerprint_key", "short"));
  EXPECT_THAT(PaymentFingerprinter::ForStore(*kv).status(),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("5 bytes, not 32")));
}

}  // namespace
}  // namespace vigil
