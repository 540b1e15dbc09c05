#include "vigil/rules/policy_store.h"

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

std::string PolicyText(const std::string& version, double review) {
  return absl::StrCat("version: \"", version, "\"\nthresholds: {review: ", review,
                      ", block: 0.9}\nrules:\n  - id: big\n    when: amount_reporting > 10\n"
                      "    action: review\n    reason: r\n");
}

class PolicyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/policy_store_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  absl::StatusOr<std::unique_ptr<PolicyStore>> Open(std::vector<std::string> names = {
                                                        "amount_reporting"}) {
    return PolicyStore::Open(dir_, PolicyInputLayout(*FeatureSchema::Create("t.v1", names)),
                             ListLibrary{}, clock_);
  }

  std::string dir_;
  testing::FakeClock clock_;
};

TEST_F(PolicyStoreTest, AddActivateRollbackAndSurviveARestart) {
  {
    auto store = Open();
    ASSERT_OK(store);
    PolicyStore& s = **store;
    EXPECT_EQ(s.Active(), nullptr);
    auto a = s.Add(PolicyText("one", 0.5), "one.yaml", "alice");
    ASSERT_OK(a);
    EXPECT_EQ(a->id, 1);
    EXPECT_EQ(a->version, "one");
    EXPECT_EQ(a->sha256.size(), 64u);
    // The same text again is the same entry.
    auto again = s.Add(PolicyText("one", 0.5), "one.yaml", "bob");
    ASSERT_OK(again);
    EXPECT_EQ(again->id, 1);
    EXPECT_EQ(again->author, "alice");
    auto b = s.Add(PolicyText("two", 0.4), "two.yaml", "bob");
    ASSERT_OK(b);
    EXPECT_EQ(b->id, 2);

    EXPECT_THAT(s.Rollback("carol"), StatusIs(absl::StatusCode::kFailedPrecondition));
    ASSERT_OK(s.Activate(1, "alice"));
    const std::shared_ptr<const Policy> in_flight = s.Active();  // a decision holding v1
    clock_.Advance(std::chrono::seconds(5));
    ASSERT_OK(s.Activate(2, "bob"));
    EXPECT_EQ(in_flight->version(), "one");   // finishes on the version it started with
    EXPECT_EQ(s.Active()->version(), "two");  // the next decision gets the new one
    ASSERT_OK(s.Rollback("carol"));
    EXPECT_EQ(s.Active()->version(), "one");
    EXPECT_EQ(s.active_id(), 1);
    auto history = s.History();
    ASSERT_OK(history);
    ASSERT_EQ(history->size(), 3u);
    EXPECT_EQ((*history)[1].author, "bob");
    EXPECT_EQ((*history)[2].id, 1);
    EXPECT_THAT(s.Activate(9, "x"), StatusIs(absl::StatusCode::kNotFound));
    EXPECT_EQ(s.Active()->version(), "one");  // a failed activation changes nothing
  }
  // Reopened: the active version and the history are still there.
  auto store = Open();
  ASSERT_OK(store);
  ASSERT_NE((*store)->Active(), nullptr);
  EXPECT_EQ((*store)->Active()->version(), "one");
  auto list = (*store)->List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].version, "two");
  EXPECT_EQ((*list)[1].author, "bob");
}

TEST_F(PolicyStoreTest, RefusesPoliciesThatDoNotCheck) {
  auto store = Open();
  ASSERT_OK(store);
  EXPECT_THAT((*store)
                  ->Add("version: x\nthresholds: {review: 0.5, block: 0.9}\nrules:\n"
                        "  - id: a\n    when: nope > 1\n    action: review\n    reason: r\n",
                        "bad.yaml", "alice")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown name 'nope'")));
  auto list = (*store)->List();
  ASSERT_OK(list);
  EXPECT_TRUE(list->empty());
}

TEST_F(PolicyStoreTest, AnActivePolicyThatNoLongerChecksStopsTheOpen) {
  {
    auto store = Open();
    ASSERT_OK(store);
    ASSERT_OK((*store)->Add(PolicyText("one", 0.5), "one.yaml", "alice"));
    ASSERT_OK((*store)->Activate(1, "alice"));
  }
  // The feature schema lost amount_reporting.
  EXPECT_THAT(Open({"other"}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the active policy (id 1) no longer checks")));
}

TEST_F(PolicyStoreTest, AStoredVersionKeepsTheListsItWasCheckedWith) {
  const PolicyInputLayout layout(*FeatureSchema::Create("t.v1", {"amount_reporting"}));
  const std::string text =
      "version: l\nthresholds: {review: 0.5, block: 0.9}\nrules:\n  - id: c\n"
      "    when: bene_country in watched\n    action: block\n    reason: r\n";
  {
    ListLibrary before;
    before.lists["watched"] = {{"IR"}, "list as of 2025-02"};
    auto store = PolicyStore::Open(dir_, layout, before, clock_);
    ASSERT_OK(store);
    ASSERT_OK((*store)->Add(text, "l.yaml", "alice"));
    ASSERT_OK((*store)->Activate(1, "alice"));
  }
  ListLibrary after;
  after.lists["watched"] = {{"KP"}, "list as of 2025-06"};
  auto store = PolicyStore::Open(dir_, layout, after, clock_);
  ASSERT_OK(store);
  std::vector<double> numbers = {0, 0};
  std::vector<std::string_view> strings(kNumPolicyStrings, "");
  strings[static_cast<size_t>(PolicyString::kBeneficiaryCountry)] = "IR";
  std::vector<uint32_t> fired(1);
  EXPECT_EQ((*store)->Active()->Evaluate({numbers, strings}, absl::MakeSpan(fired)), 1u);
}

TEST_F(PolicyStoreTest, ReadersSeeWholeVersionsWhileActivationsRace) {
  auto store = Open();
  ASSERT_OK(store);
  PolicyStore& s = **store;
  ASSERT_OK(s.Add(PolicyText("one", 0.5), "one.yaml", "a"));
  ASSERT_OK(s.Add(PolicyText("two", 0.4), "two.yaml", "a"));
  ASSERT_OK(s.Activate(1, "a"));
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      const std::shared_ptr<const Policy> p = s.Active();
      // A version and its thresholds always belong together.
      ASSERT_EQ(p->review_threshold(), p->version() == "one" ? 0.5 : 0.4);
    }
  });
  for (int i = 0; i < 20; ++i) ASSERT_OK(s.Activate(i % 2 + 1, "a"));
  stop = true;
  reader.join();
}

}  // namespace
}  // namespace vigil
