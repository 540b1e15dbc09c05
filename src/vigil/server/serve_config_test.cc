#include "vigil/server/serve_config.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(ServeConfig, ReadsEveryKey) {
  auto c = ServeConfig::Parse(R"(plaintext: true
listen: 0.0.0.0:9090
data_dir: state/
policy: policies/default.yaml
model: {ref: 1234abcd}
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
  EXPECT_THAT(m, HasSubstr("serve.yaml:1:9: listen: 'localhost:http': the port must be a number"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:1: unknown key 'io_thread' in the configuration "
                           "(did you mean 'io_threads'?)"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:22: limits.body_bytes: must be a whole number from 256"));
  EXPECT_THAT(m, HasSubstr("unknown batcher preset 'turbo' (fast, immediate or compliance)"));
}

TEST(ServeConfig, ChecksTheCombination) {
  // A file may leave out what flags supply (`vigil serve --config F --data-dir D`): the whole
  // is validated after the merge.
  absl::StatusOr<ServeConfig> partial =
      ServeConfig::Parse("auth: {certificate_roles: {\"CN=gw\": scorer}}\n", "s.yaml");
  ASSERT_OK(partial);
  EXPECT_THAT(partial->Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("data_dir is required")));
  partial->data_dir = "d";
  partial->tls.cert = "c.pem";
  partial->tls.key = "k.pem";
  partial->tls.client_ca = "ca.pem";
  EXPECT_OK(partial->Validate());
  absl::StatusOr<ServeConfig> both =
      ServeConfig::Parse("data_dir: d\nmodel: {file: m.json, ref: abcdef12}\n", "s.yaml");
  ASSERT_OK(both);
  EXPECT_THAT(both->Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not both")));
  std::string host;
  uint16_t port = 1;
  EXPECT_OK(ParseListen("[::1]:0", &host, &port));
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(port, 0);
  EXPECT_THAT(ParseListen("8080", &host, &port), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ServeConfig, ReadsTheServingKeys) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
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

TEST(ServeConfig, ReadsTheConnectionAndOverloadLimits) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
limits: {header_timeout_ms: 750, max_connections_per_client: 12,
         max_unauthenticated_share: 0.25}
workers: {max_queue_delay_ms: 20}
audit: {max_waiting: 99, max_wait_ms: 250}
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->limits.header_timeout, std::chrono::milliseconds(750));
  EXPECT_EQ(c->limits.max_connections_per_client, 12u);
  EXPECT_EQ(c->limits.max_unauthenticated_share, 0.25);
  EXPECT_EQ(c->worker_max_queue_delay, std::chrono::milliseconds(20));
  EXPECT_EQ(c->audit.max_waiting, 99u);
  EXPECT_EQ(c->audit.max_wait, std::chrono::milliseconds(250));
  // The defaults.
  const ServeConfig d;
  EXPECT_EQ(d.limits.header_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(d.limits.max_connections_per_client, 256u);
  EXPECT_EQ(d.limits.max_unauthenticated_share, 0.5);
  EXPECT_EQ(d.worker_max_queue_delay, std::chrono::milliseconds(50));
  EXPECT_EQ(d.audit.max_waiting, 16'384u);
  EXPECT_EQ(d.audit.max_wait, std::chrono::milliseconds(50));

  auto bad = ServeConfig::Parse(R"(data_dir: d
limits: {max_unauthenticated_share: 0, header_timeout_ms: 0}
)",
                                "serve.yaml");
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr("limits.max_unauthenticated_share: must be a number above 0")));
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limits.header_timeout_ms: must be")));
}

TEST(ServeConfig, BadServingValuesAreNamed) {
  auto c = ServeConfig::Parse(R"(data_dir: d
workers: {threads: 0, qeue: 3}
log: {sample_rate: 2}
)",
                              "serve.yaml");
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("serve.yaml:2:20: workers.threads: must be")));
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did you mean 'queue'?")));
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("log.sample_rate: must be a number from 0 to 1")));
  EXPECT_THAT(BatcherPreset("slow"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("fast, immediate or compliance")));
}

TEST(ServeConfig, ReadsTheDriftKeys) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
drift:
  enabled: false
  profile: model/reference_profile.json
  measured_null: model/drift_null.json
  calibration: raw-preset
  freeze: false
  false_alarm_days: 7
  short_window: 30/5
  long_window: 600/60
  min_rows: 20
  queue: 1000
  exclude: [hour_of_day]
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_FALSE(c->drift.enabled);
  EXPECT_EQ(c->drift.profile, "model/reference_profile.json");
  EXPECT_EQ(c->drift.measured_null, "model/drift_null.json");
  EXPECT_EQ(c->drift.monitor.calibration, drift::DriftCalibration::kRawPreset);
  EXPECT_FALSE(c->drift.monitor.freeze_on_l3);
  EXPECT_EQ(c->drift.monitor.false_alarm_period, std::chrono::hours(7 * 24));
  ASSERT_EQ(c->drift.monitor.windows.size(), 2u);
  EXPECT_EQ(c->drift.monitor.windows[0].name, "short");
  EXPECT_EQ(c->drift.monitor.windows[0].size, std::chrono::seconds(30));
  EXPECT_EQ(c->drift.monitor.windows[0].slide, std::chrono::seconds(5));
  EXPECT_EQ(c->drift.monitor.windows[1].size, std::chrono::seconds(600));
  EXPECT_EQ(c->drift.monitor.windows[1].slide, std::chrono::seconds(60));
  EXPECT_EQ(c->drift.monitor.min_rows, 20u);
  EXPECT_EQ(c->drift.queue_rows, 1000u);
  EXPECT_THAT(c->drift.monitor.exclude, ::testing::ElementsAre("hour_of_day"));
  auto bad = ServeConfig::Parse("data_dir: d\ndrift:\n  exclude: hour_of_day\n", "serve.yaml");
  EXPECT_THAT(bad.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("drift.exclude: must be a list")));
  EXPECT_THAT(ServeConfig::Parse("data_dir: d\ndrift:\n  enabled: maybe\n", "serve.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("drift.enabled: must be true or false")));
}

TEST(ServeConfig, DriftDefaultsAreTheMonitorsAndYamlNullIsTheNullCalibration) {
  auto defaults = ServeConfig::Parse("plaintext: true\ndata_dir: d\n", "serve.yaml");
  ASSERT_OK(defaults);
  EXPECT_TRUE(defaults->drift.enabled);
  EXPECT_TRUE(defaults->drift.profile.empty());  // beside the model, else off
  EXPECT_EQ(defaults->drift.monitor.calibration, drift::DriftCalibration::kNull);
  EXPECT_TRUE(defaults->drift.monitor.freeze_on_l3);
  EXPECT_EQ(defaults->drift.monitor.false_alarm_period, std::chrono::hours(30 * 24));
  EXPECT_EQ(defaults->drift.monitor.windows[0].size, std::chrono::seconds(60));
  EXPECT_EQ(defaults->drift.monitor.windows[1].slide, std::chrono::seconds(60));
  EXPECT_EQ(defaults->drift.queue_rows, 65536u);
  // A bare `null` is YAML's null value, a quoted one a string: both mean the null calibration.
  for (const char* text : {"null", "\"null\"", "~"}) {
    auto c = ServeConfig::Parse(absl::StrCat("plaintext: true\ndata_dir: d\ndrift: {calibration: ", text, "}\n"),
                                "serve.yaml");
    ASSERT_OK(c) << text;
    EXPECT_EQ(c->drift.monitor.calibration, drift::DriftCalibration::kNull) << text;
  }
}

TEST(ServeConfig, BadDriftValuesNameTheirKey) {
  auto c = ServeConfig::Parse(R"(data_dir: d
drift:
  calibration: exact
  freeze: maybe
  false_alarm_days: 0
  short_window: 60/7
  long_window: "300"
  queue: 0
  min_row: 3
)",
                              "serve.yaml");
  ASSERT_THAT(c.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:16: drift.calibration: must be null or raw-preset"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:11: drift.freeze: must be true or false"));
  EXPECT_THAT(m, HasSubstr("drift.false_alarm_days: must be a whole number from 1"));
  EXPECT_THAT(m, HasSubstr("drift.short_window: '60/7': SIZE must be a multiple of SLIDE"));
  EXPECT_THAT(m, HasSubstr("drift.long_window: '300' is not SIZE/SLIDE"));
  EXPECT_THAT(m, HasSubstr("drift.queue: must be a whole number from 1"));
  EXPECT_THAT(m, HasSubstr("unknown key 'min_row' in drift (did you mean 'min_rows'?)"));

  drift::DriftWindowSpec w;
  EXPECT_OK(drift::ParseDriftWindow("10/10", "drift.short_window", &w));
  EXPECT_EQ(w.size, std::chrono::seconds(10));
  EXPECT_THAT(drift::ParseDriftWindow("0/0", "drift.short_window", &w),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("drift.short_window")));
  EXPECT_THAT(drift::ParseDriftCalibration("exact"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("drift.calibration")));
  ServeConfig set;
  set.data_dir = "d";
  set.drift.queue_rows = 0;
  EXPECT_THAT(set.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("drift.queue")));
  set.drift.queue_rows = 1;
  set.drift.monitor.windows[1].size = std::chrono::seconds(90);  // slide 60
  EXPECT_THAT(set.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("drift.long_window")));
}

TEST(ServeConfig, ReadsTheScreeningKeys) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
screening:
  lists: [lists/sdn, lists/pep.csv]
  reload_seconds: 0
  min_score: 0.9
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_THAT(c->screening.lists, ::testing::ElementsAre("lists/sdn", "lists/pep.csv"));
  EXPECT_EQ(c->screening.reload_interval, std::chrono::seconds(0));  // 0: load once
  EXPECT_EQ(c->screening.min_score, 0.9);

  // Absent: no lists (no screening), a check every 30 s, the screener's minimum score.
  auto defaults = ServeConfig::Parse("plaintext: true\ndata_dir: d\n", "serve.yaml");
  ASSERT_OK(defaults);
  EXPECT_TRUE(defaults->screening.lists.empty());
  EXPECT_EQ(defaults->screening.reload_interval, std::chrono::seconds(30));
  EXPECT_EQ(defaults->screening.min_score, 0);  // the policy's screening review threshold
}

TEST(ServeConfig, BadScreeningValuesNameTheirKey) {
  auto c = ServeConfig::Parse(R"(data_dir: d
screening:
  lists: lists/sdn
  reload_seconds: -1
  min_score: 1.5
  reload_second: 3
)",
                              "serve.yaml");
  ASSERT_THAT(c.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:10: screening.lists: must be a list"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:19: screening.reload_seconds: must be a whole number "
                           "from 0"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:5:14: screening.min_score: must be a number from 0 to 1"));
  EXPECT_THAT(m, HasSubstr("unknown key 'reload_second' in screening "
                           "(did you mean 'reload_seconds'?)"));
  EXPECT_THAT(
      ServeConfig::Parse("data_dir: d\nscreening: [a.csv]\n", "serve.yaml").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("screening: must be a mapping")));
  EXPECT_THAT(
      ServeConfig::Parse("data_dir: d\nscreening: {lists: [a.csv, \"\"]}\n", "s.yaml").status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("s.yaml:2:28: screening.lists: must be a non-empty string")));

  // The same checks on values set by flags or code.
  ServeConfig set;
  set.data_dir = "d";
  set.screening.reload_interval = std::chrono::seconds(-1);
  EXPECT_THAT(set.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("screening.reload_seconds: must be >= 0")));
  set.screening.reload_interval = std::chrono::seconds(1);
  set.screening.min_score = -0.1;
  EXPECT_THAT(set.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("screening.min_score")));
  set.screening.min_score = 0.8;
  set.screening.lists = {""};
  EXPECT_THAT(set.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("screening.lists")));
}

TEST(ServeConfig, ReadsTheGpuSection) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
gpu:
  enabled: true
  device: 3
  min_rows: {P0: 512, P1: never, P2: 1}
  timeout_ms: 0.25
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_TRUE(c->gpu.enabled);
  EXPECT_EQ(c->gpu.device, 3);
  EXPECT_EQ(c->gpu.min_rows[0], 512u);
  EXPECT_EQ(c->gpu.min_rows[1], BackendRouterConfig::kNever);
  EXPECT_EQ(c->gpu.min_rows[2], 1u);
  EXPECT_EQ(c->gpu.timeout, std::chrono::microseconds(250));
  EXPECT_OK(c->Validate());

  // Absent: off, device 0, the router's thresholds (P0 never) and timeout; a class left out
  // of min_rows keeps its default.
  auto defaults = ServeConfig::Parse("plaintext: true\ndata_dir: d\n", "serve.yaml");
  ASSERT_OK(defaults);
  EXPECT_FALSE(defaults->gpu.enabled);
  EXPECT_EQ(defaults->gpu.device, 0);
  EXPECT_EQ(defaults->gpu.min_rows, BackendRouterConfig{}.gpu_min_rows);
  EXPECT_EQ(defaults->gpu.min_rows[0], BackendRouterConfig::kNever);
  EXPECT_EQ(defaults->gpu.timeout, BackendRouterConfig{}.gpu_timeout);
  auto some = ServeConfig::Parse(
      "plaintext: true\ndata_dir: d\ngpu: {enabled: false, min_rows: {P2: 128}, timeout_ms: 5}\n",
      "serve.yaml");
  ASSERT_OK(some);
  EXPECT_FALSE(some->gpu.enabled);
  EXPECT_EQ(some->gpu.min_rows[0], BackendRouterConfig::kNever);
  EXPECT_EQ(some->gpu.min_rows[1], 16u);
  EXPECT_EQ(some->gpu.min_rows[2], 128u);
  EXPECT_EQ(some->gpu.timeout, std::chrono::milliseconds(5));
}

TEST(ServeConfig, BadGpuValuesNameTheirKey) {
  auto c = ServeConfig::Parse(R"(data_dir: d
gpu:
  enabled: sometimes
  device: -1
  min_rows: {P0: 0, P1: many, P2: -4, P3: 1}
  timeout_ms: 0
  timout_ms: 5
)",
                              "serve.yaml");
  ASSERT_THAT(c.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:12: gpu.enabled: must be true or false"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:11: gpu.device: must be a whole number from 0"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:5:18: gpu.min_rows.P0: must be a positive integer or "
                           "never"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:5:25: gpu.min_rows.P1: must be a positive integer or "
                           "never"));
  EXPECT_THAT(m, HasSubstr("gpu.min_rows.P2: must be a positive integer or never"));
  EXPECT_THAT(m, HasSubstr("unknown key 'P3' in gpu.min_rows"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:6:15: gpu.timeout_ms: must be a number of milliseconds"));
  EXPECT_THAT(m, HasSubstr("unknown key 'timout_ms' in gpu (did you mean 'timeout_ms'?)"));
  EXPECT_THAT(ServeConfig::Parse("data_dir: d\ngpu: true\n", "serve.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("serve.yaml:2:6: gpu: must be a mapping")));
  EXPECT_THAT(ServeConfig::Parse("data_dir: d\ngpu: {min_rows: 64}\n", "serve.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpu.min_rows: must be a mapping (P0, P1, P2)")));
  EXPECT_THAT(ServeConfig::Parse("data_dir: d\ngpu: {gpu_enabled: true}\n", "s.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown key 'gpu_enabled' in gpu")));

  // The same checks on values set by flags or code.
  ServeConfig set;
  set.data_dir = "d";
  set.plaintext = true;
  set.gpu.device = -2;
  EXPECT_THAT(set.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("gpu.device must be a CUDA device ordinal")));
  set.gpu.device = 0;
  set.gpu.min_rows[1] = 0;
  EXPECT_THAT(set.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpu.min_rows.P1 must be a positive integer or never")));
  set.gpu.min_rows[1] = 256;
  set.gpu.timeout = std::chrono::microseconds(0);
  EXPECT_THAT(set.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("gpu.timeout_ms must be positive")));
  set.gpu.timeout = std::chrono::microseconds(1);
  EXPECT_OK(set.Validate());
}

}  // namespace
}  // namespace vigil
