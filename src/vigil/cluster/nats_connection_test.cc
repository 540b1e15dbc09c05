#include "vigil/cluster/nats_connection.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NatsConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, dir_.path()));
    ASSERT_OK_AND_ASSIGN(nats_, servers_->Connect());
    ASSERT_OK(nats_->EnsureStream({.name = "LOG", .subjects = {"log.a.*", "log.b.*"}}));
  }

  // Every message of "filter" from "from", waiting a little for each.
  std::vector<StreamMessage> ReadAll(std::string_view filter, uint64_t from, size_t count) {
    std::vector<StreamMessage> out;
    absl::StatusOr<std::unique_ptr<StreamReader>> reader = nats_->Read("LOG", filter, from);
    EXPECT_OK(reader.status());
    if (!reader.ok()) return out;
    while (out.size() < count) {
      absl::StatusOr<std::optional<StreamMessage>> next =
          (*reader)->Next(std::chrono::milliseconds(2000));
      EXPECT_OK(next.status());
      if (!next.ok() || !next->has_value()) break;
      out.push_back(std::move(**next));
    }
    return out;
  }

  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  std::unique_ptr<NatsConnection> nats_;
};

TEST_F(NatsConnectionTest, PublishedMessagesAreReadInOrderFromAPosition) {
  PublishOptions with_header;
  with_header.headers = {{"Vigil-Kind", "payment"}};
  ASSERT_OK_AND_ASSIGN(PublishAck a, nats_->Publish("log.a.1", "first", with_header));
  ASSERT_OK_AND_ASSIGN(PublishAck b, nats_->Publish("log.b.1", "second"));
  ASSERT_OK_AND_ASSIGN(PublishAck c, nats_->Publish("log.a.2", std::string("th\0rd", 5)));
  EXPECT_EQ(a.sequence, 1u);
  EXPECT_EQ(b.sequence, 2u);
  EXPECT_EQ(c.sequence, 3u);
  EXPECT_FALSE(a.duplicate);

  const std::vector<StreamMessage> all = ReadAll("", 1, 3);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].subject, "log.a.1");
  EXPECT_EQ(all[0].data, "first");
  EXPECT_EQ(all[0].Header("Vigil-Kind"), "payment");
  EXPECT_EQ(all[0].Header("absent"), "");
  EXPECT_EQ(all[1].sequence, 2u);
  EXPECT_EQ(all[2].data, std::string("th\0rd", 5));
  EXPECT_GT(all[2].stored_unix_ns, 0);

  const std::vector<StreamMessage> from_two = ReadAll("", 2, 2);
  ASSERT_EQ(from_two.size(), 2u);
  EXPECT_EQ(from_two[0].sequence, 2u);

  const std::vector<StreamMessage> only_a = ReadAll("log.a.*", 1, 2);
  ASSERT_EQ(only_a.size(), 2u);
  EXPECT_EQ(only_a[1].sequence, 3u);
}

TEST_F(NatsConnectionTest, ReaderWaitsForMessagesPublishedLater) {
  ASSERT_OK_AND_ASSIGN(auto reader, nats_->Read("LOG", "", 1));
  ASSERT_OK_AND_ASSIGN(std::optional<StreamMessage> none,
                       reader->Next(std::chrono::milliseconds(50)));
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(reader->position(), 0u);
  ASSERT_OK(nats_->Publish("log.a.1", "late").status());
  ASSERT_OK_AND_ASSIGN(std::optional<StreamMessage> late,
                       reader->Next(std::chrono::milliseconds(2000)));
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->data, "late");
  EXPECT_EQ(reader->position(), 1u);
}

TEST_F(NatsConnectionTest, ARepeatedMessageIdIsStoredOnce) {
  PublishOptions once;
  once.msg_id = "tx-1";
  ASSERT_OK_AND_ASSIGN(PublishAck first, nats_->Publish("log.a.1", "payment", once));
  ASSERT_OK_AND_ASSIGN(PublishAck again, nats_->Publish("log.a.1", "payment", once));
  EXPECT_FALSE(first.duplicate);
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.sequence, first.sequence);
  once.msg_id = "tx-2";
  ASSERT_OK_AND_ASSIGN(PublishAck other, nats_->Publish("log.a.1", "payment", once));
  EXPECT_EQ(other.sequence, first.sequence + 1);
  ASSERT_OK_AND_ASSIGN(uint64_t last, nats_->LastSequenceOf("LOG", "log.a.1"));
  EXPECT_EQ(last, other.sequence);
}

TEST_F(NatsConnectionTest, AnExpectedLastSubjectSequenceFencesOtherWriters) {
  ASSERT_OK_AND_ASSIGN(uint64_t none, nats_->LastSequenceOf("LOG", "log.b.7"));
  EXPECT_EQ(none, 0u);
  PublishOptions expect;
  expect.expected_last_subject_sequence = 0;  // nothing on the subject yet
  ASSERT_OK_AND_ASSIGN(PublishAck mine, nats_->Publish("log.b.7", "takeover", expect));
  // A second writer that saw the subject empty is refused: the first got in first.
  const absl::Status late = nats_->Publish("log.b.7", "takeover too", expect).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_THAT(late.message(), HasSubstr("log.b.7"));
  // Messages on other subjects do not disturb the expectation.
  ASSERT_OK(nats_->Publish("log.a.1", "payment").status());
  expect.expected_last_subject_sequence = mine.sequence;
  ASSERT_OK_AND_ASSIGN(PublishAck next, nats_->Publish("log.b.7", "decisions", expect));
  // The old expectation no longer holds for anyone.
  EXPECT_EQ(nats_->Publish("log.b.7", "stale", expect).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::vector<std::string> stored;
  for (const StreamMessage& m : ReadAll("log.b.7", 1, 2)) stored.push_back(m.data);
  EXPECT_THAT(stored, ElementsAre("takeover", "decisions"));
  EXPECT_GT(next.sequence, mine.sequence);
}

TEST_F(NatsConnectionTest, AnExistingStreamIsNeverChangedSilently) {
  EXPECT_OK(nats_->EnsureStream({.name = "LOG", .subjects = {"log.b.*", "log.a.*"}}));
  const absl::Status other = nats_->EnsureStream({.name = "LOG", .subjects = {"log.c.*"}});
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("exists with subjects [log.a.*, log.b.*]"));
  const absl::Status replicas =
      nats_->EnsureStream({.name = "LOG", .subjects = {"log.a.*", "log.b.*"}, .replicas = 3});
  EXPECT_THAT(replicas.message(), HasSubstr("1 replicas, not 3"));
}

TEST_F(NatsConnectionTest, PublishingWhereNoStreamListensIsAnError) {
  const absl::Status s = nats_->Publish("nowhere.1", "x").status();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("publish to nowhere.1"));
}

TEST(NatsConnectTest, NoServerIsUnavailable) {
  NatsOptions options;
  options.servers = {absl::StrCat("nats://127.0.0.1:", testing::FreeLoopbackPort())};
  options.connect_timeout = std::chrono::milliseconds(200);
  EXPECT_EQ(NatsConnection::Connect(options).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(NatsConnection::Connect(NatsOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::cluster
