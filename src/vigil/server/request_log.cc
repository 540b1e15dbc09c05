#include "vigil/server/request_log.h"

#include <cerrno>
#include <cmath>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spdlog/common.h"
#include "spdlog/logger.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "vigil/common/json_text.h"

namespace vigil {
namespace {

// Lines are short; one allocation covers nearly all of them.
constexpr size_t kLineReserve = 512;

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// MurmurHash3's fmix64: every input bit affects every output bit.
uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

spdlog::level::level_enum SpdlogLevel(std::string_view level) {
  if (level == "error") return spdlog::level::err;
  if (level == "critical") return spdlog::level::critical;
  if (level == "warn") return spdlog::level::warn;
  if (level == "debug") return spdlog::level::debug;
  if (level == "trace") return spdlog::level::trace;
  return spdlog::level::info;
}

// "2026-11-30T12:34:56.123456Z".
void AppendTimestamp(UtcTime t, std::string* out) {
  using std::chrono::days;
  const std::chrono::sys_days day = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd(day);
  const std::chrono::hh_mm_ss<std::chrono::microseconds> time(t - day);
  char buf[48];
  const int n = std::snprintf(
      buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
      static_cast<int>(time.seconds().count()), static_cast<long long>(time.subseconds().count()));
  out->append(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

// ,"key":"value" when value is not empty.
void AppendField(std::string_view key, std::string_view value, std::string* line) {
  if (value.empty()) return;
  line->push_back(',');
  AppendJsonString(key, line);
  line->push_back(':');
  AppendJsonString(value, line);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RequestLog>> RequestLog::Create(RequestLogOptions options) {
  if (!(options.sample_rate >= 0 && options.sample_rate <= 1)) {  // NaN fails both
    return absl::InvalidArgumentError(
        absl::StrCat("request log: sample_rate must be in [0, 1], got ", options.sample_rate));
  }
  spdlog::sink_ptr sink;
  if (options.path.empty()) {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  } else {
    errno = 0;
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.path, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex&) {
      // spdlog throws spdlog_ex after its failed fopen, errno still that of the fopen.
      const int error = errno != 0 ? errno : EIO;
      return absl::ErrnoToStatus(
          error, absl::StrCat("request log: cannot open '", options.path, "' for appending"));
    }
  }
  // Constructed directly, not through spdlog's factories, so it is not registered globally.
  auto logger = std::make_shared<spdlog::logger>("vigil_request_log", std::move(sink));
  logger->set_pattern("%v");  // the lines are complete JSON; spdlog adds only the newline
  logger->set_level(spdlog::level::trace);  // RequestLog decides what is written
  logger->flush_on(spdlog::level::warn);
  return std::unique_ptr<RequestLog>(new RequestLog(options, std::move(logger)));
}

RequestLog::RequestLog(const RequestLogOptions& options, std::shared_ptr<spdlog::logger> logger)
    : sample_rate_(options.sample_rate),
      clock_(options.clock != nullptr ? *options.clock : RealClock()),
      logger_(std::move(logger)),
      shed_interval_(options.shed_interval) {}

RequestLog::~RequestLog() { Flush(); }

bool RequestLog::SampledByTraceId(std::string_view trace_id, double sample_rate) {
  // The top 53 bits as a double in [0, 1), exact.
  const double u = static_cast<double>(Fmix64(Fnv1a64(trace_id)) >> 11) * 0x1p-53;
  return u < sample_rate;
}

void RequestLog::Log(const RequestLogEntry& e) {
  if (!e.shed.empty()) return Shed(e.shed);
  std::string_view level;
  if (e.status >= 500) {
    level = "error";
  } else if (e.status >= 400 || e.degraded) {
    level = "warn";
  } else {
    bool sampled;
    if (!e.trace_id.empty()) {
      sampled = SampledByTraceId(e.trace_id, sample_rate_);
    } else {
      // The n-th untraced request is logged when floor(n * rate) steps up: exactly
      // floor(count * rate) of the first count requests, evenly spread.
      const uint64_t n = untraced_requests_.fetch_add(1, std::memory_order_relaxed);
      sampled = std::floor(static_cast<double>(n + 1) * sample_rate_) >
                std::floor(static_cast<double>(n) * sample_rate_);
    }
    if (!sampled) {
      sampled_out_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    level = "info";
  }
  std::string line;
  line.reserve(kLineReserve);
  AppendHead(level, "request", &line);
  AppendField("method", e.method, &line);
  AppendField("route", e.route, &line);
  AppendField("target", e.target, &line);
  AppendField("remote", e.remote, &line);
  absl::StrAppend(&line, ",\"status\":", e.status, ",\"latency_us\":", e.latency.count());
  AppendField("trace_id", e.trace_id, &line);
  AppendField("transaction_id", e.transaction_id, &line);
  AppendField("action", e.action, &line);
  if (e.degraded) line.append(",\"degraded\":true");
  AppendField("degraded_reason", e.degraded_reason, &line);
  AppendField("error_code", e.error_code, &line);
  AppendField("error_message", e.error_message, &line);
  AppendField("actor", e.actor, &line);
  AppendField("token_id", e.token_id, &line);
  line.push_back('}');
  Write(level, line);
}

void RequestLog::Event(std::string_view level, std::string_view message,
                       const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string line;
  line.reserve(kLineReserve);
  AppendHead(level, message, &line);
  for (const auto& [key, value] : fields) {
    line.push_back(',');
    if (key == "ts" || key == "level" || key == "msg") {
      AppendJsonString(absl::StrCat("field_", key), &line);
    } else {
      AppendJsonString(key, &line);
    }
    line.push_back(':');
    AppendJsonString(value, &line);
  }
  line.push_back('}');
  Write(level, line);
}

void RequestLog::Shed(std::string_view where) {
  shed_.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::pair<std::string, std::string>> fields;
  {
    absl::MutexLock lock(&shed_mu_);
    ++shed_pending_total_;
    bool counted = false;
    for (auto& [name, n] : shed_pending_) {
      if (name == where) {
        ++n;
        counted = true;
        break;
      }
    }
    if (!counted) shed_pending_.emplace_back(std::string(where), 1);
    if (!TakeShedSummary(&fields)) return;
  }
  Event("warn", "requests shed", fields);
}

void RequestLog::ReportShed() {
  std::vector<std::pair<std::string, std::string>> fields;
  {
    absl::MutexLock lock(&shed_mu_);
    if (!TakeShedSummary(&fields)) return;
  }
  Event("warn", "requests shed", fields);
}

bool RequestLog::TakeShedSummary(std::vector<std::pair<std::string, std::string>>* fields) {
  if (shed_pending_total_ == 0) return false;
  const UtcTime now = clock_.Now();
  if (shed_logged_at_.has_value() && now - *shed_logged_at_ < shed_interval_) return false;
  fields->emplace_back("count", absl::StrCat(shed_pending_total_));
  fields->emplace_back("interval_ms", absl::StrCat(shed_interval_.count()));
  for (const auto& [name, n] : shed_pending_) fields->emplace_back(name, absl::StrCat(n));
  shed_pending_.clear();
  shed_pending_total_ = 0;
  shed_logged_at_ = now;
  return true;
}

void RequestLog::Flush() { logger_->flush(); }

void RequestLog::AppendHead(std::string_view level, std::string_view message,
                            std::string* line) const {
  line->append("{\"ts\":\"");
  AppendTimestamp(clock_.Now(), line);
  line->append("\",\"level\":");
  AppendJsonString(level, line);
  line->append(",\"msg\":");
  AppendJsonString(message, line);
}

void RequestLog::Write(std::string_view level, std::string_view line) {
  logger_->log(SpdlogLevel(level), spdlog::string_view_t(line.data(), line.size()));
  written_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace vigil
