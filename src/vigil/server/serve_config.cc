#include "vigil/server/serve_config.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "vigil/audit/log_hash.h"
#include "vigil/common/nearest_name.h"
#include "vigil/common/status_macros.h"
#include "vigil/core/transaction.h"
#include "yaml-cpp/yaml.h"

namespace vigil {
namespace {

class ConfigReader {
 public:
  explicit ConfigReader(std::string_view file) : file_(file) {}

  void Error(const YAML::Node& node, std::string_view message, std::string_view hint = {}) {
    const YAML::Mark m = node.Mark();
    std::string out = absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1, ": ",
                                   absl::string_view(message.data(), message.size()));
    if (!hint.empty())
      absl::StrAppend(&out, " (", absl::string_view(hint.data(), hint.size()), ")");
    errors_.push_back(std::move(out));
  }

  void Keys(const YAML::Node& map, const std::vector<std::string>& known, std::string_view what) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const std::string best = NearestName(key, known);
      Error(
          kv.first,
          absl::StrCat("unknown key '", key, "' in ", absl::string_view(what.data(), what.size())),
          best.empty() ? absl::StrCat("known: ", absl::StrJoin(known, ", "))
                       : absl::StrCat("did you mean '", best, "'?"));
    }
  }

  template <typename T>
  void Integer(const YAML::Node& node, const char* key, T* out, int64_t min, int64_t max) {
    int64_t v = 0;
    if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &v) || v < min || v > max) {
      Error(node, absl::StrCat("'", key, "' must be a whole number from ", min, " to ", max));
      return;
    }
    *out = static_cast<T>(v);
  }

  void Millis(const YAML::Node& node, const char* key, std::chrono::milliseconds* out, int64_t min,
              int64_t max) {
    int64_t v = 0;
    Integer(node, key, &v, min, max);
    *out = std::chrono::milliseconds(v);
  }

  void String(const YAML::Node& node, const char* key, std::string* out) {
    if (!node.IsScalar() || node.Scalar().empty()) {
      Error(node, absl::StrCat("'", key, "' must be a non-empty string"));
      return;
    }
    *out = node.Scalar();
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

drift::DriftWindowSpec* FindWindow(drift::DriftConfig& config, std::string_view name) {
  for (drift::DriftWindowSpec& w : config.windows) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

void ParseAudit(const YAML::Node& a, ConfigReader& r, ServeAuditConfig* out) {
  if (!a.IsMap()) {
    r.Error(a, "'audit' must be a mapping (durable_ack, signing_key, hash, ...)");
    return;
  }
  r.Keys(a,
         {"durable_ack", "signing_key", "hash", "tree_head_every", "tree_head_interval_ms",
          "group_max_records", "group_max_delay_us", "queue", "compress_records", "record_kek",
          "record_cipher", "records_per_data_key", "max_waiting", "max_wait_ms"},
         "audit");
  for (const auto& [key, field] : {std::pair{"durable_ack", &out->durable_ack},
                                   std::pair{"compress_records", &out->compress_records}}) {
    const YAML::Node n = a[key];
    if (!n) continue;
    bool v = true;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
      r.Error(n, absl::StrCat("'audit.", key, "' must be true or false"));
    } else {
      *field = v;
    }
  }
  if (const YAML::Node n = a["signing_key"]; n) r.String(n, "audit.signing_key", &out->signing_key);
  if (const YAML::Node n = a["hash"]; n) {
    std::string hash;
    r.String(n, "audit.hash", &hash);
    if (!hash.empty() && !audit::ParseHashAlgorithm(hash).ok()) {
      r.Error(n, "'audit.hash' must be sha256 or sm3");
    } else if (!hash.empty()) {
      out->hash = hash;
    }
  }
  if (const YAML::Node n = a["tree_head_every"]; n) {
    r.Integer(n, "audit.tree_head_every", &out->tree_head_every, 1, 100'000'000);
  }
  if (const YAML::Node n = a["tree_head_interval_ms"]; n) {
    r.Millis(n, "audit.tree_head_interval_ms", &out->tree_head_interval, 1, 86'400'000);
  }
  if (const YAML::Node n = a["group_max_records"]; n) {
    r.Integer(n, "audit.group_max_records", &out->group_max_records, 1, 1'000'000);
  }
  if (const YAML::Node n = a["group_max_delay_us"]; n) {
    int64_t us = 0;
    r.Integer(n, "audit.group_max_delay_us", &us, 0, 1'000'000);
    out->group_max_delay = std::chrono::microseconds(us);
  }
  if (const YAML::Node n = a["queue"]; n) r.Integer(n, "audit.queue", &out->queue, 1, 100'000'000);
  if (const YAML::Node n = a["max_waiting"]; n) {
    r.Integer(n, "audit.max_waiting", &out->max_waiting, 0, 100'000'000);
  }
  if (const YAML::Node n = a["max_wait_ms"]; n) {
    int64_t ms = 0;
    r.Integer(n, "audit.max_wait_ms", &ms, 0, 60'000);
    out->max_wait = std::chrono::milliseconds(ms);
  }
  if (const YAML::Node n = a["record_kek"]; n) r.String(n, "audit.record_kek", &out->record_kek);
  if (const YAML::Node n = a["record_cipher"]; n) {
    r.String(n, "audit.record_cipher", &out->record_cipher);
  }
  if (const YAML::Node n = a["records_per_data_key"]; n) {
    r.Integer(n, "audit.records_per_data_key", &out->records_per_data_key, 1, 1'000'000'000'000);
  }
}

void ParseTls(const YAML::Node& t, ConfigReader& r, ServeTlsConfig* out) {
  if (!t.IsMap()) {
    r.Error(t, "'tls' must be a mapping (cert, key, client_ca, ciphers, ciphersuites, "
               "min_version)");
    return;
  }
  r.Keys(t, {"cert", "key", "client_ca", "ciphers", "ciphersuites", "min_version"}, "tls");
  for (const auto& [key, field] :
       {std::pair{"cert", &out->cert}, std::pair{"key", &out->key},
        std::pair{"client_ca", &out->client_ca}, std::pair{"ciphers", &out->ciphers},
        std::pair{"ciphersuites", &out->ciphersuites},
        std::pair{"min_version", &out->min_version}}) {
    if (const YAML::Node n = t[key]; n) r.String(n, absl::StrCat("tls.", key).c_str(), field);
  }
}

void ParseAuth(const YAML::Node& a, ConfigReader& r, ServeAuthConfig* out) {
  if (!a.IsMap()) {
    r.Error(a, "'auth' must be a mapping (mode, certificate_roles)");
    return;
  }
  r.Keys(a, {"mode", "certificate_roles"}, "auth");
  if (const YAML::Node n = a["mode"]; n) r.String(n, "auth.mode", &out->mode);
  if (const YAML::Node n = a["certificate_roles"]; n) {
    if (!n.IsMap()) {
      r.Error(n, "'auth.certificate_roles' must map certificate subjects to roles");
    } else {
      for (const auto& kv : n) {
        std::string role;
        r.String(kv.second, "auth.certificate_roles", &role);
        if (!role.empty()) out->certificate_roles.emplace_back(kv.first.Scalar(), role);
      }
    }
  }
}

void ParseState(const YAML::Node& st, ConfigReader& r, ServeStateConfig* out) {
  if (!st.IsMap()) {
    r.Error(st, "'state' must be a mapping (pseudonym_key, pseudonym_hash)");
    return;
  }
  r.Keys(st, {"pseudonym_key", "pseudonym_hash"}, "state");
  if (const YAML::Node n = st["pseudonym_key"]; n) {
    r.String(n, "state.pseudonym_key", &out->pseudonym_key);
  }
  if (const YAML::Node n = st["pseudonym_hash"]; n) {
    r.String(n, "state.pseudonym_hash", &out->pseudonym_hash);
  }
}

void ParseScreening(const YAML::Node& sc, ConfigReader& r, ServeScreeningConfig* out) {
  if (!sc.IsMap()) {
    r.Error(sc, "'screening' must be a mapping (lists, reload_seconds, min_score)");
    return;
  }
  r.Keys(sc, {"lists", "reload_seconds", "min_score"}, "screening");
  if (const YAML::Node n = sc["lists"]; n) {
    if (!n.IsSequence()) {
      r.Error(n, "'screening.lists' must be a list of list files or OFAC folders");
    } else {
      for (const YAML::Node& path : n) {
        std::string value;
        r.String(path, "screening.lists", &value);
        if (!value.empty()) out->lists.push_back(std::move(value));
      }
    }
  }
  if (const YAML::Node n = sc["reload_seconds"]; n) {
    int64_t seconds = 0;
    r.Integer(n, "screening.reload_seconds", &seconds, 0, 86'400);
    out->reload_interval = std::chrono::seconds(seconds);
  }
  if (const YAML::Node n = sc["min_score"]; n) {
    double v = -1;
    if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &v) || !(v >= 0 && v <= 1)) {
      r.Error(n, "'screening.min_score' must be a number from 0 to 1");
    } else {
      out->min_score = v;
    }
  }
}

void ParseGpu(const YAML::Node& g, ConfigReader& r, ServeGpuConfig* out) {
  if (!g.IsMap()) {
    r.Error(g, "'gpu' must be a mapping (enabled, device, min_rows, timeout_ms)");
    return;
  }
  r.Keys(g, {"enabled", "device", "min_rows", "timeout_ms"}, "gpu");
  if (const YAML::Node n = g["enabled"]; n) {
    bool enabled = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, enabled)) {
      r.Error(n, "'gpu.enabled' must be true or false");
    } else {
      out->enabled = enabled;
    }
  }
  if (const YAML::Node n = g["device"]; n) r.Integer(n, "gpu.device", &out->device, 0, 1023);
  if (const YAML::Node m = g["min_rows"]; m) {
    if (!m.IsMap()) {
      r.Error(m, "'gpu.min_rows' must map the classes (P0, P1, P2) to a row count or never");
    } else {
      r.Keys(m, {"P0", "P1", "P2"}, "gpu.min_rows");
      for (size_t c = 0; c < out->min_rows.size(); ++c) {
        const std::string name(PriorityName(static_cast<Priority>(c)));
        const YAML::Node n = m[name];
        if (!n) continue;
        uint64_t rows = 0;
        if (n.IsScalar() && n.Scalar() == "never") {
          out->min_rows[c] = BackendRouterConfig::kNever;
        } else if (n.IsScalar() && absl::SimpleAtoi(n.Scalar(), &rows) && rows >= 1 &&
                   rows <= 1'000'000'000) {
          out->min_rows[c] = static_cast<size_t>(rows);
        } else {
          r.Error(n, absl::StrCat("'gpu.min_rows.", name,
                                  "' must be a positive integer or never (rows, up to ",
                                  1'000'000'000, ")"));
        }
      }
    }
  }
  if (const YAML::Node n = g["timeout_ms"]; n) {
    // Milliseconds, fractions allowed (0.5: 500 us); the router counts in microseconds.
    double ms = -1;
    if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &ms) || !(ms >= 0.001 && ms <= 60'000)) {
      r.Error(n, "'gpu.timeout_ms' must be a number of milliseconds from 0.001 to 60000");
    } else {
      out->timeout = std::chrono::microseconds(std::llround(ms * 1000));
    }
  }
}

// `model:` a model file, or a mapping {file, ref, required}.
void ParseModel(const YAML::Node& m, ConfigReader& r, ServeConfig* out) {
  if (!m.IsMap()) {
    r.String(m, "model", &out->model);
    return;
  }
  r.Keys(m, {"file", "ref", "required"}, "model");
  if (const YAML::Node n = m["file"]; n) r.String(n, "model.file", &out->model);
  if (const YAML::Node n = m["ref"]; n) r.String(n, "model.ref", &out->model_ref);
  if (const YAML::Node n = m["required"]; n) {
    bool required = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, required)) {
      r.Error(n, "'model.required' must be true or false");
    } else {
      out->model_required = required;
    }
  }
}

// The same checks as the parser's, on the values as set (flags, tests).
absl::Status ValidateGpu(const ServeGpuConfig& g) {
  if (g.device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gpu.device must be a CUDA device ordinal (0 or more), not ", g.device));
  }
  for (size_t c = 0; c < g.min_rows.size(); ++c) {
    if (g.min_rows[c] == 0) {
      return absl::InvalidArgumentError(absl::StrCat("gpu.min_rows.",
                                                     PriorityName(static_cast<Priority>(c)),
                                                     " must be a positive integer or never"));
    }
  }
  if (g.timeout <= std::chrono::microseconds::zero()) {
    return absl::InvalidArgumentError("gpu.timeout_ms must be positive");
  }
  return absl::OkStatus();
}

// Who may move the monitor (docs/drift.md, "Who can move a window").
void ParseDriftBounds(const YAML::Node& d, ConfigReader& r, drift::DriftConfig* out) {
  if (const YAML::Node n = d["warmup_days"]; n) {
    int64_t days = 7;
    r.Integer(n, "drift.warmup_days", &days, 0, 365);
    out->warmup = std::chrono::hours(24 * days);
  }
  if (const YAML::Node n = d["min_dwell_minutes"]; n) {
    int64_t minutes = 15;
    r.Integer(n, "drift.min_dwell_minutes", &minutes, 0, 24 * 60);
    out->min_dwell = std::chrono::minutes(minutes);
  }
  if (const YAML::Node n = d["min_accounts"]; n) {
    r.Integer(n, "drift.min_accounts", &out->min_accounts, 1, 1'000'000);
  }
  if (const YAML::Node n = d["min_clients"]; n) {
    r.Integer(n, "drift.min_clients", &out->min_clients, 1, 10'000);
  }
  if (const YAML::Node n = d["account_cap_rows"]; n) {
    r.Integer(n, "drift.account_cap_rows", &out->account_cap_rows, 1, 1'000'000'000);
  }
  if (const YAML::Node n = d["client_cap_percent"]; n) {
    int64_t percent = 100;
    r.Integer(n, "drift.client_cap_percent", &percent, 1, 100);
    out->client_cap_share = static_cast<double>(percent) / 100;
  }
}

void ParseDrift(const YAML::Node& d, ConfigReader& r, ServeDriftConfig* out) {
  if (!d.IsMap()) {
    r.Error(d, "'drift' must be a mapping (profile, calibration, freeze, ...)");
    return;
  }
  r.Keys(d,
         {"enabled", "profile", "measured_null", "calibration", "freeze", "false_alarm_days",
          "short_window", "long_window", "min_rows", "queue", "exclude", "warmup_days",
          "min_dwell_minutes", "min_accounts", "min_clients", "account_cap_rows",
          "client_cap_percent"},
         "drift");
  ParseDriftBounds(d, r, &out->monitor);
  if (const YAML::Node n = d["profile"]; n) r.String(n, "drift.profile", &out->profile);
  if (const YAML::Node n = d["measured_null"]; n) {
    r.String(n, "drift.measured_null", &out->measured_null);
  }
  if (const YAML::Node n = d["calibration"]; n) {
    // YAML reads a bare `null` as the null value: that is the null calibration too.
    const std::string text = n.IsNull() ? "null" : n.IsScalar() ? n.Scalar() : "";
    absl::StatusOr<drift::DriftCalibration> calibration = drift::ParseDriftCalibration(text);
    if (calibration.ok()) {
      out->monitor.calibration = *calibration;
    } else {
      r.Error(n, "'drift.calibration' must be null or raw-preset");
    }
  }
  if (const YAML::Node n = d["enabled"]; n) {
    bool enabled = true;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, enabled)) {
      r.Error(n, "'drift.enabled' must be true or false");
    } else {
      out->enabled = enabled;
    }
  }
  if (const YAML::Node n = d["freeze"]; n) {
    bool freeze = true;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, freeze)) {
      r.Error(n, "'drift.freeze' must be true or false");
    } else {
      out->monitor.freeze_on_l3 = freeze;
    }
  }
  if (const YAML::Node n = d["false_alarm_days"]; n) {
    int64_t days = 30;
    r.Integer(n, "drift.false_alarm_days", &days, 1, 3650);
    out->monitor.false_alarm_period = std::chrono::hours(24 * days);
  }
  for (const char* name : {"short", "long"}) {
    const std::string key = absl::StrCat(name, "_window");
    if (const YAML::Node n = d[key]; n) {
      const std::string text = n.IsScalar() ? n.Scalar() : "";
      if (absl::Status s =
              drift::ParseDriftWindow(text, absl::StrCat("drift.", key), FindWindow(out->monitor, name));
          !s.ok()) {
        r.Error(n, std::string_view(s.message().data(), s.message().size()));
      }
    }
  }
  if (const YAML::Node n = d["min_rows"]; n) {
    r.Integer(n, "drift.min_rows", &out->monitor.min_rows, 1, 100'000'000);
  }
  if (const YAML::Node n = d["queue"]; n) {
    r.Integer(n, "drift.queue", &out->queue_rows, 1, 100'000'000);
  }
  if (const YAML::Node n = d["exclude"]; n) {
    // Features left out (seasonal ones); replaces the default list, [] watches every feature.
    if (!n.IsSequence()) {
      r.Error(n, "'drift.exclude' must be a list of feature names");
    } else {
      out->monitor.exclude.clear();
      for (const YAML::Node& name : n) {
        if (!name.IsScalar() || name.Scalar().empty()) {
          r.Error(name, "'drift.exclude' must hold feature names");
        } else {
          out->monitor.exclude.push_back(name.Scalar());
        }
      }
    }
  }
}

// The same checks as the parser's, on the values as set (flags, tests).
absl::Status ValidateScreening(const ServeScreeningConfig& s) {
  for (const std::string& list : s.lists) {
    if (list.empty()) return absl::InvalidArgumentError("screening.lists: an empty path");
  }
  if (s.reload_interval < std::chrono::seconds(0)) {
    return absl::InvalidArgumentError("screening.reload_seconds: must be >= 0");
  }
  if (!(s.min_score >= 0 && s.min_score <= 1)) {
    return absl::InvalidArgumentError("screening.min_score: must be from 0 to 1");
  }
  return absl::OkStatus();
}

absl::Status ValidateTransport(const ServeTlsConfig& tls, bool plaintext,
                               const ServeAuthConfig& auth) {
  if (tls.enabled()) {
    if (tls.cert.empty() || tls.key.empty()) {
      return absl::InvalidArgumentError("tls: give both tls.cert and tls.key (--tls-cert, --tls-key)");
    }
    if (plaintext) {
      return absl::InvalidArgumentError(
          "plaintext: true and a tls certificate contradict each other; drop one");
    }
    if (tls.min_version != "1.2" && tls.min_version != "1.3") {
      return absl::InvalidArgumentError(
          absl::StrCat("tls.min_version must be \"1.2\" or \"1.3\", not \"", tls.min_version,
                       "\""));
    }
  } else {
    if (!tls.client_ca.empty()) {
      return absl::InvalidArgumentError("tls.client_ca needs tls.cert and tls.key (mutual TLS)");
    }
    if (!plaintext) {
      return absl::InvalidArgumentError(
          "no TLS certificate: give tls.cert and tls.key (--tls-cert, --tls-key), or set "
          "plaintext: true (--plaintext) to serve plain HTTP on purpose, e.g. on loopback or "
          "behind a TLS-terminating proxy");
    }
  }
  if (auth.mode != "tokens" && auth.mode != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("auth.mode must be tokens or none, not \"", auth.mode, "\""));
  }
  if (!auth.certificate_roles.empty() && tls.client_ca.empty()) {
    return absl::InvalidArgumentError(
        "auth.certificate_roles needs mutual TLS (tls.client_ca): without it no client "
        "certificate is checked");
  }
  for (const auto& [subject, role] : auth.certificate_roles) {
    if (subject.empty()) {
      return absl::InvalidArgumentError("auth.certificate_roles: an empty certificate subject");
    }
    if (role != "scorer" && role != "policy-admin" && role != "auditor" && role != "admin") {
      return absl::InvalidArgumentError(absl::StrCat(
          "auth.certificate_roles[\"", subject, "\"]: \"", role,
          "\" is not a role (scorer, policy-admin, auditor, admin)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BatchPolicyConfig> BatcherPreset(std::string_view name) {
  if (name == "fast") return BatchPolicyConfig::Fast();
  if (name == "immediate") return BatchPolicyConfig::Immediate();
  if (name == "compliance") return BatchPolicyConfig::ComplianceGrade();
  return absl::InvalidArgumentError(absl::StrCat("unknown batcher preset '",
                                                 absl::string_view(name.data(), name.size()),
                                                 "' (fast, immediate or compliance)"));
}

absl::Status ParseListen(std::string_view listen, std::string* host, uint16_t* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat("listen '",
                                                   absl::string_view(listen.data(), listen.size()),
                                                   "': expected HOST:PORT, e.g. 127.0.0.1:8080"));
  }
  int64_t p = -1;
  const std::string_view port_text = listen.substr(colon + 1);
  if (!absl::SimpleAtoi(absl::string_view(port_text.data(), port_text.size()), &p) || p < 0 ||
      p > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("listen '",
                                                   absl::string_view(listen.data(), listen.size()),
                                                   "': the port must be a number from 0 to 65535"));
  }
  *host = std::string(listen.substr(0, colon));
  *port = static_cast<uint16_t>(p);
  return absl::OkStatus();
}

absl::StatusOr<ServeConfig> ServeConfig::Parse(std::string_view yaml, std::string_view file) {
  ServeConfig c;
  ConfigReader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat(absl::string_view(file.data(), file.size()), ":",
                                                   e.mark.line + 1, ":", e.mark.column + 1,
                                                   ": not valid YAML: ", e.msg));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(absl::string_view(file.data(), file.size()),
                                                   ": a configuration is a mapping of keys"));
  }
  r.Keys(root,
         {"listen", "data_dir", "policy", "model", "model_ref", "io_threads", "score_budget_ms",
          "idempotency_capacity", "limits", "batcher", "breaker", "gpu", "fx_rates", "lists",
          "workers", "log", "drift", "audit", "screening", "tls", "plaintext", "auth", "state",
          "max_future_skew_seconds"},
         "the configuration");
  if (const YAML::Node n = root["listen"]; n) {
    std::string listen;
    r.String(n, "listen", &listen);
    if (!listen.empty()) {
      if (absl::Status s = ParseListen(listen, &c.host, &c.port); !s.ok()) {
        r.Error(n, std::string_view(s.message().data(), s.message().size()));
      }
    }
  }
  if (const YAML::Node n = root["data_dir"]; n) r.String(n, "data_dir", &c.data_dir);
  if (const YAML::Node n = root["policy"]; n) r.String(n, "policy", &c.policy);
  if (const YAML::Node n = root["model"]; n) ParseModel(n, r, &c);
  if (const YAML::Node n = root["model_ref"]; n) r.String(n, "model_ref", &c.model_ref);
  if (const YAML::Node n = root["io_threads"]; n) r.Integer(n, "io_threads", &c.io_threads, 1, 256);
  if (const YAML::Node n = root["score_budget_ms"]; n) {
    r.Millis(n, "score_budget_ms", &c.score_budget, 1, 60'000);
  }
  if (const YAML::Node n = root["idempotency_capacity"]; n) {
    r.Integer(n, "idempotency_capacity", &c.idempotency_capacity, 0, 100'000'000);
  }
  if (const YAML::Node n = root["max_future_skew_seconds"]; n) {
    // At most a day: a larger bound would let one payment hold the watermark that far ahead.
    int64_t seconds = 0;
    r.Integer(n, "max_future_skew_seconds", &seconds, 0, 86'400);
    c.max_future_skew = std::chrono::seconds(seconds);
  }
  if (const YAML::Node l = root["limits"]; l) {
    r.Keys(l,
           {"body_bytes", "header_bytes", "request_timeout_ms", "idle_timeout_ms",
            "header_timeout_ms", "max_connections", "max_connections_per_client",
            "max_unauthenticated_share", "batch_size"},
           "limits");
    if (const YAML::Node n = l["body_bytes"]; n) {
      r.Integer(n, "body_bytes", &c.limits.body_bytes, 256, 64 << 20);
    }
    if (const YAML::Node n = l["header_bytes"]; n) {
      r.Integer(n, "header_bytes", &c.limits.header_bytes, 256, 1 << 20);
    }
    if (const YAML::Node n = l["request_timeout_ms"]; n) {
      r.Millis(n, "request_timeout_ms", &c.limits.request_timeout, 1, 600'000);
    }
    if (const YAML::Node n = l["idle_timeout_ms"]; n) {
      r.Millis(n, "idle_timeout_ms", &c.limits.idle_timeout, 1, 3'600'000);
    }
    if (const YAML::Node n = l["max_connections"]; n) {
      r.Integer(n, "max_connections", &c.limits.max_connections, 1, 1'000'000);
    }
    if (const YAML::Node n = l["header_timeout_ms"]; n) {
      r.Millis(n, "header_timeout_ms", &c.limits.header_timeout, 1, 600'000);
    }
    if (const YAML::Node n = l["max_connections_per_client"]; n) {
      r.Integer(n, "max_connections_per_client", &c.limits.max_connections_per_client, 1,
                1'000'000);
    }
    if (const YAML::Node n = l["max_unauthenticated_share"]; n) {
      double v = -1;
      if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &v) || !(v > 0 && v <= 1)) {
        r.Error(n, "'max_unauthenticated_share' must be a number above 0, at most 1");
      } else {
        c.limits.max_unauthenticated_share = v;
      }
    }
    if (const YAML::Node n = l["batch_size"]; n) {
      r.Integer(n, "batch_size", &c.limits.batch_size, 1, 100'000);
    }
  }
  if (const YAML::Node b = root["batcher"]; b) {
    r.Keys(b, {"preset"}, "batcher");
    if (const YAML::Node n = b["preset"]; n) {
      r.String(n, "preset", &c.batcher_preset);
      if (absl::StatusOr<BatchPolicyConfig> preset = BatcherPreset(c.batcher_preset);
          preset.ok()) {
        c.batcher = *preset;
      } else if (!c.batcher_preset.empty()) {
        r.Error(n, absl::StrCat("unknown batcher preset '", c.batcher_preset, "'"),
                "fast, immediate or compliance");
      }
    }
  }
  if (const YAML::Node b = root["breaker"]; b) {
    r.Keys(b, {"failure_threshold", "budget_ms", "open_ms"}, "breaker");
    if (const YAML::Node n = b["failure_threshold"]; n) {
      r.Integer(n, "failure_threshold", &c.breaker.failure_threshold, 1, 1'000'000);
    }
    if (const YAML::Node n = b["budget_ms"]; n) {
      std::chrono::milliseconds ms{0};
      r.Millis(n, "budget_ms", &ms, 1, 60'000);
      c.breaker.budget = ms;
    }
    if (const YAML::Node n = b["open_ms"]; n) {
      std::chrono::milliseconds ms{0};
      r.Millis(n, "open_ms", &ms, 1, 3'600'000);
      c.breaker.open_for = ms;
    }
  }
  if (const YAML::Node g = root["gpu"]; g) ParseGpu(g, r, &c.gpu);
  if (const YAML::Node n = root["fx_rates"]; n) r.String(n, "fx_rates", &c.fx_rates);
  if (const YAML::Node n = root["lists"]; n) r.String(n, "lists", &c.lists);
  if (const YAML::Node w = root["workers"]; w) {
    r.Keys(w, {"threads", "queue", "max_queue_delay_ms"}, "workers");
    if (const YAML::Node n = w["threads"]; n) r.Integer(n, "threads", &c.worker_threads, 1, 4096);
    if (const YAML::Node n = w["queue"]; n) r.Integer(n, "queue", &c.worker_queue, 1, 10'000'000);
    if (const YAML::Node n = w["max_queue_delay_ms"]; n) {
      r.Millis(n, "max_queue_delay_ms", &c.worker_max_queue_delay, 1, 60'000);
    }
  }
  if (const YAML::Node l = root["log"]; l) {
    r.Keys(l, {"path", "sample_rate"}, "log");
    if (const YAML::Node n = l["path"]; n) r.String(n, "path", &c.log_path);
    if (const YAML::Node n = l["sample_rate"]; n) {
      double v = -1;
      if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &v) || !(v >= 0 && v <= 1)) {
        r.Error(n, "'sample_rate' must be a number from 0 to 1");
      } else {
        c.log_sample_rate = v;
      }
    }
  }
  if (const YAML::Node d = root["drift"]; d) ParseDrift(d, r, &c.drift);
  if (const YAML::Node a = root["audit"]; a) ParseAudit(a, r, &c.audit);
  if (const YAML::Node sc = root["screening"]; sc) ParseScreening(sc, r, &c.screening);
  if (const YAML::Node t = root["tls"]; t) ParseTls(t, r, &c.tls);
  if (const YAML::Node n = root["plaintext"]; n) {
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, c.plaintext)) {
      r.Error(n, "'plaintext' must be true or false");
    }
  }
  if (const YAML::Node a = root["auth"]; a) ParseAuth(a, r, &c.auth);
  if (const YAML::Node st = root["state"]; st) ParseState(st, r, &c.state);
  if (!r.errors().empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(r.errors(), "\n"));
  }
  // The combination (data_dir given, TLS or plaintext, ...) is checked by Validate once the
  // command line's flags are merged in: a flag may supply what the file leaves out.
  return c;
}

absl::Status ServeConfig::Validate() const {
  if (data_dir.empty()) {
    return absl::InvalidArgumentError("data_dir is required (policy versions, models, state)");
  }
  if (!model.empty() && !model_ref.empty()) {
    return absl::InvalidArgumentError("give model or model_ref, not both");
  }
  if (drift.queue_rows < 1) return absl::InvalidArgumentError("drift.queue must be at least 1");
  for (const drift::DriftWindowSpec& w : drift.monitor.windows) {
    const std::string key = absl::StrCat("drift.", w.name, "_window");
    // The same check as the parser's, on the value as set (flags, tests).
    drift::DriftWindowSpec copy = w;
    const std::string text = absl::StrCat(w.size.count(), "/", w.slide.count());
    if (absl::Status s = drift::ParseDriftWindow(text, key, &copy); !s.ok()) return s;
  }
  if (drift.monitor.min_rows < 1) {
    return absl::InvalidArgumentError("drift.min_rows must be at least 1");
  }
  if (drift.monitor.false_alarm_period < std::chrono::hours(24)) {
    return absl::InvalidArgumentError("drift.false_alarm_days must be at least 1");
  }
  if (absl::Status s = drift.monitor.Validate(); !s.ok()) return s;
  if (!audit::ParseHashAlgorithm(audit.hash).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("audit.hash must be sha256 or sm3, not \"", audit.hash, "\""));
  }
  if (audit.tree_head_every < 1) {
    return absl::InvalidArgumentError("audit.tree_head_every must be at least 1");
  }
  if (audit.tree_head_interval < std::chrono::milliseconds(1)) {
    return absl::InvalidArgumentError("audit.tree_head_interval_ms must be at least 1");
  }
  if (audit.group_max_records < 1) {
    return absl::InvalidArgumentError("audit.group_max_records must be at least 1");
  }
  if (audit.group_max_delay < std::chrono::microseconds(0)) {
    return absl::InvalidArgumentError("audit.group_max_delay_us must not be negative");
  }
  if (audit.queue < 1) return absl::InvalidArgumentError("audit.queue must be at least 1");
  if (audit.record_cipher != "aes-256-gcm" && audit.record_cipher != "sm4-ctr-hmac-sm3") {
    return absl::InvalidArgumentError(absl::StrCat(
        "audit.record_cipher must be aes-256-gcm or sm4-ctr-hmac-sm3, not \"", audit.record_cipher,
        "\""));
  }
  VIGIL_RETURN_IF_ERROR(ValidateScreening(screening));
  VIGIL_RETURN_IF_ERROR(ValidateGpu(gpu));
  VIGIL_RETURN_IF_ERROR(ValidateTransport(tls, plaintext, auth));
  if (state.pseudonym_hash != "hmac-sha256" && state.pseudonym_hash != "hmac-sm3") {
    return absl::InvalidArgumentError(absl::StrCat(
        "state.pseudonym_hash must be hmac-sha256 or hmac-sm3, not \"", state.pseudonym_hash,
        "\""));
  }
  return batcher.Validate();
}

}  // namespace vigil
