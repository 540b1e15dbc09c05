#include "vigil/core/feature_schema.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

TEST(FeatureSchema, CreateKeepsOrderAndIndexesNames) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const FeatureSchema> schema,
                       FeatureSchema::Create("v1", {"amount_usd", "orig_out_count_24h", "x9"}));
  EXPECT_EQ(schema->version(), "v1");
  EXPECT_EQ(schema->size(), 3u);
  EXPECT_THAT(schema->names(), ElementsAre("amount_usd", "orig_out_count_24h", "x9"));
  EXPECT_EQ(schema->IndexOf("amount_usd"), 0u);
  EXPECT_EQ(schema->IndexOf("x9"), 2u);
  EXPECT_EQ(schema->IndexOf("missing"), std::nullopt);
  EXPECT_EQ(schema->IndexOf("Amount_usd"), std::nullopt);  // names are case-sensitive
}

TEST(FeatureSchema, EmptySchemaIsValid) {
  ASSERT_OK_AND_ASSIGN(auto schema, FeatureSchema::Create("empty", {}));
  EXPECT_EQ(schema->size(), 0u);
  EXPECT_THAT(schema->Bind({}), IsOkAndHolds(IsEmpty()));
}

TEST(FeatureSchema, RejectsBadVersionAndNames) {
  EXPECT_THAT(FeatureSchema::Create("", {"a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("version is empty")));
  const struct {
    const char* name;
    const char* why;
  } kCases[] = {
      {"", "empty: not a rule identifier"},
      {"Amount", "upper case: names are lower-case identifiers"},
      {"a-b", "'-' would parse as minus in a rule"},
      {"a b", "space"},
      {"amount.usd", "'.' is reserved for rule member access"},
      {"caf\xc3\xa9", "non-ASCII"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "'" << c.name << "': " << c.why);
    EXPECT_THAT(FeatureSchema::Create("v1", {"ok", c.name}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("[a-z0-9_]")));
  }
  EXPECT_THAT(
      FeatureSchema::Create("v1", {"a", "b", "a"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate feature name 'a'")));
}

TEST(FeatureSchema, BindReturnsIndicesInWantedOrder) {
  ASSERT_OK_AND_ASSIGN(auto schema, FeatureSchema::Create("v2", {"a", "b", "c", "d"}));
  // A subset in another order: a model may use fewer features than the schema has.
  EXPECT_THAT(schema->Bind({"d", "a"}), IsOkAndHolds(ElementsAre(3u, 0u)));
  EXPECT_THAT(schema->Bind({"c", "c"}), IsOkAndHolds(ElementsAre(2u, 2u)));
}

TEST(FeatureSchema, BindListsEveryMissingName) {
  ASSERT_OK_AND_ASSIGN(auto schema, FeatureSchema::Create("v2", {"a", "b"}));
  // Both missing names in one error, so a mismatch is fixed in one round.
  EXPECT_THAT(schema->Bind({"a", "x", "b", "y"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "features not in schema v2: x, y"));
}

TEST(FeatureVector, CarriesItsSchema) {
  ASSERT_OK_AND_ASSIGN(auto schema, FeatureSchema::Create("v3", {"a", "b"}));
  FeatureVector fv{schema, std::vector<double>(schema->size(), 0.0)};
  EXPECT_EQ(fv.schema->version(), "v3");
  EXPECT_EQ(fv.values.size(), 2u);
}

TEST(FeatureSchema, EachVersionExtendsTheEarlierOnesAndNothingElse) {
  EXPECT_TRUE(SchemaExtends("vigil.features.v2", "vigil.features.v1"));
  EXPECT_TRUE(SchemaExtends("vigil.features.v2", "vigil.features.v2"));
  EXPECT_TRUE(SchemaExtends("vigil.features.v3", "vigil.features.v2"));
  EXPECT_TRUE(SchemaExtends("vigil.features.v3", "vigil.features.v1"));
  EXPECT_FALSE(SchemaExtends("vigil.features.v1", "vigil.features.v2"));
  EXPECT_FALSE(SchemaExtends("vigil.features.v2", "vigil.features.v3"));
  EXPECT_FALSE(SchemaExtends("vigil.features.v2", "vigil.features.v0"));
  EXPECT_FALSE(SchemaExtends("vigil.features.v3", "test.features.v1"));
  EXPECT_FALSE(SchemaExtends("vigil.features.v4", "vigil.features.v1")) << "unknown: not assumed";
}

}  // namespace
}  // namespace vigil
