// RunLoad over HTTPS and mutual TLS, against TestHttpServer with certificates that TestPki makes
// at test time (the openssl command line). Timeouts are generous: a loaded 2-core machine may
// take a while for a handshake.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openssl/ssl.h"
#include "vigil/loadgen/http_load.h"
#include "vigil/loadgen/test_http_server.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testing_pki.h"

namespace vigil {
namespace {

using loadgen_testing::TestHttpServer;
using loadgen_testing::TestHttpServerOptions;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;
using ::vigil::testing::StatusIs;
using ::vigil::testing::TestCertificate;
using ::vigil::testing::TestPki;
using Steady = std::chrono::steady_clock;

const RequestSource kOk = [](uint64_t i, LoadRequest* out) {
  out->path = "/ok";
  out->body = absl::StrCat(R"({"i":)", i, "}");
};

// Every certificate of the suite, made once (each takes a few openssl runs).
struct Pki {
  std::string dir;
  std::unique_ptr<TestPki> pki;
  TestCertificate server;    // from "ca": DNS localhost, IP 127.0.0.1
  TestCertificate client;    // from "ca": CN=payments-gw
  TestCertificate stranger;  // from "other-ca", which the client does not trust
  TestCertificate expired;   // from "ca", expired
};

class RunLoadTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new Pki;
    pki_->dir = ::testing::TempDir() + "vigil_loadgen_tls_XXXXXX";
    if (::mkdtemp(pki_->dir.data()) == nullptr) pki_->dir.clear();
    if (pki_->dir.empty()) return;
    pki_->pki = std::make_unique<TestPki>(pki_->dir);
    pki_->server = pki_->pki->Issue("ca", "server", "localhost");
    pki_->client = pki_->pki->Issue("ca", "payments-gw");
    pki_->pki->AddCa("other-ca");
    pki_->stranger = pki_->pki->Issue("other-ca", "stranger", "localhost");
    pki_->expired = pki_->pki->Issue("ca", "late", "localhost", /*expired=*/true);
  }

  static void TearDownTestSuite() {
    std::error_code ignored;
    if (!pki_->dir.empty()) std::filesystem::remove_all(pki_->dir, ignored);
    delete pki_;
    pki_ = nullptr;
  }

  void SetUp() override {
    ASSERT_FALSE(pki_->dir.empty()) << "mkdtemp failed";
    ASSERT_TRUE(pki_->pki->ok()) << pki_->pki->error();
  }

  // An HTTPS server with "cert".
  static std::unique_ptr<TestHttpServer> StartHttps(const TestCertificate& cert,
                                                    TestHttpServerOptions options = {}) {
    options.tls.cert_file = cert.cert;
    options.tls.key_file = cert.key;
    absl::StatusOr<std::unique_ptr<TestHttpServer>> server = TestHttpServer::Start(options);
    EXPECT_OK(server);
    return server.ok() ? std::move(server).value() : nullptr;
  }

  // Closed loop over TLS to 127.0.0.1, trusting "ca", bounded by max_requests.
  static LoadOptions Closed(uint16_t port, int connections, uint64_t max_requests) {
    LoadOptions options;
    options.port = port;
    options.connections = connections;
    options.max_requests = max_requests;
    options.duration = milliseconds(20000);
    options.response_timeout = milliseconds(10000);
    options.tls.enabled = true;
    options.tls.ca_file = pki_->pki->CaCert();
    return options;
  }

  static Pki* pki_;
};

Pki* RunLoadTls::pki_ = nullptr;

TEST_F(RunLoadTls, ClosedLoopCompletesEveryRequestOnKeptAliveTlsConnections) {
  auto server = StartHttps(pki_->server);
  ASSERT_NE(server, nullptr);
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(Closed(server->port(), 4, 500), kOk));
  EXPECT_EQ(r.sent, 500u);
  EXPECT_EQ(r.completed, 500u);
  EXPECT_EQ(r.ok, 500u);
  EXPECT_THAT(r.by_status, ElementsAre(Pair(200, 500u)));
  EXPECT_EQ(r.timeouts + r.connection_errors + r.dropped + r.reconnects, 0u)
      << ::testing::PrintToString(r.errors_by_reason);
  EXPECT_EQ(r.tls_handshakes, 4u) << "one per connection, before the window";
  EXPECT_EQ(r.tls_resumed, 0u);
  EXPECT_EQ(r.ok_latency->count(), 500u);
  EXPECT_EQ(server->accepts(), 4u);
  EXPECT_EQ(server->tls_handshakes(), 4u);
  EXPECT_EQ(server->requests(), 500u);
}

TEST_F(RunLoadTls, TwoThreadsShareTheTlsConnections) {
  auto server = StartHttps(pki_->server);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 4, 400);
  options.threads = 2;
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, kOk));
  EXPECT_EQ(r.completed, 400u);
  EXPECT_EQ(r.ok, 400u);
  EXPECT_EQ(r.connection_errors, 0u);
  EXPECT_EQ(r.tls_handshakes, 4u);
}

TEST_F(RunLoadTls, OpenLoopOverTlsAchievesTheOfferedRate) {
  auto server = StartHttps(pki_->server);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 8, 0);
  options.mode = LoadOptions::Mode::kOpen;
  options.offered_rps = 1000;
  options.duration = milliseconds(1000);
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, kOk));
  EXPECT_DOUBLE_EQ(r.seconds, 1.0);
  EXPECT_NEAR(static_cast<double>(r.sent), 1000, 2) << "arrivals are exact";
  EXPECT_NEAR(r.achieved_rps, 1000, 150);
  EXPECT_EQ(r.ok, r.completed);
  EXPECT_EQ(r.dropped + r.timeouts + r.connection_errors, 0u)
      << ::testing::PrintToString(r.errors_by_reason);
  EXPECT_EQ(r.tls_handshakes, 8u);
}

TEST_F(RunLoadTls, ServerNameFromOptionsIsCheckedAndAnIpHostMatchesTheIpEntry) {
  auto server = StartHttps(pki_->server);
  ASSERT_NE(server, nullptr);
  // host 127.0.0.1, no server_name: the certificate's IP:127.0.0.1 entry matches.
  LoadOptions options = Closed(server->port(), 1, 5);
  ASSERT_OK_AND_ASSIGN(LoadResult by_ip, RunLoad(options, kOk));
  EXPECT_EQ(by_ip.ok, 5u);
  // server_name localhost: SNI and the DNS:localhost entry.
  options.tls.server_name = "localhost";
  ASSERT_OK_AND_ASSIGN(LoadResult by_name, RunLoad(options, kOk));
  EXPECT_EQ(by_name.ok, 5u);
}

TEST_F(RunLoadTls, ServerCertificateProblemsFailTheRunWithTheVerificationError) {
  struct Case {
    const char* what;
    const TestCertificate* server_cert;
    std::string server_name;
    const char* expected;  // in the error, after "certificate verify failed: "
  };
  const Case cases[] = {
      // The chain ends at other-ca, which tls.ca_file does not hold.
      {"another CA", &pki_->stranger, "", "unable to get local issuer certificate"},
      // The certificate names localhost and 127.0.0.1 only.
      {"wrong server_name", &pki_->server, "payments.example.com", "hostname mismatch"},
      // notAfter is in the past.
      {"expired", &pki_->expired, "", "certificate has expired"},
  };
  for (const Case& c : cases) {
    auto server = StartHttps(*c.server_cert);
    ASSERT_NE(server, nullptr);
    LoadOptions options = Closed(server->port(), 2, 10);
    options.tls.server_name = c.server_name;
    const Steady::time_point start = Steady::now();
    EXPECT_THAT(RunLoad(options, kOk),
                StatusIs(absl::StatusCode::kUnavailable,
                         AllOf(HasSubstr(absl::StrCat(
                                   "TLS handshake with 127.0.0.1:", server->port(), " failed")),
                               HasSubstr(absl::StrCat("certificate verify failed: ", c.expected)))))
        << c.what;
    EXPECT_LT(Steady::now() - start, milliseconds(5000)) << c.what << ": fails at once, no wait";
    EXPECT_EQ(server->requests(), 0u) << c.what;
  }
}

TEST_F(RunLoadTls, VerifyPeerOffAcceptsAnUntrustedCertificate) {
  auto server = StartHttps(pki_->stranger);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 2, 20);
  options.tls.ca_file.clear();
  options.tls.server_name = "payments.example.com";
  options.tls.verify_peer = false;
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, kOk));
  EXPECT_EQ(r.ok, 20u);
}

TEST_F(RunLoadTls, MutualTlsPresentsTheClientCertificate) {
  TestHttpServerOptions server_options;
  server_options.tls.client_ca_file = pki_->pki->CaCert();
  auto server = StartHttps(pki_->server, server_options);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 2, 100);
  options.tls.cert_file = pki_->client.cert;
  options.tls.key_file = pki_->client.key;
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, kOk));
  EXPECT_EQ(r.ok, 100u);
  EXPECT_EQ(r.connection_errors, 0u) << ::testing::PrintToString(r.errors_by_reason);
  EXPECT_THAT(server->client_subjects(),
              ElementsAre("CN=payments-gw,O=vigil tests", "CN=payments-gw,O=vigil tests"));
  EXPECT_THAT(server->tls_failures(), IsEmpty());
}

// TLS 1.3: the server checks the client certificate after the client's side of the handshake
// is done, so the refusal arrives as an alert where the response was expected.
TEST_F(RunLoadTls, MissingClientCertificateUnderTls13IsAConnectionErrorPerRequestNotAHang) {
  TestHttpServerOptions server_options;
  server_options.tls.client_ca_file = pki_->pki->CaCert();
  auto server = StartHttps(pki_->server, server_options);
  ASSERT_NE(server, nullptr);
  const Steady::time_point start = Steady::now();
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(Closed(server->port(), 2, 10), kOk));
  EXPECT_LT(Steady::now() - start, milliseconds(8000));
  EXPECT_EQ(r.sent, 10u);
  EXPECT_EQ(r.completed, 0u);
  EXPECT_EQ(r.timeouts, 0u);
  // One per request; an alert read on an idle connection may add some.
  EXPECT_GE(r.connection_errors, 10u);
  EXPECT_THAT(r.errors_by_reason, Not(IsEmpty()));
  EXPECT_EQ(server->requests(), 0u);
  EXPECT_THAT(server->tls_failures(), Contains(HasSubstr("peer did not return a certificate")));
}

// TLS 1.2: the refusal is part of the handshake, which fails at the start.
TEST_F(RunLoadTls, MissingClientCertificateUnderTls12FailsTheInitialHandshake) {
  TestHttpServerOptions server_options;
  server_options.tls.client_ca_file = pki_->pki->CaCert();
  server_options.tls.max_version = TLS1_2_VERSION;
  auto server = StartHttps(pki_->server, server_options);
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(RunLoad(Closed(server->port(), 2, 10), kOk),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("TLS handshake with 127.0.0.1")));
  EXPECT_EQ(server->requests(), 0u);
}

class RunLoadTlsVersions : public RunLoadTls, public ::testing::WithParamInterface<int> {};

TEST_P(RunLoadTlsVersions, ReconnectAfterTheServerClosesResumesTheTlsSession) {
  TestHttpServerOptions server_options;
  server_options.tls.max_version = GetParam();
  auto server = StartHttps(pki_->server, server_options);
  ASSERT_NE(server, nullptr);
  const RequestSource source = [](uint64_t i, LoadRequest* out) {
    out->path = i % 4 == 0 ? "/close" : "/ok";
  };
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(Closed(server->port(), 2, 200), source));
  EXPECT_EQ(r.completed, 200u);
  EXPECT_EQ(r.ok, 200u);
  EXPECT_EQ(r.reconnects, 50u);
  EXPECT_EQ(r.connection_errors, 0u) << ::testing::PrintToString(r.errors_by_reason);
  // The 2 initial handshakes and those of the reconnects; the last reconnect's may not have
  // finished when the run ended.
  EXPECT_GE(r.tls_handshakes, 2u + 49u);
  EXPECT_LE(r.tls_handshakes, 2u + 50u);
  EXPECT_EQ(r.tls_resumed, r.tls_handshakes - 2) << "every reconnect resumes its session";
  // The server's count may lag by the handshakes in flight at the end (one per connection).
  EXPECT_GE(server->tls_resumed() + 2, r.tls_resumed);
}

std::string VersionName(const ::testing::TestParamInfo<int>& param) {
  return param.param == 0 ? "Newest" : "Tls12";
}

INSTANTIATE_TEST_SUITE_P(Tls, RunLoadTlsVersions, ::testing::Values(0, TLS1_2_VERSION),
                         VersionName);

TEST_F(RunLoadTls, ResponseTimeoutsReopenTlsConnections) {
  TestHttpServerOptions server_options;
  server_options.slow_delay = milliseconds(20000);
  auto server = StartHttps(pki_->server, server_options);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 2, 20);
  options.response_timeout = milliseconds(500);
  const RequestSource source = [](uint64_t i, LoadRequest* out) {
    out->path = i % 4 == 0 ? "/slow" : "/ok";
  };
  const Steady::time_point start = Steady::now();
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, source));
  EXPECT_EQ(r.sent, 20u);
  EXPECT_EQ(r.timeouts, 5u);
  EXPECT_EQ(r.completed, 15u);
  EXPECT_EQ(r.reconnects, 5u);
  EXPECT_EQ(r.connection_errors, 0u) << ::testing::PrintToString(r.errors_by_reason);
  EXPECT_LT(Steady::now() - start, milliseconds(10000)) << "not the server's 20 s";
}

TEST_F(RunLoadTls, FailedReconnectHandshakesAreConnectionErrorsWithBackoff) {
  auto server = StartHttps(pki_->server);
  ASSERT_NE(server, nullptr);
  LoadOptions options = Closed(server->port(), 2, 0);
  options.duration = milliseconds(1500);
  // From request 10 on, the server closes after each answer and refuses new handshakes: both
  // connections answer once more, then cannot come back.
  TestHttpServer* const s = server.get();
  const RequestSource source = [s](uint64_t i, LoadRequest* out) {
    if (i == 10) s->RefuseTls();
    out->path = i >= 10 ? "/close" : "/ok";
  };
  ASSERT_OK_AND_ASSIGN(LoadResult r, RunLoad(options, source));
  EXPECT_EQ(r.sent, 12u);
  EXPECT_EQ(r.ok, 12u);
  EXPECT_GT(r.connection_errors, 0u);
  EXPECT_LT(r.connection_errors, 100u) << "backoff: at most every 100 ms per connection";
  EXPECT_THAT(r.errors_by_reason, Each(Key(StartsWith("TLS handshake: "))));
  EXPECT_EQ(r.tls_handshakes, 2u) << "no reconnect handshake succeeded";
}

TEST_F(RunLoadTls, HandshakeTimeoutAtTheStartIsUnavailable) {
  // A socket that listens but never accepts: TCP connects, the ClientHello is never answered.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  LoadOptions options = Closed(ntohs(addr.sin_port), 1, 1);
  options.response_timeout = milliseconds(300);
  const Steady::time_point start = Steady::now();
  EXPECT_THAT(RunLoad(options, kOk),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("TLS handshake with 127.0.0.1"), HasSubstr("timed out"),
                             HasSubstr("response_timeout 300 ms"))));
  EXPECT_LT(Steady::now() - start, milliseconds(5000));
  close(fd);
}

TEST_F(RunLoadTls, InvalidTlsOptionsNameTheField) {
  const std::string missing = pki_->dir + "/missing.pem";
  const std::string log = pki_->dir + "/openssl.log";  // text, no PEM in it
  struct Case {
    const char* field;
    std::function<void(LoadTls*)> change;
    const char* detail = "";
  };
  const Case cases[] = {
      {"tls.ca_file", [&](LoadTls* t) { t->ca_file = missing; }, "cannot be read"},
      {"tls.ca_file", [&](LoadTls* t) { t->ca_file = pki_->dir; }, "is a directory"},
      {"tls.ca_file", [&](LoadTls* t) { t->ca_file = log; }, "no usable PEM certificate"},
      {"tls.key_file", [](LoadTls* t) { t->cert_file = pki_->client.cert; }, "must be set"},
      {"tls.cert_file", [](LoadTls* t) { t->key_file = pki_->client.key; }, "must be set"},
      {"tls.cert_file",
       [&](LoadTls* t) {
         t->cert_file = missing;
         t->key_file = pki_->client.key;
       },
       "cannot be read"},
      {"tls.cert_file",
       [&](LoadTls* t) {
         t->cert_file = log;
         t->key_file = pki_->client.key;
       },
       "no usable PEM certificate"},
      {"tls.key_file",
       [](LoadTls* t) {
         t->cert_file = pki_->client.cert;
         t->key_file = pki_->client.cert;  // a certificate, not a key
       },
       "no usable PEM private key"},
      {"tls.key_file",
       [](LoadTls* t) {
         t->cert_file = pki_->client.cert;
         t->key_file = pki_->server.key;
       },
       "does not match the certificate in tls.cert_file"},
      {"tls.server_name", [](LoadTls* t) { t->server_name = "two words"; }, ""},
  };
  for (const Case& c : cases) {
    LoadOptions options;
    options.port = 1;  // never reached: the options are checked first
    options.tls.enabled = true;
    options.tls.ca_file = pki_->pki->CaCert();
    c.change(&options.tls);
    EXPECT_THAT(RunLoad(options, kOk), StatusIs(absl::StatusCode::kInvalidArgument,
                                                AllOf(HasSubstr(c.field), HasSubstr(c.detail))))
        << c.field << " " << c.detail;
  }
}

TEST_F(RunLoadTls, TlsFieldsWithTlsOffAreRefused) {
  const std::pair<const char*, std::function<void(LoadTls*)>> cases[] = {
      {"tls.ca_file", [](LoadTls* t) { t->ca_file = "ca.pem"; }},
      {"tls.cert_file", [](LoadTls* t) { t->cert_file = "c.pem"; }},
      {"tls.key_file", [](LoadTls* t) { t->key_file = "c.key"; }},
      {"tls.server_name", [](LoadTls* t) { t->server_name = "localhost"; }},
      {"tls.verify_peer", [](LoadTls* t) { t->verify_peer = false; }},
  };
  for (const auto& [field, change] : cases) {
    LoadOptions options;
    options.port = 1;
    change(&options.tls);
    EXPECT_THAT(RunLoad(options, kOk),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(field), HasSubstr("tls.enabled is false"))));
  }
}

}  // namespace
}  // namespace vigil
