#include "vigil/decision/model_deployment.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/testing_models.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

// A deployment over a registry of three models (the same trees, byte-different files, so three
// refs). The loader readies a model without a decision maker: the deployment only routes.
class ModelDeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/model_deployment_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto registry = ModelRegistry::Open(dir_ + "/models");
    ASSERT_OK(registry);
    for (int i = 0; i < 3; ++i) {
      const std::string path = absl::StrCat(dir_, "/m", i, ".json");
      std::ofstream(path) << testing::kXgboostTwoTrees << std::string(static_cast<size_t>(i), ' ');
      auto entry = registry->Add(path);
      ASSERT_OK(entry);
      refs_[i] = entry->ref;
    }
    ASSERT_NE(refs_[0], refs_[1]);
    deployment_ = Make("");
  }
  // A deployment over the registry of dir_ that stores its activations at "record_path" (none
  // when empty).
  std::unique_ptr<ModelDeployment> Make(const std::string& record_path) {
    auto registry = ModelRegistry::Open(dir_ + "/models");
    EXPECT_OK(registry);
    return std::make_unique<ModelDeployment>(
        *std::move(registry),
        [this](const ModelRegistry::Entry& entry)
            -> absl::StatusOr<std::shared_ptr<const ModelDeployment::Model>> {
          ++loads_;
          if (entry.ref == refuse_) return absl::FailedPreconditionError("does not bind");
          auto m = std::make_shared<ModelDeployment::Model>();
          m->ref = entry.ref;
          m->version = "model@" + entry.ref.substr(0, 12);
          return std::shared_ptr<const ModelDeployment::Model>(std::move(m));
        },
        nullptr, record_path);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The ref of the model in that slot, "-" when empty.
  static std::string Ref(const std::shared_ptr<const ModelDeployment::Model>& m) {
    return m != nullptr ? m->ref : "-";
  }

  std::string dir_;
  std::string refs_[3];
  std::string refuse_;  // the loader fails for this ref
  int loads_ = 0;
  std::unique_ptr<ModelDeployment> deployment_;
};

TEST_F(ModelDeploymentTest, StartsRulesOnly) {
  const auto now = deployment_->Current();
  EXPECT_EQ(now->champion, nullptr);
  EXPECT_EQ(now->challenger, nullptr);
  EXPECT_EQ(now->shadow, nullptr);
  EXPECT_EQ(now->traffic_weight, 0);
}

TEST_F(ModelDeploymentTest, FollowsTheActivationTable) {
  const std::string& a = refs_[0];
  const std::string& b = refs_[1];
  const std::string& c = refs_[2];
  ASSERT_OK(deployment_->SetChampion(a.substr(0, 8)));  // a unique prefix resolves
  EXPECT_EQ(Ref(deployment_->Current()->champion), a);

  // 0 < weight < 1: the challenger, deciding that share.
  auto s = deployment_->Activate(b, 0.25, false);
  ASSERT_OK(s);
  EXPECT_EQ(Ref((*s)->champion), a);
  EXPECT_EQ(Ref((*s)->challenger), b);
  EXPECT_EQ((*s)->traffic_weight, 0.25);
  EXPECT_EQ(deployment_->Current(), *s);

  // shadow: true with weight 0: the shadow, beside the champion and challenger.
  s = deployment_->Activate(c, 0, true);
  ASSERT_OK(s);
  EXPECT_EQ(Ref((*s)->champion), a);
  EXPECT_EQ(Ref((*s)->challenger), b);
  EXPECT_EQ(Ref((*s)->shadow), c);
  const std::shared_ptr<const ModelDeployment::Model> loaded_b = (*s)->challenger;

  // weight 1: promoted; the challenger slot cleared, the shadow (another model) kept; the
  // loaded model reused.
  const int loads = loads_;
  s = deployment_->Activate(b, 1, false);
  ASSERT_OK(s);
  EXPECT_EQ((*s)->champion, loaded_b);
  EXPECT_EQ((*s)->challenger, nullptr);
  EXPECT_EQ(Ref((*s)->shadow), c);
  EXPECT_EQ((*s)->traffic_weight, 0);
  EXPECT_EQ(loads_, loads);

  // Promoting the shadow itself empties the shadow slot (a model does not shadow itself).
  s = deployment_->Activate(c, 1, false);
  ASSERT_OK(s);
  EXPECT_EQ(Ref((*s)->champion), c);
  EXPECT_EQ((*s)->shadow, nullptr);
  ASSERT_OK(deployment_->Activate(b, 1, false));

  // weight 0 naming the champion: clears the challenger and the shadow, keeps the champion.
  ASSERT_OK(deployment_->Activate(a, 0.5, false));
  ASSERT_OK(deployment_->Activate(c, 0, true));
  s = deployment_->Activate(b, 0, false);
  ASSERT_OK(s);
  EXPECT_EQ(Ref((*s)->champion), b);
  EXPECT_EQ((*s)->challenger, nullptr);
  EXPECT_EQ((*s)->shadow, nullptr);
  EXPECT_EQ((*s)->traffic_weight, 0);

  // A new challenger replaces the old one.
  ASSERT_OK(deployment_->Activate(a, 0.5, false));
  s = deployment_->Activate(c, 0.1, false);
  ASSERT_OK(s);
  EXPECT_EQ(Ref((*s)->challenger), c);
  EXPECT_EQ((*s)->traffic_weight, 0.1);
}

TEST_F(ModelDeploymentTest, RefusesWhatTheTableDoesNotAllowAndKeepsTheSnapshot) {
  const std::string& a = refs_[0];
  const std::string& b = refs_[1];
  // No champion yet: nobody for a challenger to share traffic with.
  EXPECT_THAT(deployment_->Activate(a, 0.5, false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no champion")));
  ASSERT_OK(deployment_->SetChampion(a));
  const auto before = deployment_->Current();
  struct Case {
    std::string ref;
    double weight;
    bool shadow;
    absl::StatusCode code;
    const char* why;
  };
  const Case cases[] = {
      {"0123456789abcdef", 0.5, false, absl::StatusCode::kNotFound, "no such model"},
      {b, 1.5, false, absl::StatusCode::kInvalidArgument, "weight above 1"},
      {b, -0.1, false, absl::StatusCode::kInvalidArgument, "weight below 0"},
      {b, std::nan(""), false, absl::StatusCode::kInvalidArgument, "NaN is no weight"},
      {b, 0.5, true, absl::StatusCode::kInvalidArgument, "a shadow decides no traffic"},
      {b, 0, false, absl::StatusCode::kInvalidArgument, "weight 0 must name the champion"},
      {a, 0.5, false, absl::StatusCode::kInvalidArgument, "the champion as its own challenger"},
      {"abc", 0.5, false, absl::StatusCode::kInvalidArgument, "a prefix under 8 hex digits"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(deployment_->Activate(c.ref, c.weight, c.shadow).status(), StatusIs(c.code))
        << c.why;
    EXPECT_EQ(deployment_->Current(), before) << c.why;
  }
  // The loader's error (the model does not bind) is returned as is.
  refuse_ = b;
  EXPECT_THAT(deployment_->Activate(b, 0.5, false).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("does not bind")));
  EXPECT_EQ(deployment_->Current(), before);
}

TEST_F(ModelDeploymentTest, ARequestKeepsTheSnapshotItStartedWith) {
  ASSERT_OK(deployment_->SetChampion(refs_[0]));
  const auto held = deployment_->Current();
  ASSERT_OK(deployment_->Activate(refs_[1], 1, false));
  EXPECT_EQ(Ref(held->champion), refs_[0]);
  EXPECT_EQ(Ref(deployment_->Current()->champion), refs_[1]);
}

// An activation is stored before it takes effect and a deployment opened later restores it,
// challenger weight and shadow included; the command line's champion (SetChampion) is not
// stored, so it never outlives an activation.
TEST_F(ModelDeploymentTest, RestoresTheStoredActivationAndNotTheInitialChampion) {
  const std::string record = dir_ + "/models/" + kDeploymentRecordFile;
  auto first = Make(record);
  ASSERT_OK(first->SetChampion(refs_[0]));
  EXPECT_FALSE(std::filesystem::exists(record));
  ASSERT_OK(first->Activate(refs_[1], 1, false));
  ASSERT_OK(first->Activate(refs_[2], 0.25, false));
  ASSERT_OK(first->Activate(refs_[0], 0, true));
  auto stored = ReadDeploymentRecord(record);
  ASSERT_OK(stored);
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->champion, refs_[1]);
  EXPECT_EQ((*stored)->challenger, refs_[2]);
  EXPECT_EQ((*stored)->traffic_weight, 0.25);
  EXPECT_EQ((*stored)->shadow, refs_[0]);

  auto second = Make(record);
  ASSERT_OK(second->Restore(**stored));
  const auto now = second->Current();
  EXPECT_EQ(Ref(now->champion), refs_[1]);
  EXPECT_EQ(Ref(now->challenger), refs_[2]);
  EXPECT_EQ(now->traffic_weight, 0.25);
  EXPECT_EQ(Ref(now->shadow), refs_[0]);
}

TEST_F(ModelDeploymentTest, RefusesAnActivationItCannotStore) {
  auto deployment = Make(dir_ + "/no such dir/" + kDeploymentRecordFile);
  ASSERT_OK(deployment->SetChampion(refs_[0]));
  const auto before = deployment->Current();
  EXPECT_THAT(deployment->Activate(refs_[1], 1, false).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot store")));
  EXPECT_EQ(deployment->Current(), before);
}

TEST_F(ModelDeploymentTest, RestoreNamesAStoredModelThatIsGone) {
  const std::string record = dir_ + "/models/" + kDeploymentRecordFile;
  ASSERT_OK(Make(record)->Activate(refs_[1], 1, false));
  auto stored = ReadDeploymentRecord(record);
  ASSERT_OK(stored);
  std::filesystem::remove(dir_ + "/models/" + refs_[1] + ".model");
  EXPECT_THAT(Make(record)->Restore(**stored),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat(refs_[1].substr(0, 12), " the champion"))));
}

TEST(DeploymentRecord, AbsentIsNoneAndDamagedIsAnError) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/deployment_record_", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/deployment.json";
  std::filesystem::remove(path);
  auto none = ReadDeploymentRecord(path);
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
  const std::string ref(64, 'a');
  for (const std::string& text :
       {std::string("not json"), std::string(R"({"champion":"abc"})"),
        absl::StrCat(R"({"champion":")", ref, R"(","challenger":")", ref,
                     R"(","traffic_weight":1})"),
        absl::StrCat(R"({"challenger":")", ref, R"(","traffic_weight":0.5})")}) {
    std::ofstream(path, std::ios::trunc) << text;
    EXPECT_THAT(ReadDeploymentRecord(path).status(), StatusIs(absl::StatusCode::kDataLoss))
        << text;
  }
  std::filesystem::remove_all(dir);
}

TEST(ModelDeploymentRouting, IsDeterministicAndSplitsByWeight) {
  EXPECT_FALSE(ModelDeployment::RoutesToChallenger("tx-1", 0));
  EXPECT_TRUE(ModelDeployment::RoutesToChallenger("tx-1", 1));
  constexpr int kIds = 100'000;
  int at_10 = 0, at_50 = 0;
  for (int i = 0; i < kIds; ++i) {
    const std::string id = absl::StrCat("tx-", i);
    const bool r10 = ModelDeployment::RoutesToChallenger(id, 0.1);
    const bool r50 = ModelDeployment::RoutesToChallenger(id, 0.5);
    // The same id always meets the same model.
    ASSERT_EQ(r10, ModelDeployment::RoutesToChallenger(id, 0.1)) << id;
    // A larger weight only adds ids: raising a canary never moves a payment back.
    if (r10) {
      ASSERT_TRUE(r50) << id;
    }
    at_10 += r10;
    at_50 += r50;
  }
  // Binomial standard deviation at 100k ids: 0.00095 (p 0.1), 0.0016 (p 0.5); 0.005 is > 3 sigma.
  EXPECT_NEAR(at_10 / static_cast<double>(kIds), 0.1, 0.005);
  EXPECT_NEAR(at_50 / static_cast<double>(kIds), 0.5, 0.005);
}

}  // namespace
}  // namespace vigil
