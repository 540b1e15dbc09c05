// HttpServer over TLS and mutual TLS. Every test makes its own CAs and certificates (TestPki,
// the openssl command line) in a fresh temporary directory; curl and `openssl s_client` check
// the server independently of OpenSSL as the test client drives it.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/server/http_server.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testing_pki.h"

namespace vigil {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::StatusIs;
using testing::TestCertificate;
using testing::TestHttpClient;
using testing::TestHttpResponse;
using testing::TestPki;
using testing::TestTlsOptions;
using Millis = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// Echoes what the server tells the handler about the request and its connection. "/slow" is
// answered from another thread after 300 ms.
class EchoHandler final : public HttpHandler {
 public:
  ~EchoHandler() override {
    absl::MutexLock lock(&mu_);
    for (std::thread& t : responders_) t.join();
  }

  void Handle(HttpRequest request, HttpResponder respond) override {
    handled_.fetch_add(1);
    const nlohmann::json j = {{"path", request.path},
                              {"body_bytes", request.body.size()},
                              {"tls", request.tls},
                              {"principal", request.client_principal}};
    HttpResponse r;
    r.body = j.dump();
    // The tests' credential: "Authorization: ok".
    r.authenticated = request.Header("authorization") == "ok";
    if (request.path == "/slow") {
      absl::MutexLock lock(&mu_);
      responders_.emplace_back([respond = std::move(respond), r = std::move(r)]() mutable {
        std::this_thread::sleep_for(Millis(300));
        std::move(respond)(std::move(r));
      });
      slow_started_.Notify();
      return;
    }
    std::move(respond)(std::move(r));
  }
  int handled() const { return handled_.load(); }

  absl::Notification slow_started_;

 private:
  std::atomic<int> handled_{0};
  absl::Mutex mu_;
  std::vector<std::thread> responders_ ABSL_GUARDED_BY(mu_);
};

// Waits up to "within" for "done" to hold, polling: for counters the server updates just after
// the client has seen the effect.
bool Eventually(const std::function<bool()>& done, Millis within = Millis(10000)) {
  const Steady::time_point give_up = Steady::now() + within;
  while (!done()) {
    if (Steady::now() > give_up) return false;
    std::this_thread::sleep_for(Millis(2));
  }
  return true;
}

// A fresh directory under the test temp dir; removed by the fixture.
std::string MakeTempDir() {
  std::string path = ::testing::TempDir() + "vigil_tls_test_XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) return "";
  return path;
}

// Runs a shell command: its exit status (-1 when it did not exit) and its stdout.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) out.append(chunk, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class HttpServerTlsTest : public ::testing::Test {
 protected:
  HttpServerTlsTest() {
    // Generous: a loaded 2-core machine may take a while for a handshake.
    options_.limits.request_timeout = Millis(10000);
    options_.limits.idle_timeout = Millis(20000);
    options_.on_refused = [this](int status, std::string_view code) {
      absl::MutexLock lock(&mu_);
      refused_.emplace_back(status, std::string(code));
    };
    options_.on_tls_failure = [this](std::string_view reason) {
      absl::MutexLock lock(&mu_);
      tls_failures_.emplace_back(reason);
    };
  }

  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    // TestPki runs its commands with output into <dir>/openssl.log: the directory must exist.
    pki_ = std::make_unique<TestPki>(dir_);
    server_cert_ = pki_->Issue("ca", "server", "localhost");
    ASSERT_TRUE(pki_->ok()) << pki_->error();
    options_.tls.enabled = true;
    options_.tls.cert_file = server_cert_.cert;
    options_.tls.key_file = server_cert_.key;
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  void Start() {
    absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(options_, handler_);
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  // A certificate for a client, from "ca_name".
  TestCertificate Client(const std::string& name, const std::string& ca_name = "ca",
                         bool expired = false) {
    TestCertificate c = pki_->Issue(ca_name, name, "", expired);
    EXPECT_TRUE(pki_->ok()) << pki_->error();
    return c;
  }

  TestTlsOptions Trusting(const TestCertificate* client = nullptr) const {
    TestTlsOptions tls;
    tls.ca_file = pki_->CaCert();
    if (client != nullptr) {
      tls.cert_file = client->cert;
      tls.key_file = client->key;
    }
    return tls;
  }

  // One GET over a fresh TLS connection; the echoed JSON.
  absl::StatusOr<nlohmann::json> Get(const TestTlsOptions& tls, const std::string& path = "/x") {
    TestHttpClient client(server_->port(), tls);
    if (!client.connected()) return absl::UnavailableError(client.error());
    absl::StatusOr<TestHttpResponse> r = client.Request("GET", path);
    if (!r.ok()) return r.status();
    if (r->status != 200) return absl::InternalError(absl::StrCat("status ", r->status));
    return r->Json();
  }

  // The server must refuse this client's handshake: no HTTP answer, the handler never called,
  // a handshake failure counted and reported with "reason".
  void ExpectRefused(const TestTlsOptions& tls, const ::testing::Matcher<std::string>& reason) {
    const uint64_t failures_before = server_->stats().tls_handshake_failures;
    const size_t reasons_before = tls_failures().size();
    const int handled_before = handler_->handled();
    {
      TestHttpClient client(server_->port(), tls);
      // Under TLS 1.3 the client's handshake completes before the server has checked the
      // client's certificate: the refusal then comes as the first read failing.
      if (client.connected()) {
        absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/x");
        EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnavailable)) << "an answer came";
      } else {
        EXPECT_THAT(client.error(), HasSubstr("TLS handshake"));
      }
    }
    EXPECT_TRUE(Eventually([&] {
      return tls_failures().size() > reasons_before &&
             server_->stats().tls_handshake_failures > failures_before;
    }));
    EXPECT_EQ(handler_->handled(), handled_before);
    const std::vector<std::string> reasons = tls_failures();
    ASSERT_GT(reasons.size(), reasons_before);
    EXPECT_THAT(reasons.back(), reason);
  }

  std::vector<std::string> tls_failures() {
    absl::MutexLock lock(&mu_);
    return tls_failures_;
  }
  std::vector<std::pair<int, std::string>> refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }

  std::string dir_;
  std::unique_ptr<TestPki> pki_;
  TestCertificate server_cert_;
  HttpServerOptions options_;
  std::shared_ptr<EchoHandler> handler_ = std::make_shared<EchoHandler>();
  std::unique_ptr<HttpServer> server_;
  absl::Mutex mu_;
  std::vector<std::pair<int, std::string>> refused_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> tls_failures_ ABSL_GUARDED_BY(mu_);
};

// --- TLS ---------------------------------------------------------------------------------

TEST_F(HttpServerTlsTest, ServesHttpsToAClientThatTrustsTheCa) {
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port(), Trusting());
  ASSERT_TRUE(client.connected()) << client.error();
  for (const std::string path : {"/one", "/two"}) {  // kept alive across requests
    absl::StatusOr<TestHttpResponse> r = client.Request("POST", path, R"({"a":1})");
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Header("Server"), "vigil");
    const nlohmann::json j = r->Json();
    EXPECT_EQ(j["path"], path);
    EXPECT_EQ(j["tls"], true);
    EXPECT_EQ(j["principal"], "");  // no client CA: no client identity
  }
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 2u);
  EXPECT_EQ(server_->stats().tls_handshake_failures, 0u);
}

TEST_F(HttpServerTlsTest, AClientThatDoesNotTrustTheCaRefusesTheServer) {
  ASSERT_NO_FATAL_FAILURE(Start());
  pki_->AddCa("other-ca");
  TestTlsOptions tls = Trusting();
  tls.ca_file = pki_->CaCert("other-ca");
  TestHttpClient client(server_->port(), tls);
  EXPECT_FALSE(client.connected());
  EXPECT_THAT(client.error(), HasSubstr("certificate verify failed"));
}

TEST_F(HttpServerTlsTest, WithoutAClientCaAClientCertificateIsNotAskedFor) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const TestCertificate gw = Client("payments-gw");
  absl::StatusOr<nlohmann::json> j = Get(Trusting(&gw));
  ASSERT_OK(j);
  EXPECT_EQ((*j)["principal"], "");
}

TEST_F(HttpServerTlsTest, APlainHttpClientGetsNoHttpAnswer) {
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient plain(server_->port());
  ASSERT_TRUE(plain.connected()) << plain.error();
  absl::StatusOr<TestHttpResponse> r = plain.Request("GET", "/x");
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnavailable));  // closed, no status line
  EXPECT_TRUE(Eventually(
      [&] { return !tls_failures().empty() && server_->stats().tls_handshake_failures > 0; }));
  EXPECT_THAT(tls_failures(), ::testing::ElementsAre(HasSubstr("http request")));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 1u);
  EXPECT_EQ(handler_->handled(), 0);
}

TEST_F(HttpServerTlsTest, NegotiatesTls13AndTls12) {
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    TestTlsOptions tls = Trusting();
    tls.min_version = "1.3";
    TestHttpClient client(server_->port(), tls);
    ASSERT_TRUE(client.connected()) << client.error();
    EXPECT_EQ(client.tls_version(), "TLSv1.3");
    ASSERT_OK(client.Request("GET", "/13"));
  }
  {
    TestTlsOptions tls = Trusting();
    tls.max_version = "1.2";
    TestHttpClient client(server_->port(), tls);
    ASSERT_TRUE(client.connected()) << client.error();
    EXPECT_EQ(client.tls_version(), "TLSv1.2");
    // The default list: forward secret (ECDHE) and AEAD only.
    EXPECT_THAT(client.tls_cipher(), StartsWith("ECDHE-ECDSA-"));
    EXPECT_THAT(client.tls_cipher(),
                ::testing::AnyOf(HasSubstr("-GCM-"), HasSubstr("CHACHA20-POLY1305")));
    absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/12");
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(server_->stats().tls_handshake_failures, 0u);
}

TEST_F(HttpServerTlsTest, MinVersion13RefusesATls12OnlyClient) {
  options_.tls.min_version = "1.3";
  ASSERT_NO_FATAL_FAILURE(Start());
  TestTlsOptions tls12 = Trusting();
  tls12.max_version = "1.2";
  ExpectRefused(tls12, HasSubstr("unsupported protocol"));
  TestTlsOptions tls13 = Trusting();
  EXPECT_OK(Get(tls13));
}

TEST_F(HttpServerTlsTest, ConfiguredCiphersAreTheOnlyOnesOffered) {
  options_.tls.ciphers = "ECDHE-ECDSA-CHACHA20-POLY1305";
  options_.tls.ciphersuites = "TLS_CHACHA20_POLY1305_SHA256";
  ASSERT_NO_FATAL_FAILURE(Start());
  for (const char* version : {"1.2", "1.3"}) {
    TestTlsOptions tls = Trusting();
    tls.min_version = version;
    tls.max_version = version;
    TestHttpClient client(server_->port(), tls);
    ASSERT_TRUE(client.connected()) << client.error();
    EXPECT_THAT(client.tls_cipher(), HasSubstr("CHACHA20")) << version;
    EXPECT_OK(client.Request("GET", "/x"));
  }
}

// --- Mutual TLS -----------------------------------------------------------------------------

class HttpServerMutualTlsTest : public HttpServerTlsTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(HttpServerTlsTest::SetUp());
    options_.tls.client_ca_file = pki_->CaCert();
  }
};

TEST_F(HttpServerMutualTlsTest, AValidClientCertificateIsServedAndNamed) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const TestCertificate gw = Client("payments-gw");
  for (const char* version : {"1.2", "1.3"}) {
    TestTlsOptions tls = Trusting(&gw);
    tls.max_version = version;
    TestHttpClient client(server_->port(), tls);
    ASSERT_TRUE(client.connected()) << client.error();
    for (int i = 0; i < 2; ++i) {  // computed once per connection, seen by every request
      absl::StatusOr<TestHttpResponse> r = client.Request("GET", "/who");
      ASSERT_OK(r);
      EXPECT_EQ(r->status, 200);
      EXPECT_EQ(r->Json()["principal"], "CN=payments-gw,O=vigil tests") << version;
      EXPECT_EQ(r->Json()["principal"], gw.subject);
      EXPECT_EQ(r->Json()["tls"], true);
    }
  }
  EXPECT_EQ(server_->stats().tls_handshake_failures, 0u);
}

TEST_F(HttpServerMutualTlsTest, NoClientCertificateIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  for (const char* version : {"1.2", "1.3"}) {
    SCOPED_TRACE(version);
    TestTlsOptions tls = Trusting();
    tls.max_version = version;
    tls.min_version = version;
    ExpectRefused(tls, HasSubstr("peer did not return a certificate"));
  }
}

TEST_F(HttpServerMutualTlsTest, ACertificateFromAnotherCaIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  pki_->AddCa("other-ca");
  const TestCertificate stranger = Client("stranger", "other-ca");
  for (const char* version : {"1.2", "1.3"}) {
    SCOPED_TRACE(version);
    TestTlsOptions tls = Trusting(&stranger);
    tls.max_version = version;
    tls.min_version = version;
    ExpectRefused(tls, AllOf(HasSubstr("certificate verify failed"),
                             HasSubstr("unable to get local issuer certificate")));
  }
}

TEST_F(HttpServerMutualTlsTest, AnExpiredCertificateIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const TestCertificate late = Client("late", "ca", /*expired=*/true);
  ExpectRefused(Trusting(&late), HasSubstr("certificate has expired"));
}

TEST_F(HttpServerMutualTlsTest, AServerCertificateIsNotAClientCertificate) {
  ASSERT_NO_FATAL_FAILURE(Start());
  // Signed by the trusted CA, but its extended key usage is serverAuth only.
  const TestCertificate other_server = pki_->Issue("ca", "other-server", "other.example");
  ExpectRefused(Trusting(&other_server), HasSubstr("unsuitable certificate purpose"));
}

// --- Independent clients ----------------------------------------------------------------------

TEST_F(HttpServerMutualTlsTest, CurlPresentsItsCertificateAndIsServed) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "/usr/bin/curl is not installed";
  ASSERT_NO_FATAL_FAILURE(Start());
  const TestCertificate gw = Client("payments-gw");
  // -q: no ~/.curlrc; --noproxy: loopback even under an https_proxy variable.
  const std::string curl = absl::StrCat(
      "/usr/bin/curl -q -sS --noproxy '*' --max-time 60 --cacert '", pki_->CaCert(), "'");
  const std::string url = absl::StrCat(" https://127.0.0.1:", server_->port(), "/curl");
  {
    const auto [rc, out] =
        Shell(absl::StrCat(curl, " --cert '", gw.cert, "' --key '", gw.key, "'", url, " 2>&1"));
    ASSERT_EQ(rc, 0) << out;
    const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << out;
    EXPECT_EQ(j["principal"], gw.subject);
    EXPECT_EQ(j["path"], "/curl");
  }
  {
    // Without a client certificate: curl fails (exit 35 handshake, or 56 receive under
    // TLS 1.3), and nothing is served.
    const auto [rc, out] = Shell(absl::StrCat(curl, url, " 2>&1"));
    EXPECT_NE(rc, 0) << out;
    EXPECT_THAT(out, Not(HasSubstr("principal")));
  }
  EXPECT_EQ(handler_->handled(), 1);
}

TEST_F(HttpServerTlsTest, OpenSslSClientCannotNegotiateOldProtocolsOrWeakCiphers) {
  ASSERT_NO_FATAL_FAILURE(Start());
  // @SECLEVEL=0 lets the client itself offer what Debian's defaults would not, so that what is
  // refused is refused by the server.
  const auto s_client = [&](const std::string& args) {
    return Shell(absl::StrCat("openssl s_client -connect 127.0.0.1:", server_->port(),
                              " -servername localhost -CAfile '", pki_->CaCert(), "' ", args,
                              " < /dev/null 2>&1"))
        .second;
  };
  EXPECT_THAT(s_client("-tls1_2"),
              AllOf(HasSubstr("TLSv1.2"), HasSubstr("Verify return code: 0 (ok)"),
                    Not(HasSubstr("Cipher is (NONE)"))));
  EXPECT_THAT(s_client("-tls1_1 -cipher 'DEFAULT:@SECLEVEL=0'"), HasSubstr("Cipher is (NONE)"));
  EXPECT_THAT(s_client("-tls1 -cipher 'DEFAULT:@SECLEVEL=0'"), HasSubstr("Cipher is (NONE)"));
  // CBC and non-forward-secret suites are not in the default list.
  EXPECT_THAT(s_client("-tls1_2 -cipher 'ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA'"),
              HasSubstr("Cipher is (NONE)"));
}

// --- Start errors -----------------------------------------------------------------------------

TEST_F(HttpServerTlsTest, StartRefusesAMissingCertificateFile) {
  options_.tls.cert_file = dir_ + "/no-such.pem";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("TLS certificate file"), HasSubstr(dir_ + "/no-such.pem"),
                             HasSubstr("No such file"))));
}

TEST_F(HttpServerTlsTest, StartRefusesACertificateFileThatIsNotPem) {
  options_.tls.cert_file = dir_ + "/ca.key.txt";
  std::ofstream(options_.tls.cert_file) << "not a certificate\n";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(options_.tls.cert_file), HasSubstr("no start line"))));
}

TEST_F(HttpServerTlsTest, StartRefusesAMissingKeyFile) {
  options_.tls.key_file = dir_ + "/no-such.key";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("TLS key file"), HasSubstr(dir_ + "/no-such.key"))));
}

TEST_F(HttpServerTlsTest, StartRefusesAKeyThatDoesNotMatchTheCertificate) {
  const TestCertificate gw = Client("payments-gw");
  options_.tls.key_file = gw.key;  // a good key, of another certificate
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(gw.key), HasSubstr("does not match the certificate"),
                             HasSubstr(server_cert_.cert))));
}

TEST_F(HttpServerTlsTest, StartRefusesAKeyFileOthersMayRead) {
  ASSERT_EQ(::chmod(server_cert_.key.c_str(), 0644), 0);
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(server_cert_.key), HasSubstr("chmod 600"))));
  ASSERT_EQ(::chmod(server_cert_.key.c_str(), 0640), 0);  // the group is refused too
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("chmod 600")));
  ASSERT_EQ(::chmod(server_cert_.key.c_str(), 0400), 0);  // owner-only, read-only: fine
  EXPECT_OK(HttpServer::Start(options_, handler_));
}

TEST_F(HttpServerTlsTest, StartRefusesAnUnusableKeyWithoutQuotingIt) {
  options_.tls.key_file = dir_ + "/garbled.key";
  const std::string secret = "c2VjcmV0LWtleS1tYXRlcmlhbA";
  std::ofstream(options_.tls.key_file) << "-----BEGIN PRIVATE KEY-----\n"
                                       << secret << "\n-----END PRIVATE KEY-----\n";
  ASSERT_EQ(::chmod(options_.tls.key_file.c_str(), 0600), 0);
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(options_.tls.key_file), HasSubstr("private key"),
                             Not(HasSubstr(secret)))));
}

TEST_F(HttpServerTlsTest, StartRefusesAnEncryptedKeyInsteadOfPrompting) {
  const std::string encrypted = dir_ + "/encrypted.key";
  const std::string command =
      absl::StrCat("openssl pkey -in '", server_cert_.key,
                   "' -aes256 -passout pass:hunter2hunter2 -out '", encrypted, "' 2>&1");
  ASSERT_EQ(Shell(command).first, 0);
  ASSERT_EQ(::chmod(encrypted.c_str(), 0600), 0);
  options_.tls.key_file = encrypted;
  EXPECT_THAT(
      HttpServer::Start(options_, handler_),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr(encrypted), HasSubstr("unencrypted"), Not(HasSubstr("hunter2")))));
}

TEST_F(HttpServerTlsTest, StartRefusesAMissingClientCaFile) {
  options_.tls.client_ca_file = dir_ + "/no-such-ca.pem";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("TLS client CA file"), HasSubstr("no-such-ca.pem"))));
}

TEST_F(HttpServerTlsTest, StartRefusesABadCipherList) {
  options_.tls.ciphers = "NOT-A-CIPHER";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("NOT-A-CIPHER"), HasSubstr("no cipher match"))));
  options_.tls.ciphers = "";
  options_.tls.ciphersuites = "TLS_NOT_A_SUITE";
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("TLS_NOT_A_SUITE")));
}

TEST_F(HttpServerTlsTest, StartRefusesAnUnknownMinVersion) {
  for (const char* version : {"1.1", "1.0", "", "TLSv1.2", "1.4"}) {
    options_.tls.min_version = version;
    EXPECT_THAT(HttpServer::Start(options_, handler_),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("min_version")))
        << version;
  }
}

TEST_F(HttpServerTlsTest, StartRefusesTlsFilesWhenTlsIsNotEnabled) {
  options_.tls.enabled = false;
  options_.tls.cert_file = "";
  options_.tls.key_file = "";
  options_.tls.client_ca_file = pki_->CaCert();  // would quietly serve plain HTTP to anyone
  EXPECT_THAT(HttpServer::Start(options_, handler_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not enabled")));
}

// --- Limits over TLS -----------------------------------------------------------------------

TEST_F(HttpServerTlsTest, AnIdleTlsConnectionIsClosedAfterTheIdleTimeout) {
  options_.limits.idle_timeout = Millis(300);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port(), Trusting());
  ASSERT_TRUE(client.connected()) << client.error();
  ASSERT_OK(client.Request("GET", "/x"));
  const Steady::time_point start = Steady::now();
  EXPECT_TRUE(client.WaitForClose(Millis(20000)));
  EXPECT_GE(Steady::now() - start, Millis(250));
  EXPECT_TRUE(Eventually([&] { return server_->stats().timeouts == 1; }));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 0u);
}

TEST_F(HttpServerTlsTest, AStalledHandshakeIsClosedAfterTheRequestTimeout) {
  options_.limits.request_timeout = Millis(300);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient silent(server_->port());  // TCP only: never says hello
  ASSERT_TRUE(silent.connected()) << silent.error();
  EXPECT_TRUE(silent.WaitForClose(Millis(20000)));
  EXPECT_TRUE(Eventually(
      [&] { return !tls_failures().empty() && server_->stats().tls_handshake_failures > 0; }));
  EXPECT_THAT(tls_failures(), ::testing::ElementsAre("timeout"));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 1u);
}

TEST_F(HttpServerTlsTest, ABodyOverTheLimitIs413OverTls) {
  options_.limits.body_bytes = 1024;
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    TestHttpClient client(server_->port(), Trusting());
    ASSERT_TRUE(client.connected()) << client.error();
    ASSERT_OK(client.SendRaw("POST /v1/score HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n"));
    absl::StatusOr<TestHttpResponse> r = client.ReadResponse();
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_EQ(r->Json()["error"]["code"], "payload_too_large");
    EXPECT_TRUE(client.WaitForClose(Millis(10000)));
  }
  {
    TestHttpClient client(server_->port(), Trusting());
    ASSERT_TRUE(client.connected()) << client.error();
    absl::StatusOr<TestHttpResponse> r = client.Request("POST", "/x", std::string(1024, 'b'));
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Json()["body_bytes"], 1024);
  }
  EXPECT_THAT(refused(), ::testing::ElementsAre(std::pair(413, std::string("payload_too_large"))));
}

TEST_F(HttpServerTlsTest, ASenderThatStallsMidRequestGets408OverTls) {
  options_.limits.request_timeout = Millis(1000);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port(), Trusting());
  ASSERT_TRUE(client.connected()) << client.error();
  ASSERT_OK(client.SendRaw("POST /v1/score HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"));
  absl::StatusOr<TestHttpResponse> r = client.ReadResponse();
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_EQ(r->Json()["error"]["code"], "request_timeout");
  EXPECT_TRUE(client.WaitForClose(Millis(10000)));
  EXPECT_EQ(handler_->handled(), 0);
}

TEST_F(HttpServerTlsTest, ConnectionsBeyondTheMaximumAre503OverTls) {
  options_.limits.max_connections = 1;
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient held(server_->port(), Trusting());
  ASSERT_TRUE(held.connected()) << held.error();
  // Authenticated: never evicted to make room for a new connection.
  ASSERT_OK(held.Request("GET", "/a", "", {{"Authorization", "ok"}}));
  TestHttpClient extra(server_->port(), Trusting());
  ASSERT_TRUE(extra.connected()) << extra.error();
  absl::StatusOr<TestHttpResponse> r = extra.ReadResponse();  // answered without asking
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->Json()["error"]["code"], "too_many_connections");
  EXPECT_TRUE(extra.WaitForClose(Millis(10000)));
  EXPECT_EQ(server_->stats().refused, 1u);
  EXPECT_OK(held.Request("GET", "/b"));
}

TEST_F(HttpServerTlsTest, StopAnswersARequestInFlightOverTls) {
  options_.grace = Millis(20000);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port(), Trusting());
  ASSERT_TRUE(client.connected()) << client.error();
  ASSERT_OK(client.SendRaw(TestHttpClient::Format("GET", "/slow")));
  ASSERT_TRUE(handler_->slow_started_.WaitForNotificationWithTimeout(absl::Seconds(20)));
  server_->Stop();
  absl::StatusOr<TestHttpResponse> r = client.ReadResponse();
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Json()["path"], "/slow");
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose(Millis(5000)));
}

TEST_F(HttpServerTlsTest, StopClosesIdleTlsConnectionsPromptly) {
  ASSERT_NO_FATAL_FAILURE(Start());  // idle_timeout 20 s: Stop must not wait for it
  TestHttpClient idle(server_->port(), Trusting());
  ASSERT_TRUE(idle.connected()) << idle.error();
  ASSERT_OK(idle.Request("GET", "/x"));
  TestHttpClient handshaking(server_->port());  // TCP only, in its handshake
  ASSERT_TRUE(handshaking.connected());
  const Steady::time_point start = Steady::now();
  server_->Stop();
  EXPECT_LT(Steady::now() - start, Millis(5000));
  EXPECT_TRUE(idle.WaitForClose(Millis(5000)));
  EXPECT_TRUE(handshaking.WaitForClose(Millis(5000)));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 0u);  // cut short by Stop: not counted
}

}  // namespace
}  // namespace vigil
