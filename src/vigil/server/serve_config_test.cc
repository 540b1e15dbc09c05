#include "vigil/server/serve_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(ServeConfig, ReadsEveryKey) {
  auto c = ServeConfig::Parse(R"(listen: 0.0.0.0:9090
data_dir: state/
policy: policies/default.yaml
model_ref: 1234abcd
io_threads: 4
score_budget_ms: 50
idempotency_capacity: 10
limits: {body_bytes: 1024, header_bytes: 2048, request_timeout_ms: 100, idle_timeout_ms: 200,
         max_connections: 3, batch_size: 7}
batcher: {preset: compliance}
breaker: {failure_threshold: 2, budget_ms: 3, open_ms: 400}
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->host, "0.0.0.0");
  EXPECT_EQ(c->port, 9090);
  EXPECT_EQ(c->data_dir, "state/");
  EXPECT_EQ(c->model_ref, "1234abcd");
  EXPECT_EQ(c->io_threads, 4);
  EXPECT_EQ(c->score_budget, std::chrono::milliseconds(50));
  EXPECT_EQ(c->idempotency_capacity, 10u);
  EXPECT_EQ(c->limits.body_bytes, 1024u);
  EXPECT_EQ(c->limits.idle_timeout, std::chrono::milliseconds(200));
  EXPECT_EQ(c->limits.batch_size, 7u);
  EXPECT_EQ(c->batcher.classes[1].max_queue_delay, std::chrono::milliseconds(50));
  EXPECT_EQ(c->breaker.failure_threshold, 2);
  EXPECT_EQ(c->breaker.open_for, std::chrono::milliseconds(400));
}

TEST(ServeConfig, ReportsEveryProblemWithItsPlace) {
  auto c = ServeConfig::Parse(R"(listen: localhost:http
data_dir: state/
io_thread: 4
limits: {body_bytes: 10}
batcher: {preset: turbo}
)",
                              "serve.yaml");
  ASSERT_THAT(c.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("serve.yaml:1:9: listen 'localhost:http': the port must be a number"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:1: unknown key 'io_thread' in the configuration "
                           "(did you mean 'io_threads'?)"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:22: 'body_bytes' must be a whole number from 256"));
  EXPECT_THAT(m, HasSubstr("unknown batcher preset 'turbo' (fast, immediate or compliance)"));
}

TEST(ServeConfig, ChecksTheCombination) {
  EXPECT_THAT(ServeConfig::Parse("listen: 127.0.0.1:0\n", "s.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("data_dir is required")));
  EXPECT_THAT(
      ServeConfig::Parse("data_dir: d\nmodel: m.json\nmodel_ref: abcdef12\n", "s.yaml").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not both")));
  std::string host;
  uint16_t port = 1;
  EXPECT_OK(ParseListen("[::1]:0", &host, &port));
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(port, 0);
  EXPECT_THAT(ParseListen("8080", &host, &port), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ServeConfig, ReadsTheServingKeys) {
  auto c = ServeConfig::Parse(R"(data_dir: d
fx_rates: fx.csv
lists: my/lists
workers: {threads: 8, queue: 100}
log: {path: serve.log, sample_rate: 0.5}
batcher: {preset: immediate}
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->fx_rates, "fx.csv");
  EXPECT_EQ(c->lists, "my/lists");
  EXPECT_EQ(c->worker_threads, 8);
  EXPECT_EQ(c->worker_queue, 100u);
  EXPECT_EQ(c->log_path, "serve.log");
  EXPECT_EQ(c->log_sample_rate, 0.5);
  EXPECT_EQ(c->batcher_preset, "immediate");
  EXPECT_EQ(c->batcher.classes[2].max_queue_delay, std::chrono::microseconds(0));
}

TEST(ServeConfig, BadServingValuesAreNamed) {
  auto c = ServeConfig::Parse(R"(data_dir: d
workers: {threads: 0, qeue: 3}
log: {sample_rate: 2}
)",
                              "serve.yaml");
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("serve.yaml:2:20: 'threads'")));
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did you mean 'queue'?")));
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("'sample_rate' must be a number from 0 to 1")));
  EXPECT_THAT(BatcherPreset("slow"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("fast, immediate or compliance")));
}

}  // namespace
}  // namespace vigil
