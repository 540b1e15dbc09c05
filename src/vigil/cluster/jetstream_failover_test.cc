// What the cluster mode relies on JetStream for, checked against a real 3-server cluster: a
// message it acknowledged survives the loss of the stream's leader (SIGKILL), and publishing
// resumes on a new leader.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

TEST(JetStreamFailoverTest, KillingTheStreamLeaderLosesNoAcknowledgedMessage) {
  vigil::testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto servers, testing::NatsServers::Start(3, dir.path()));
  NatsOptions options;
  options.servers = servers->urls();
  options.request_timeout = std::chrono::milliseconds(1000);
  ASSERT_OK_AND_ASSIGN(auto nats, NatsConnection::Connect(options));
  ASSERT_OK(nats->EnsureStream({.name = "LOG", .subjects = {"log.>"}, .replicas = 3}));

  constexpr int kMessages = 1200;
  std::set<std::string> acknowledged;
  int killed = -1;
  std::chrono::steady_clock::time_point killed_at;
  std::optional<double> resumed_after_s;
  for (int k = 0; k < kMessages; ++k) {
    if (k == kMessages / 4) {
      ASSERT_OK_AND_ASSIGN(StreamStatus status, nats->StatusOf("LOG"));
      ASSERT_EQ(status.leader.size(), 2u) << status.leader;  // "n0", "n1" or "n2"
      killed = status.leader[1] - '0';
      servers->Kill(killed);
      killed_at = std::chrono::steady_clock::now();
    }
    PublishOptions once;
    once.msg_id = absl::StrCat("m", k);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    absl::StatusOr<PublishAck> ack = absl::UnknownError("not tried");
    while (std::chrono::steady_clock::now() < give_up) {
      ack = nats->Publish(absl::StrCat("log.", k % 8), once.msg_id, once);
      if (ack.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_OK(ack.status()) << "message " << k;
    acknowledged.insert(once.msg_id);
    if (killed >= 0 && !resumed_after_s.has_value()) {
      resumed_after_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    }
  }
  ASSERT_TRUE(resumed_after_s.has_value());
  std::printf("publishing resumed %.2f s after the leader n%d was killed\n", *resumed_after_s,
              killed);

  // Every acknowledged message is in the stream once, read through a surviving server.
  NatsOptions survivor;
  survivor.servers = {servers->url((killed + 1) % 3)};
  ASSERT_OK_AND_ASSIGN(auto reader_connection, NatsConnection::Connect(survivor));
  // Right after a leader change a consumer's creation may time out once; a node retries.
  absl::StatusOr<std::unique_ptr<StreamReader>> opened = absl::UnknownError("not tried");
  for (int attempt = 0; attempt < 20 && !opened.ok(); ++attempt) {
    opened = reader_connection->Read("LOG", "", 1);
    if (!opened.ok()) std::printf("reader: %s\n", opened.status().ToString().c_str());
  }
  ASSERT_OK(opened.status());
  std::unique_ptr<StreamReader> reader = std::move(*opened);
  std::set<std::string> stored;
  uint64_t last = 0;
  int count = 0;
  while (true) {
    // Until the stream is read to its end: a long wait while messages are missing (a reader
    // through a survivor may pause while its consumer moves), a short one for any extra.
    ASSERT_OK_AND_ASSIGN(std::optional<StreamMessage> m,
                         reader->Next(std::chrono::milliseconds(count < kMessages ? 15000 : 1000)));
    if (!m.has_value()) break;
    EXPECT_GT(m->sequence, last);
    last = m->sequence;
    ++count;
    EXPECT_TRUE(stored.insert(m->data).second) << "stored twice: " << m->data;
  }
  EXPECT_EQ(count, kMessages);
  EXPECT_EQ(stored, acknowledged);

  // The killed server comes back with its store and catches up.
  ASSERT_OK(servers->Restart(killed));
  ASSERT_OK_AND_ASSIGN(StreamStatus after, nats->StatusOf("LOG"));
  EXPECT_EQ(after.messages, static_cast<uint64_t>(kMessages));
}

}  // namespace
}  // namespace vigil::cluster
