#include "vigil/server/request_log.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

// 2026-11-30T12:34:56.123456Z.
constexpr int64_t kNowMicros = 1'796'042'096'123'456;

class RequestLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/request_log_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<RequestLog> Open(double sample_rate, const std::string& name = "log.jsonl") {
    RequestLogOptions options;
    options.sample_rate = sample_rate;
    options.path = Path(name);
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<RequestLog>> log = RequestLog::Create(options);
    EXPECT_OK(log.status());
    return log.ok() ? *std::move(log) : nullptr;
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // The file's lines, each parsed; a line that is not one JSON object fails the test.
  std::vector<nlohmann::json> ReadLines(const std::string& name = "log.jsonl") const {
    const std::string text = testing::ReadFile(Path(name));
    EXPECT_TRUE(text.empty() || text.back() == '\n') << "every line ends with a newline";
    std::vector<nlohmann::json> lines;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      EXPECT_TRUE(parsed.is_object()) << "not a JSON object: " << line;
      lines.push_back(std::move(parsed));
    }
    return lines;
  }

  testing::FakeClock clock_{FromUnixMicros(kNowMicros)};
  std::string dir_;
};

// Random 32-hex-digit trace ids from a seeded generator.
std::vector<std::string> RandomTraceIds(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    char buf[33];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    ids.emplace_back(buf);
  }
  return ids;
}

TEST_F(RequestLogTest, WritesOneExactJsonLinePerEntry) {
  std::unique_ptr<RequestLog> log = Open(0);
  ASSERT_NE(log, nullptr);
  log->Log({.method = "POST",
            .route = "/v1/score",
            .target = "/v1/score?explain=1",
            .remote = "203.0.113.9:51234",
            .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
            .transaction_id = "tx-1",
            .action = "REVIEW",
            .degraded_reason = "model_timeout",
            .status = 200,
            .degraded = true,
            .latency = std::chrono::microseconds(1830)});
  clock_.Advance(std::chrono::microseconds(1'000'001));
  log->Log({.method = "POST",
            .route = "/v1/score",
            .error_code = "INVALID_ARGUMENT",
            .error_message = "amount: not a number",
            .status = 400});
  log->Flush();
  const std::vector<std::string> lines =
      absl::StrSplit(testing::ReadFile(Path("log.jsonl")), '\n', absl::SkipEmpty());
  EXPECT_THAT(
      lines,
      ElementsAre(
          "{\"ts\":\"2026-11-30T12:34:56.123456Z\",\"level\":\"warn\",\"msg\":\"request\","
          "\"method\":\"POST\",\"route\":\"/v1/score\",\"target\":\"/v1/score?explain=1\","
          "\"remote\":\"203.0.113.9:51234\",\"status\":200,\"latency_us\":1830,"
          "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"transaction_id\":\"tx-1\","
          "\"action\":\"REVIEW\",\"degraded\":true,\"degraded_reason\":\"model_timeout\"}",
          // Empty fields and degraded=false are left out; status and latency_us never are.
          "{\"ts\":\"2026-11-30T12:34:57.123457Z\",\"level\":\"warn\",\"msg\":\"request\","
          "\"method\":\"POST\",\"route\":\"/v1/score\",\"status\":400,\"latency_us\":0,"
          "\"error_code\":\"INVALID_ARGUMENT\",\"error_message\":\"amount: not a number\"}"));
  EXPECT_EQ(log->written(), 2u);
  EXPECT_EQ(log->sampled_out(), 0u);
}

TEST_F(RequestLogTest, TimestampsAreUtcWithMicroseconds) {
  std::unique_ptr<RequestLog> log = Open(1);
  ASSERT_NE(log, nullptr);
  // Each instant, with the reason it is an edge case.
  clock_.Set(FromUnixMicros(0));  // the epoch
  log->Event("info", "a");
  clock_.Set(FromUnixMicros(951'782'400'000'001));  // 2000-02-29, a leap day, 1 us past midnight
  log->Event("info", "b");
  clock_.Set(FromUnixMicros(-1));  // before the epoch: floors to the previous day
  log->Event("info", "c");
  clock_.Set(FromUnixMicros(253'402'300'799'999'999));  // the last microsecond of year 9999
  log->Event("info", "d");
  log->Flush();
  std::vector<std::string> ts;
  for (const nlohmann::json& line : ReadLines()) ts.push_back(line.value("ts", ""));
  EXPECT_THAT(ts, ElementsAre("1970-01-01T00:00:00.000000Z", "2000-02-29T00:00:00.000001Z",
                              "1969-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"));
}

TEST_F(RequestLogTest, LogsEveryFailureAndDegradationWhateverTheRate) {
  std::unique_ptr<RequestLog> log = Open(0);
  ASSERT_NE(log, nullptr);
  const std::vector<std::string> trace_ids = RandomTraceIds(3000, 7);
  // Status, degraded, and the level each must be logged at.
  struct Case {
    int status;
    bool degraded;
    const char* level;
  };
  const Case cases[] = {
      {400, false, "warn"},  {404, false, "warn"},  {429, false, "warn"}, {499, false, "warn"},
      {500, false, "error"}, {503, false, "error"}, {200, true, "warn"},  {201, true, "warn"},
      {503, true, "error"},  // a 5xx stays an error even when also degraded
  };
  size_t expected = 0;
  for (size_t i = 0; i < trace_ids.size(); ++i) {
    const Case& c = cases[i % std::size(cases)];
    log->Log({.trace_id = trace_ids[i], .status = c.status, .degraded = c.degraded});
    log->Log({.status = c.status, .degraded = c.degraded});  // without trace id too
    expected += 2;
  }
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  ASSERT_EQ(lines.size(), expected);
  for (size_t i = 0; i < lines.size(); ++i) {
    const Case& c = cases[(i / 2) % std::size(cases)];
    EXPECT_EQ(lines[i].at("status"), c.status) << i;
    EXPECT_EQ(lines[i].at("level"), c.level) << i;
    EXPECT_EQ(lines[i].contains("degraded"), c.degraded) << i;
  }
  EXPECT_EQ(log->written(), expected);
  EXPECT_EQ(log->sampled_out(), 0u);
}

TEST_F(RequestLogTest, SamplesOnePercentOfSuccessfulRequests) {
  std::unique_ptr<RequestLog> log = Open(0.01);
  ASSERT_NE(log, nullptr);
  constexpr size_t kRequests = 20'000;
  for (const std::string& trace_id : RandomTraceIds(kRequests, 42)) {
    log->Log({.route = "/v1/score", .trace_id = trace_id, .status = 200});
  }
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  // Binomial(20000, 0.01): mean 200, standard deviation sqrt(20000 * 0.01 * 0.99) = 14.07.
  // +-5 standard deviations (130..270) fails a correct sampler with probability below 1e-6,
  // and catches a rate off by a third, or a sampler that takes everything or nothing.
  EXPECT_GE(lines.size(), 130u);
  EXPECT_LE(lines.size(), 270u);
  for (const nlohmann::json& line : lines) EXPECT_EQ(line.at("level"), "info");
  EXPECT_EQ(log->written(), lines.size());
  EXPECT_EQ(log->written() + log->sampled_out(), kRequests);
}

TEST_F(RequestLogTest, RateZeroLogsNoSuccessAndRateOneLogsAll) {
  std::unique_ptr<RequestLog> none = Open(0, "none.jsonl");
  std::unique_ptr<RequestLog> all = Open(1, "all.jsonl");
  ASSERT_NE(none, nullptr);
  ASSERT_NE(all, nullptr);
  const std::vector<std::string> trace_ids = RandomTraceIds(1000, 3);
  for (const std::string& trace_id : trace_ids) {
    for (RequestLog* log : {none.get(), all.get()}) {
      log->Log({.trace_id = trace_id, .status = 200});
      log->Log({.status = 204});
    }
  }
  none->Flush();
  all->Flush();
  EXPECT_EQ(ReadLines("none.jsonl").size(), 0u);
  EXPECT_EQ(none->sampled_out(), 2000u);
  EXPECT_EQ(ReadLines("all.jsonl").size(), 2000u);
  EXPECT_EQ(all->written(), 2000u);
  EXPECT_EQ(all->sampled_out(), 0u);
}

TEST_F(RequestLogTest, SameTraceIdSameDecisionInEveryInstance) {
  // Two logs stand for two services (or two restarts) sampling the same traces.
  std::unique_ptr<RequestLog> a = Open(0.1, "a.jsonl");
  std::unique_ptr<RequestLog> b = Open(0.1, "b.jsonl");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::vector<std::string> trace_ids = RandomTraceIds(2000, 11);
  for (const std::string& trace_id : trace_ids) {
    a->Log({.trace_id = trace_id, .status = 200});
    a->Log({.trace_id = trace_id, .status = 200});  // the same trace again: the same decision
    b->Log({.trace_id = trace_id, .status = 200});
  }
  a->Flush();
  b->Flush();
  std::vector<std::string> in_a, in_b;
  for (const nlohmann::json& line : ReadLines("a.jsonl"))
    in_a.push_back(line.at("trace_id").get<std::string>());
  for (const nlohmann::json& line : ReadLines("b.jsonl"))
    in_b.push_back(line.at("trace_id").get<std::string>());
  ASSERT_EQ(in_a.size(), 2 * in_b.size());
  for (size_t i = 0; i < in_b.size(); ++i) {
    EXPECT_EQ(in_a[2 * i], in_b[i]);
    EXPECT_EQ(in_a[2 * i + 1], in_b[i]);
  }
  EXPECT_GT(in_b.size(), 100u) << "about 200 of 2000 at 10 %";
  EXPECT_LT(in_b.size(), 300u);
}

TEST(RequestLogSampling, DecisionIsAFixedFunctionOfTheTraceId) {
  // Pinned values of the documented formula: a change of hash would silently make vigil disagree
  // with every other service (and with older vigil) on which traces are logged. Each u =
  // (fmix64(fnv1a64(id)) >> 11) * 2^-53 was computed independently (Python, arbitrary precision).
  struct Pinned {
    const char* trace_id;
    double u;
  };
  for (const Pinned& p : {Pinned{"", 0.93676944839044},
                          Pinned{"4bf92f3577b34da6a3ce929d0e0e4736", 0.9000390389919163},
                          Pinned{"0af7651916cd43dd8448eb211c80319c", 0.7365506762199855},
                          Pinned{"00000000000000000000000000000006", 0.0009739719055416041}}) {
    EXPECT_FALSE(RequestLog::SampledByTraceId(p.trace_id, p.u)) << p.trace_id << ": u < rate";
    EXPECT_TRUE(RequestLog::SampledByTraceId(p.trace_id, std::nextafter(p.u, 1.0))) << p.trace_id;
  }
  // Monotone in the rate: sampled at r implies sampled at every r' > r; never at 0, always at 1.
  for (const std::string& id : RandomTraceIds(2000, 5)) {
    EXPECT_FALSE(RequestLog::SampledByTraceId(id, 0));
    EXPECT_TRUE(RequestLog::SampledByTraceId(id, 1));
    bool before = false;
    for (double rate : {0.001, 0.01, 0.05, 0.1, 0.5, 0.9}) {
      const bool now = RequestLog::SampledByTraceId(id, rate);
      EXPECT_TRUE(now || !before) << id << " at " << rate;
      before = now;
    }
  }
}

TEST_F(RequestLogTest, UntracedRequestsAreSampledByACounter) {
  std::unique_ptr<RequestLog> log = Open(0.1);
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 1000; ++i) log->Log({.target = absl::StrCat("/r", i), .status = 200});
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  // Exactly every tenth: the 10th, 20th, ... (targets /r9, /r19, ...).
  ASSERT_EQ(lines.size(), 100u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].at("target"), absl::StrCat("/r", 10 * i + 9));
  }
  EXPECT_EQ(log->sampled_out(), 900u);
}

TEST_F(RequestLogTest, EscapesEveryStringAndKeepsOneObjectPerLine) {
  std::unique_ptr<RequestLog> log = Open(1);
  ASSERT_NE(log, nullptr);
  const std::string nasty = std::string("quote\" back\\slash\nnew\rline\ttab\x01\x1f nul") +
                            std::string(1, '\0') + " end";
  log->Log({.target = nasty, .error_message = "line1\nline2 \"q\"", .status = 500});
  log->Log({.target = "bad utf-8 \xff\xfe here", .status = 200});
  log->Event("warn", "breaker\nopened \"now\"", {{"reason", nasty}, {"k\"ey\n", "v"}});
  log->Flush();
  const std::string text = testing::ReadFile(Path("log.jsonl"));
  const std::vector<nlohmann::json> lines = ReadLines();
  ASSERT_EQ(lines.size(), 3u) << "a newline inside a value must not split its line:\n" << text;
  EXPECT_EQ(lines[0].at("target"), nasty);
  EXPECT_EQ(lines[0].at("error_message"), "line1\nline2 \"q\"");
  EXPECT_EQ(lines[1].at("target"), "bad utf-8 \xef\xbf\xbd\xef\xbf\xbd here")
      << "invalid UTF-8 becomes U+FFFD, so the line stays valid JSON";
  EXPECT_EQ(lines[2].at("msg"), "breaker\nopened \"now\"");
  EXPECT_EQ(lines[2].at("reason"), nasty);
  EXPECT_EQ(lines[2].at("k\"ey\n"), "v");
  EXPECT_THAT(text, AllOf(HasSubstr("\\u0001"), HasSubstr("\\u001f"), HasSubstr("\\u0000"),
                          HasSubstr("\\n"), HasSubstr("\\\"")));
}

TEST_F(RequestLogTest, EventsAreAlwaysWritten) {
  std::unique_ptr<RequestLog> log = Open(0);
  ASSERT_NE(log, nullptr);
  log->Event("info", "listening", {{"address", "127.0.0.1:8080"}, {"io_threads", "2"}});
  log->Event("warn", "breaker opened");
  log->Event("debug", "policy activated", {{"version", "7"}});
  // Reserved keys cannot shadow the line's own.
  log->Event("error", "model rejected", {{"msg", "theirs"}, {"ts", "x"}, {"level", "y"}});
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], nlohmann::json::parse(R"({"ts":"2026-11-30T12:34:56.123456Z",
      "level":"info","msg":"listening","address":"127.0.0.1:8080","io_threads":"2"})"));
  EXPECT_EQ(lines[1].at("level"), "warn");
  EXPECT_EQ(lines[1].size(), 3u) << "ts, level, msg and nothing else";
  EXPECT_EQ(lines[2].at("level"), "debug") << "events of every level are written";
  EXPECT_EQ(lines[2].at("version"), "7");
  EXPECT_EQ(lines[3], nlohmann::json::parse(R"({"ts":"2026-11-30T12:34:56.123456Z",
      "level":"error","msg":"model rejected","field_msg":"theirs","field_ts":"x",
      "field_level":"y"})"));
  EXPECT_EQ(log->written(), 4u);
}

// Sheds are counted, not logged one by one: the first of a burst is told at once, the rest at
// most once per shed_interval, with the count by where they were shed.
TEST_F(RequestLogTest, ShedsAreSummarizedAtMostOncePerIntervalAtWarn) {
  std::unique_ptr<RequestLog> log = Open(1);
  ASSERT_NE(log, nullptr);
  log->Shed("workers");  // the first: a line at once
  for (int i = 0; i < 999; ++i) log->Shed(i % 3 == 0 ? "batcher" : "workers");
  log->ReportShed();  // the interval (10 s) has not passed
  clock_.Advance(std::chrono::seconds(9));
  log->Shed("workers");
  log->ReportShed();
  clock_.Advance(std::chrono::seconds(1));
  log->ReportShed();  // 10 s since the first line: the 1,000 since are told
  log->ReportShed();  // nothing new
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], nlohmann::json::parse(R"({"ts":"2026-11-30T12:34:56.123456Z",
      "level":"warn","msg":"requests shed","count":"1","interval_ms":"10000",
      "workers":"1"})"));
  EXPECT_EQ(lines[1], nlohmann::json::parse(R"({"ts":"2026-11-30T12:35:06.123456Z",
      "level":"warn","msg":"requests shed","count":"1000","interval_ms":"10000",
      "workers":"667","batcher":"333"})"));
  EXPECT_EQ(log->shed(), 1001u);
  EXPECT_EQ(log->written(), 2u);
}

TEST_F(RequestLogTest, LinesReachTheFileWithoutFlushForWarningsAndOnDestruction) {
  std::unique_ptr<RequestLog> log = Open(1);
  ASSERT_NE(log, nullptr);
  log->Log({.status = 503});
  EXPECT_EQ(ReadLines().size(), 1u) << "error lines are flushed at once";
  log->Log({.status = 200});
  log.reset();
  EXPECT_EQ(ReadLines().size(), 2u) << "the destructor flushes";
}

TEST_F(RequestLogTest, AppendsToAnExistingFileAndCreatesItsDirectory) {
  {
    std::unique_ptr<RequestLog> log = Open(1, "sub/dir/log.jsonl");
    ASSERT_NE(log, nullptr);
    log->Event("info", "first run");
  }
  {
    std::unique_ptr<RequestLog> log = Open(1, "sub/dir/log.jsonl");
    ASSERT_NE(log, nullptr);
    log->Event("info", "second run");
  }
  const std::vector<nlohmann::json> lines = ReadLines("sub/dir/log.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].at("msg"), "first run");
  EXPECT_EQ(lines[1].at("msg"), "second run");
}

TEST_F(RequestLogTest, InstancesDoNotTouchSpdlogsRegistry) {
  std::unique_ptr<RequestLog> a = Open(1, "a.jsonl");
  std::unique_ptr<RequestLog> b = Open(1, "b.jsonl");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(spdlog::get("vigil_request_log"), nullptr);
  a->Event("info", "to a");
  b->Event("info", "to b");
  a.reset();
  b.reset();
  ASSERT_EQ(ReadLines("a.jsonl").size(), 1u);
  ASSERT_EQ(ReadLines("b.jsonl").size(), 1u);
  EXPECT_EQ(ReadLines("a.jsonl")[0].at("msg"), "to a");
  EXPECT_EQ(ReadLines("b.jsonl")[0].at("msg"), "to b");
}

TEST_F(RequestLogTest, RejectsBadOptions) {
  for (double rate : {-0.01, 1.01, std::nan("")}) {
    RequestLogOptions options;
    options.sample_rate = rate;
    options.path = Path("log.jsonl");
    EXPECT_THAT(RequestLog::Create(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sample_rate")))
        << rate;
  }
  RequestLogOptions options;
  options.path = dir_;  // a directory cannot be opened for appending
  EXPECT_THAT(RequestLog::Create(options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(dir_)));
  { std::ofstream(Path("file")) << "x"; }
  options.path = Path("file/log.jsonl");  // under a regular file
  EXPECT_THAT(RequestLog::Create(options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("file/log.jsonl")));
}

TEST_F(RequestLogTest, ConcurrentWritersNeverInterleaveLines) {
  std::unique_ptr<RequestLog> log = Open(0);
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, t] {
      const std::string message(200, static_cast<char>('a' + t));  // long enough to tear
      for (int i = 0; i < kPerThread; ++i) {
        log->Log({.error_message = message, .status = 500});
        log->Log({.status = 200});  // sampled out
      }
    });
  }
  for (std::thread& t : threads) t.join();
  log->Flush();
  const std::vector<nlohmann::json> lines = ReadLines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  for (const nlohmann::json& line : lines) {
    const std::string message = line.value("error_message", "");
    ASSERT_EQ(message.size(), 200u);
    EXPECT_EQ(message, std::string(200, message[0]));
  }
  EXPECT_EQ(log->written(), static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(log->sampled_out(), static_cast<uint64_t>(kThreads * kPerThread));
}

TEST(RequestLogStderr, WritesToStderrWhenNoPathIsGiven) {
  testing::FakeClock clock(FromUnixMicros(kNowMicros));
  RequestLogOptions options;
  options.clock = &clock;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RequestLog> log, RequestLog::Create(options));
  ::testing::internal::CaptureStderr();
  log->Event("info", "started", {{"version", "0.1.0"}});
  log->Flush();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "{\"ts\":\"2026-11-30T12:34:56.123456Z\",\"level\":\"info\",\"msg\":\"started\","
            "\"version\":\"0.1.0\"}\n");
}

}  // namespace
}  // namespace vigil
