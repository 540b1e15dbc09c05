// End-to-end tests of access control in `vigil serve`: the real VigilServer in-process with
// auth.mode tokens, tokens made by AccessTokens::Create in its data dir, spoken to over
// loopback HTTP. Every route is called with no token, a malformed one, a revoked one, a token
// of a role that may not, and one that may.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_record.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testing_pki.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::Eventually;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::MetricValue;
using ::vigil::testing::ReadFile;
using ::vigil::testing::TestHttpResponse;
using Headers = std::vector<std::pair<std::string, std::string>>;
using Millis = std::chrono::milliseconds;

std::string Payment(const std::string& id) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":"A1","bank_id":"B1","name":"Maria Lopez"},)",
                      R"("beneficiary":{"account_id":"A2","bank_id":"B2","name":"Jon Berg"},)",
                      R"("amount":{"value":"120.00","currency":"USD"}})");
}

Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

class VigilServerAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_auth_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = testing::TestServeConfig(dir_);
    config_.auth.mode = "tokens";
    config_.worker_threads = 4;
    config_.score_budget = Millis(2000);
    config_.log_sample_rate = 1;
    std::filesystem::create_directories(config_.data_dir);
    for (Role role : {Role::kScorer, Role::kPolicyAdmin, Role::kAuditor, Role::kAdmin}) {
      absl::StatusOr<std::string> token = AccessTokens::Create(config_.data_dir, role, "test");
      ASSERT_OK(token);
      tokens_[static_cast<int>(role)] = *token;
    }
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  const std::string& Token(Role role) { return tokens_[static_cast<int>(role)]; }

  absl::StatusOr<std::unique_ptr<VigilServer>> Start() {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    if (!fx.ok()) return fx.status();
    return VigilServer::Start(config_, *std::move(fx));
  }
  void StartServer() {
    auto server = Start();
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  int Status(const std::string& method, const std::string& path, const Headers& headers,
             const std::string& body = "") {
    const std::string content_type =
        path == "/v1/policy/ingest" ? "application/yaml" : "application/json";
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), method, path, body, headers, content_type);
    EXPECT_OK(r);
    return r.ok() ? r->status : -1;
  }
  double Metric(const std::string& series) {
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), "GET", "/metrics", "", Bearer(Token(Role::kAuditor)));
    EXPECT_OK(r);
    return r.ok() ? MetricValue(r->body, series) : -1;
  }

  std::string dir_;
  ServeConfig config_;
  std::string tokens_[4];
  std::unique_ptr<VigilServer> server_;
};

TEST_F(VigilServerAuthTest, EveryRouteChecksItsRole) {
  StartServer();
  struct Route {
    std::string method, path, body;
    Role needs;
  };
  const std::string policy = ReadFile(config_.policy);
  const std::vector<Route> routes = {
      {"POST", "/v1/score", Payment("auth-1"), Role::kScorer},
      {"POST", "/v1/score/batch", absl::StrCat("[", Payment("auth-2"), "]"), Role::kScorer},
      {"POST", "/v1/policy/ingest?activate=false", policy, Role::kPolicyAdmin},
      {"POST", "/v1/engine/activate", R"({"traffic_weight": 0})", Role::kPolicyAdmin},
      {"GET", "/v1/drift", "", Role::kAuditor},
      {"GET", "/v1/audit/verify", "", Role::kAuditor},
  };
  for (const Route& route : routes) {
    SCOPED_TRACE(route.path);
    EXPECT_EQ(Status(route.method, route.path, {}, route.body), 401);
    for (Role role : {Role::kScorer, Role::kPolicyAdmin, Role::kAuditor}) {
      const int status = Status(route.method, route.path, Bearer(Token(role)), route.body);
      if (role == route.needs) {
        EXPECT_NE(status, 401) << RoleName(role);
        EXPECT_NE(status, 403) << RoleName(role);
      } else {
        EXPECT_EQ(status, 403) << RoleName(role);
      }
    }
    const int admin = Status(route.method, route.path, Bearer(Token(Role::kAdmin)), route.body);
    EXPECT_NE(admin, 401);
    EXPECT_NE(admin, 403);
  }
  // Probes stay open; the metrics need a caller of any role.
  EXPECT_EQ(Status("GET", "/healthz", {}), 200);
  EXPECT_EQ(Status("GET", "/readyz", {}), 200);
  EXPECT_EQ(Status("GET", "/metrics", {}), 401);
  EXPECT_EQ(Status("GET", "/metrics", Bearer(Token(Role::kScorer))), 200);
}

TEST_F(VigilServerAuthTest, BadCredentialsAre401CountedAndNeverEchoed) {
  StartServer();
  const std::string scorer = Token(Role::kScorer);
  const std::string id = AccessTokens::IdOf(scorer);
  // The right id with another secret, an unknown id, a malformed token, another scheme.
  std::string wrong_secret = scorer;
  wrong_secret.back() = wrong_secret.back() == 'A' ? 'B' : 'A';
  const std::string unknown = "vgl_0123456789abcdef_" + scorer.substr(scorer.size() - 43);
  for (const Headers& h : {Bearer(wrong_secret), Bearer(unknown), Bearer("not-a-token"),
                           Headers{{"Authorization", "Basic dXNlcjpwYXNz"}}}) {
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), "POST", "/v1/score", Payment("bad-1"), h);
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 401) << r->body;
    EXPECT_EQ(r->Header("WWW-Authenticate"), "Bearer realm=\"vigil\"");
    EXPECT_EQ(r->Json()["error"]["field"], "Authorization");
    EXPECT_THAT(r->body, Not(HasSubstr(wrong_secret.substr(22))));
  }
  EXPECT_EQ(Metric("vigil_auth_failures_total{reason=\"invalid\"}"), 3);
  EXPECT_EQ(Metric("vigil_auth_failures_total{reason=\"malformed\"}"), 1);
  EXPECT_EQ(Status("POST", "/v1/score", {}, Payment("bad-2")), 401);
  EXPECT_EQ(Metric("vigil_auth_failures_total{reason=\"missing\"}"), 1);
  EXPECT_EQ(Status("GET", "/v1/audit/verify", Bearer(scorer)), 403);
  EXPECT_EQ(Metric("vigil_auth_failures_total{reason=\"forbidden\"}"), 1);
  EXPECT_EQ(Metric("vigil_http_requests_total{route=\"score\",status=\"401\"}"), 5);
  // None of it was decided or recorded.
  EXPECT_EQ(server_->service().audit_log()->size(), 0u);
  ASSERT_OK(server_->Shutdown());
  // The log names the token's id, never a secret.
  const std::string log = ReadFile(config_.log_path);
  EXPECT_THAT(log, HasSubstr(absl::StrCat("\"token_id\":\"", id, "\"")));
  EXPECT_THAT(log, Not(HasSubstr(scorer.substr(22))));
  EXPECT_THAT(log, Not(HasSubstr(wrong_secret.substr(22))));
  EXPECT_THAT(log, Not(HasSubstr("dXNlcjpwYXNz")));
}

TEST_F(VigilServerAuthTest, TheTokenIdIsTheDecisionsActorInTheAuditLog) {
  StartServer();
  const std::string scorer = Token(Role::kScorer);
  EXPECT_EQ(Status("POST", "/v1/score", Bearer(scorer), Payment("actor-1")), 200);
  DecisionRecorder trail(server_->service().audit_log(), {});
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> record, trail.Recorded("actor-1"));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->actor, absl::StrCat("token:", AccessTokens::IdOf(scorer)));
}

TEST_F(VigilServerAuthTest, CreatedAndRevokedTokensTakeEffectWithoutARestart) {
  StartServer();
  const std::string scorer = Token(Role::kScorer);
  ASSERT_EQ(Status("POST", "/v1/score", Bearer(scorer), Payment("rv-1")), 200);
  ASSERT_OK(AccessTokens::Revoke(config_.data_dir, AccessTokens::IdOf(scorer)));
  EXPECT_TRUE(Eventually([&] {
    return Status("POST", "/v1/score", Bearer(scorer), Payment("rv-2")) == 401;
  }));
  ASSERT_OK_AND_ASSIGN(const std::string fresh,
                       AccessTokens::Create(config_.data_dir, Role::kScorer, "fresh"));
  EXPECT_TRUE(Eventually([&] {
    return Status("POST", "/v1/score", Bearer(fresh), Payment("rv-3")) == 200;
  }));
}

TEST_F(VigilServerAuthTest, ATokenModeWithoutAnyCredentialRefusesToStart) {
  std::filesystem::remove(config_.data_dir + "/access_tokens.jsonl");
  EXPECT_THAT(Start().status(), testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                                  HasSubstr("vigil token create")));
}

TEST_F(VigilServerAuthTest, UnderMutualTlsTheCertificateSubjectIsTheActorAndItsGrantedRole) {
  testing::TestPki pki(dir_ + "/pki");
  const testing::TestCertificate server_cert = pki.Issue("ca", "vigil-server", "localhost");
  const testing::TestCertificate gateway = pki.Issue("ca", "payments-gw");
  const testing::TestCertificate analyst = pki.Issue("ca", "analyst");
  pki.AddCa("other-ca");
  const testing::TestCertificate stranger = pki.Issue("other-ca", "payments-gw-2");
  const testing::TestCertificate expired = pki.Issue("ca", "late", "", /*expired=*/true);
  ASSERT_TRUE(pki.ok()) << pki.error();
  config_.plaintext = false;
  config_.tls.cert = server_cert.cert;
  config_.tls.key = server_cert.key;
  config_.tls.client_ca = pki.CaCert();
  config_.auth.certificate_roles = {{gateway.subject, "scorer"}};
  StartServer();

  const auto call = [&](const testing::TestCertificate* cert, const std::string& path,
                        const std::string& body, const Headers& headers = {}) {
    testing::TestTlsOptions tls{.ca_file = pki.CaCert()};
    if (cert != nullptr) {
      tls.cert_file = cert->cert;
      tls.key_file = cert->key;
    }
    testing::TestHttpClient client(server_->port(), tls);
    if (!client.connected()) return -1;
    absl::StatusOr<TestHttpResponse> r =
        client.Request(body.empty() ? "GET" : "POST", path, body, headers);
    return r.ok() ? r->status : -1;  // -1: the handshake or the exchange failed
  };
  // The gateway's certificate carries the scorer role: no token needed.
  EXPECT_EQ(call(&gateway, "/v1/score", Payment("mtls-1")), 200);
  DecisionRecorder trail(server_->service().audit_log(), {});
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> record, trail.Recorded("mtls-1"));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->actor, "tls:" + gateway.subject);
  // The role is the certificate's: the scorer may not verify the log.
  EXPECT_EQ(call(&gateway, "/v1/audit/verify", ""), 403);
  // A certificate the CA issued but no role is granted to authenticates, and needs a token;
  // with one, the actor names both.
  EXPECT_EQ(call(&analyst, "/v1/score", Payment("mtls-2")), 401);
  EXPECT_EQ(call(&analyst, "/v1/score", Payment("mtls-3"), Bearer(Token(Role::kScorer))), 200);
  ASSERT_OK_AND_ASSIGN(record, trail.Recorded("mtls-3"));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->actor, absl::StrCat("tls:", analyst.subject, " token:",
                                        AccessTokens::IdOf(Token(Role::kScorer))));
  // No certificate, another CA's, an expired one: no HTTP exchange at all.
  EXPECT_EQ(call(nullptr, "/v1/score", Payment("mtls-4")), -1);
  EXPECT_EQ(call(&stranger, "/v1/score", Payment("mtls-5")), -1);
  EXPECT_EQ(call(&expired, "/v1/score", Payment("mtls-6")), -1);
  EXPECT_TRUE(Eventually([&] {
    absl::StatusOr<TestHttpResponse> r;
    testing::TestHttpClient client(
        server_->port(),
        testing::TestTlsOptions{.ca_file = pki.CaCert(), .cert_file = gateway.cert,
                                .key_file = gateway.key});
    // The metrics need a role; the gateway has one.
    r = client.Request("GET", "/metrics", "");
    return r.ok() && MetricValue(r->body, "vigil_tls_handshake_failures_total") >= 3;
  }));
  EXPECT_EQ(server_->service().audit_log()->size(), 2u);
}

TEST_F(VigilServerAuthTest, PlainHttpNeedsToBeAskedFor) {
  config_.plaintext = false;
  EXPECT_THAT(Start().status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("--plaintext")));
}

}  // namespace
}  // namespace vigil
