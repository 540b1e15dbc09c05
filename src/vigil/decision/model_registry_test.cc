#include "vigil/decision/model_registry.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/sha256.h"
#include "vigil/model/testing_models.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

class ModelRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/model_registry_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/m.json") << testing::kXgboostTwoTrees;
    std::ofstream(dir_ + "/model.txt") << testing::kLightGbmThreeTrees;
    std::ofstream(dir_ + "/junk.json") << "{\"not\": \"a model\"}";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ModelRegistryTest, StoresModelsByContentHashAndResolvesPrefixes) {
  auto registry = ModelRegistry::Open(dir_ + "/data/models");
  ASSERT_OK(registry);
  auto xgb = registry->Add(dir_ + "/m.json");
  ASSERT_OK(xgb);
  EXPECT_EQ(xgb->ref, Sha256Hex(testing::kXgboostTwoTrees));
  auto again = registry->Add(dir_ + "/m.json");
  ASSERT_OK(again);
  EXPECT_EQ(again->path, xgb->path);  // same bytes, one entry
  auto lgb = registry->Add(dir_ + "/model.txt");
  ASSERT_OK(lgb);
  auto list = registry->List();
  ASSERT_OK(list);
  EXPECT_EQ(list->size(), 2u);

  auto loaded = registry->Load(xgb->ref.substr(0, 8));
  ASSERT_OK(loaded);
  EXPECT_EQ((*loaded)->format, ModelFormat::kXgboost);
  auto full = registry->Load(lgb->ref);
  ASSERT_OK(full);
  EXPECT_EQ((*full)->format, ModelFormat::kLightGbm);

  EXPECT_THAT(registry->Resolve("abc").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 8")));
  EXPECT_THAT(registry->Resolve("00000000").status(), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ModelRegistryTest, RefusesWhatIsNotAModelAndDetectsTampering) {
  auto registry = ModelRegistry::Open(dir_ + "/models");
  ASSERT_OK(registry);
  EXPECT_THAT(registry->Add(dir_ + "/junk.json").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry->Add(dir_ + "/missing.json").status(),
              StatusIs(absl::StatusCode::kNotFound));
  auto list = registry->List();
  ASSERT_OK(list);
  EXPECT_TRUE(list->empty());  // nothing half-stored
  auto entry = registry->Add(dir_ + "/m.json");
  ASSERT_OK(entry);
  std::ofstream(entry->path, std::ios::app) << " ";
  EXPECT_THAT(registry->Load(entry->ref).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no longer matches")));
}

}  // namespace
}  // namespace vigil
