#include "vigil/cluster/partition_writer.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/common/string_view.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSubject[] = "vigil.c1.dec.5";

class PartitionWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, dir_.path()));
    ASSERT_OK_AND_ASSIGN(nats_, servers_->Connect());
    ASSERT_OK(nats_->EnsureStream({.name = "VIGIL_c1", .subjects = {"vigil.c1.>"}}));
  }

  // The subject's messages as "kind owner/epoch data".
  std::vector<std::string> Log() {
    std::vector<std::string> out;
    absl::StatusOr<uint64_t> last = nats_->LastSequenceOf("VIGIL_c1", kSubject);
    EXPECT_OK(last.status());
    absl::StatusOr<std::unique_ptr<StreamReader>> reader = nats_->Read("VIGIL_c1", kSubject, 1);
    EXPECT_OK(reader.status());
    while (reader.ok() && last.ok() && (*reader)->position() < *last) {
      absl::StatusOr<std::optional<StreamMessage>> m = (*reader)->Next(std::chrono::seconds(2));
      if (!m.ok() || !m->has_value()) break;
      out.push_back(absl::StrCat(ToAbsl((*m)->Header(kKindHeader)), " ",
                                 ToAbsl((*m)->Header(kOwnerHeader)), "/",
                                 ToAbsl((*m)->Header(kEpochHeader)), " ", (*m)->data));
    }
    return out;
  }

  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  std::unique_ptr<NatsConnection> nats_;
};

TEST_F(PartitionWriterTest, AnOwnerTakesOverThenAppendsInOrder) {
  PartitionWriter writer(nats_.get(), kSubject, "node-a", 7);
  EXPECT_EQ(writer.Append("too early").status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(uint64_t marker, writer.Takeover(0));
  ASSERT_OK(nats_->Publish("vigil.c1.pay.5", "a payment between").status());
  ASSERT_OK_AND_ASSIGN(uint64_t first, writer.Append("batch 1"));
  ASSERT_OK_AND_ASSIGN(uint64_t second, writer.Append("batch 2"));
  EXPECT_LT(marker, first);
  EXPECT_LT(first, second);
  EXPECT_EQ(writer.last_sequence(), second);
  EXPECT_THAT(Log(), ElementsAre("takeover node-a/7 ", "decisions node-a/7 batch 1",
                                 "decisions node-a/7 batch 2"));
}

TEST_F(PartitionWriterTest, ANewOwnerFencesThePausedOneForGood) {
  PartitionWriter old_owner(nats_.get(), kSubject, "node-a", 1);
  ASSERT_OK(old_owner.Takeover(0).status());
  ASSERT_OK(old_owner.Append("decided by a").status());

  // node-b has applied only up to a's marker: its takeover is refused until it applies the rest.
  PartitionWriter new_owner(nats_.get(), kSubject, "node-b", 2);
  const absl::Status behind = new_owner.Takeover(old_owner.last_sequence() - 1).status();
  EXPECT_EQ(behind.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(behind.message(), HasSubstr("apply them and take over again"));
  ASSERT_OK(new_owner.Takeover(old_owner.last_sequence()).status());

  // The old owner wakes up: nothing it writes reaches the log, now or later.
  const absl::Status fenced = old_owner.Append("decided by a, late").status();
  EXPECT_EQ(fenced.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(fenced.message(), HasSubstr("fenced"));
  EXPECT_TRUE(old_owner.fenced());
  EXPECT_EQ(old_owner.Append("again").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(old_owner.Takeover(new_owner.last_sequence()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(new_owner.Append("decided by b").status());
  EXPECT_THAT(Log(), ElementsAre("takeover node-a/1 ", "decisions node-a/1 decided by a",
                                 "takeover node-b/2 ", "decisions node-b/2 decided by b"));
}

TEST_F(PartitionWriterTest, AWriteWhoseOutcomeIsUnknownIsRetriedAndStoredOnce) {
  NatsOptions options;
  options.servers = servers_->urls();
  options.request_timeout = std::chrono::milliseconds(300);
  ASSERT_OK_AND_ASSIGN(auto impatient, NatsConnection::Connect(options));
  PartitionWriter writer(impatient.get(), kSubject, "node-a", 3,
                         {.retries = 40, .retry_wait = std::chrono::milliseconds(50)});
  ASSERT_OK(writer.Takeover(0).status());
  // The server stalls for a second: the first tries time out, unknown whether stored.
  servers_->Pause(0);
  std::thread resume([this] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    servers_->Resume(0);
  });
  absl::StatusOr<uint64_t> written = writer.Append("one batch");
  resume.join();
  ASSERT_OK(written.status());
  EXPECT_FALSE(writer.fenced());
  EXPECT_THAT(Log(), ElementsAre("takeover node-a/3 ", "decisions node-a/3 one batch"));
  ASSERT_OK(writer.Append("next").status());
}

}  // namespace
}  // namespace vigil::cluster
