#include "vigil/cluster/cluster_layout.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;

TEST(ClusterLayoutTest, EncodesAndDecodesEveryField) {
  ClusterLayout layout;
  layout.name = "eu-west_2";
  layout.partitions = 128;
  layout.replicas = 5;
  ASSERT_OK_AND_ASSIGN(ClusterLayout back, DecodeLayout(EncodeLayout(layout)));
  EXPECT_EQ(back, layout);
  EXPECT_EQ(EncodeLayout(layout),
            "name=eu-west_2\npartitions=128\npartition_hash=sha256-v1\nreplicas=5\n");
}

TEST(ClusterLayoutTest, DecodeNamesTheBadLine) {
  absl::StatusOr<ClusterLayout> bad =
      DecodeLayout("name=c\npartitions=six\npartition_hash=sha256-v1\nreplicas=3\n");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("line 2"));
  EXPECT_THAT(DecodeLayout("partitions=6\n").status().message(), HasSubstr("1 lines"));
}

TEST(ClusterLayoutTest, CheckNamesEveryProblem) {
  ClusterLayout layout;
  layout.name = "a.b";
  layout.partitions = 0;
  layout.replicas = 2;
  const absl::Status s = CheckLayout(layout);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cluster.name \"a.b\""));
  EXPECT_THAT(s.message(), HasSubstr("cluster.partitions 0"));
  EXPECT_THAT(s.message(), HasSubstr("cluster.replicas 2"));
  EXPECT_OK(CheckLayout(ClusterLayout{}));
}

TEST(ClusterLayoutTest, NamesDeriveFromTheClusterName) {
  ClusterLayout layout;
  layout.name = "c1";
  EXPECT_EQ(LogStreamName(layout), "VIGIL_c1");
  EXPECT_EQ(PaymentSubject(layout, 7), "vigil.c1.pay.7");
  EXPECT_EQ(DecisionSubject(layout, 63), "vigil.c1.dec.63");
  EXPECT_EQ(BucketName(layout, "leases"), "vigil_c1_leases");
  EXPECT_THAT(LogSubjects(layout), ::testing::ElementsAre("vigil.c1.pay.*", "vigil.c1.dec.*"));
}

TEST(ClusterLayoutServerTest, FirstNodeStoresTheLayoutLaterNodesMustAgree) {
  vigil::testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto servers, testing::NatsServers::Start(1, dir.path()));
  ASSERT_OK_AND_ASSIGN(auto nats, servers->Connect());
  ASSERT_OK_AND_ASSIGN(auto config, nats->EnsureBucket({.name = "vigil_c1_config"}));

  ClusterLayout first;
  first.name = "c1";
  first.replicas = 1;
  ASSERT_OK_AND_ASSIGN(ClusterLayout stored, AgreeLayout(*config, first));
  EXPECT_EQ(stored, first);
  ASSERT_OK_AND_ASSIGN(stored, AgreeLayout(*config, first));  // a second node, same layout
  EXPECT_EQ(stored, first);

  ClusterLayout other = first;
  other.partitions = 32;
  const absl::Status refused = AgreeLayout(*config, other).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("64 partitions, not 32"));
  EXPECT_THAT(refused.message(), HasSubstr("vigil_c1_config/layout"));
  // Nothing changed: the first layout still stands.
  ASSERT_OK_AND_ASSIGN(KeyValueEntry entry, config->Get("layout"));
  EXPECT_EQ(entry.value, EncodeLayout(first));
}

}  // namespace
}  // namespace vigil::cluster
