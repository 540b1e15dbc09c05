#include "vigil/server/http_server.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::TestHttpClient;
using testing::TestHttpResponse;
using Millis = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// Echoes the request as JSON. "/slow" is answered from another thread after slow_delay, with
// slow_body_bytes of body: the handler contract's "later, from any thread".
class EchoHandler final : public HttpHandler {
 public:
  ~EchoHandler() override { JoinResponders(); }

  void Handle(HttpRequest request, HttpResponder respond) override {
    handled_.fetch_add(1);
    if (request.path == "/slow") {
      absl::MutexLock lock(&mu_);
      responders_.emplace_back([this, respond = std::move(respond)]() mutable {
        std::this_thread::sleep_for(slow_delay);
        HttpResponse r;
        r.content_type = "text/plain";
        r.body.assign(slow_body_bytes, 'x');
        std::move(respond)(std::move(r));
      });
      slow_started_.Notify();
      return;
    }
    nlohmann::json j = {{"method", request.method}, {"path", request.path},
                        {"query", request.query},   {"body", request.body},
                        {"remote", request.remote}};
    j["x_test"] = std::string(request.Header("x-test"));
    HttpResponse r;
    r.body = j.dump();
    // The tests' credential: "Authorization: ok".
    r.authenticated = request.Header("authorization") == "ok";
    std::move(respond)(std::move(r));
  }

  void JoinResponders() {
    std::vector<std::thread> threads;
    {
      absl::MutexLock lock(&mu_);
      threads.swap(responders_);
    }
    for (std::thread& t : threads) t.join();
  }

  int handled() const { return handled_.load(); }

  Millis slow_delay{300};
  size_t slow_body_bytes = 5;
  absl::Notification slow_started_;

 private:
  std::atomic<int> handled_{0};
  absl::Mutex mu_;
  std::vector<std::thread> responders_ ABSL_GUARDED_BY(mu_);
};

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest() {
    options_.limits.request_timeout = Millis(2000);
    options_.limits.idle_timeout = Millis(5000);
    options_.on_refused = [this](int status, std::string_view code) {
      absl::MutexLock lock(&refused_mu_);
      refused_.emplace_back(status, std::string(code));
    };
  }
  ~HttpServerTest() override {
    if (server_ != nullptr) server_->Stop();
    handler_->JoinResponders();
  }

  void Start() {
    auto server = HttpServer::Start(options_, handler_);
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  std::vector<std::pair<int, std::string>> refused() {
    absl::MutexLock lock(&refused_mu_);
    return refused_;
  }

  // Expects an error answer: the status, the JSON error code, and the connection then closed.
  void ExpectError(TestHttpClient& client, int status, const std::string& code) {
    absl::StatusOr<TestHttpResponse> r = client.ReadResponse();
    ASSERT_OK(r);
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->Header("Content-Type"), "application/json");
    const nlohmann::json j = r->Json();
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["error"]["code"], code) << r->body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
    EXPECT_TRUE(client.WaitForClose(Millis(5000))) << "the connection stays open after " << status;
  }

  HttpServerOptions options_;
  std::shared_ptr<EchoHandler> handler_ = std::make_shared<EchoHandler>();
  std::unique_ptr<HttpServer> server_;
  absl::Mutex refused_mu_;
  std::vector<std::pair<int, std::string>> refused_ ABSL_GUARDED_BY(refused_mu_);
};

TEST_F(HttpServerTest, KeepsAConnectionAliveAcrossRequests) {
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.connected()) << client.error();
  absl::StatusOr<TestHttpResponse> first =
      client.Request("POST", "/v1/score?dry=1", R"({"a":1})", {{"X-Test", "one"}});
  ASSERT_OK(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->Header("Server"), "vigil");
  const nlohmann::json a = first->Json();
  EXPECT_EQ(a["method"], "POST");
  EXPECT_EQ(a["path"], "/v1/score");
  EXPECT_EQ(a["query"], "dry=1");
  EXPECT_EQ(a["body"], R"({"a":1})");
  EXPECT_EQ(a["x_test"], "one");  // headers by any case
  // Routing (404, 405) is the handler's business: any method and path reach it.
  absl::StatusOr<TestHttpResponse> second = client.Request("DELETE", "/no/such/route");
  ASSERT_OK(second);
  EXPECT_EQ(second->status, 200);
  const nlohmann::json b = second->Json();
  EXPECT_EQ(b["method"], "DELETE");
  EXPECT_EQ(b["path"], "/no/such/route");
  EXPECT_EQ(b["remote"], a["remote"]);  // the same connection
  EXPECT_THAT(a["remote"].get<std::string>(), HasSubstr("127.0.0.1:"));
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 2u);
  EXPECT_EQ(handler_->handled(), 2);
}

TEST_F(HttpServerTest, ABodyOverTheLimitIs413) {
  options_.limits.body_bytes = 1024;
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    // Declared too long: refused from the headers, before any body is read.
    TestHttpClient client(server_->port());
    ASSERT_OK(client.SendRaw(
        "POST /v1/score HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        "Content-Length: 4096\r\n\r\n"));
    ExpectError(client, 413, "payload_too_large");
  }
  {
    // Chunked, with no length declared: refused once the body read passes the limit.
    TestHttpClient client(server_->port());
    const std::string chunk(2000, 'a');
    ASSERT_OK(client.SendRaw(absl::StrCat(
        "POST /v1/score HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n", chunk,
        "\r\n0\r\n\r\n")));
    ExpectError(client, 413, "payload_too_large");
  }
  {
    // At the limit: accepted.
    TestHttpClient client(server_->port());
    absl::StatusOr<TestHttpResponse> ok = client.Request("POST", "/x", std::string(1024, 'b'));
    ASSERT_OK(ok);
    EXPECT_EQ(ok->status, 200);
  }
  EXPECT_EQ(handler_->handled(), 1);
  EXPECT_THAT(refused(), ::testing::ElementsAre(std::pair(413, std::string("payload_too_large")),
                                                std::pair(413, std::string("payload_too_large"))));
}

TEST_F(HttpServerTest, HeadersOverTheLimitAre431) {
  options_.limits.header_bytes = 1024;
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port());
  ASSERT_OK(client.SendRaw(absl::StrCat("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ",
                                        std::string(3000, 'h'), "\r\n\r\n")));
  ExpectError(client, 431, "headers_too_large");
  EXPECT_EQ(handler_->handled(), 0);
  EXPECT_THAT(refused(), ::testing::ElementsAre(std::pair(431, std::string("headers_too_large"))));
}

TEST_F(HttpServerTest, ASenderThatStallsMidRequestGets408) {
  options_.limits.request_timeout = Millis(200);
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    // The headers complete, the body three bytes short of its length.
    TestHttpClient client(server_->port());
    const Steady::time_point start = Steady::now();
    ASSERT_OK(client.SendRaw(
        "POST /v1/score HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcdefg"));
    ExpectError(client, 408, "request_timeout");
    EXPECT_GE(Steady::now() - start, Millis(150));  // not before the timeout
  }
  {
    // Stalled inside the headers.
    TestHttpClient client(server_->port());
    ASSERT_OK(client.SendRaw("GET /healthz HTTP/1.1\r\nHo"));
    ExpectError(client, 408, "request_timeout");
  }
  EXPECT_EQ(handler_->handled(), 0);
  EXPECT_GE(server_->stats().timeouts, 2u);
  EXPECT_THAT(refused(), ::testing::ElementsAre(std::pair(408, std::string("request_timeout")),
                                                std::pair(408, std::string("request_timeout"))));
}

TEST_F(HttpServerTest, AnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  options_.limits.idle_timeout = Millis(200);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port());
  ASSERT_OK(client.Request("GET", "/healthz"));
  const Steady::time_point start = Steady::now();
  EXPECT_TRUE(client.WaitForClose(Millis(10000)));
  EXPECT_GE(Steady::now() - start, Millis(150));
  // A connection that never sends a byte is closed the same way.
  TestHttpClient silent(server_->port());
  EXPECT_TRUE(silent.WaitForClose(Millis(10000)));
  // Counted once the read fails, which may be just after the client saw the close.
  const Steady::time_point give_up = Steady::now() + Millis(5000);
  while (server_->stats().timeouts < 2 && Steady::now() < give_up) {
    std::this_thread::sleep_for(Millis(2));
  }
  EXPECT_EQ(server_->stats().timeouts, 2u);
}

TEST_F(HttpServerTest, ConnectionsBeyondTheMaximumAre503) {
  options_.limits.max_connections = 2;
  ASSERT_NO_FATAL_FAILURE(Start());
  // Authenticated: never evicted to make room. One after the other: two silent connections
  // at once would exceed the unauthenticated share (one of two), and the second would evict
  // the first.
  TestHttpClient a(server_->port());
  ASSERT_OK(a.Request("GET", "/a", "", {{"Authorization", "ok"}}));
  TestHttpClient b(server_->port());
  ASSERT_OK(b.Request("GET", "/b", "", {{"Authorization", "ok"}}));
  {
    TestHttpClient c(server_->port());
    absl::StatusOr<TestHttpResponse> r = c.ReadResponse();  // answered without asking
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->Json()["error"]["code"], "too_many_connections");
    EXPECT_FALSE(r->Header("Retry-After").empty());
    EXPECT_TRUE(c.WaitForClose(Millis(5000)));
  }
  EXPECT_EQ(server_->stats().refused, 1u);
  EXPECT_THAT(refused(),
              ::testing::ElementsAre(std::pair(503, std::string("too_many_connections"))));
  // The held connections still work; once one closes, a new one is served.
  absl::StatusOr<TestHttpResponse> again = a.Request("GET", "/a2");
  ASSERT_OK(again);
  EXPECT_EQ(again->status, 200);
  a.Close();
  const Steady::time_point give_up = Steady::now() + Millis(5000);
  while (server_->stats().open > 1 && Steady::now() < give_up) {
    std::this_thread::sleep_for(Millis(2));
  }
  ASSERT_EQ(server_->stats().open, 1u);
  TestHttpClient d(server_->port());
  absl::StatusOr<TestHttpResponse> r = d.Request("GET", "/d");
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 200);
}

// Waits (bounded) until the server counts at most "open" connections.
void AwaitOpenAtMost(const HttpServer& server, uint64_t open) {
  const Steady::time_point give_up = Steady::now() + Millis(5000);
  while (server.stats().open > open && Steady::now() < give_up) {
    std::this_thread::sleep_for(Millis(2));
  }
}

// Many connections that send nothing, from one address: beyond max_connections_per_client they
// are refused at once, a client from another address is served at once, and those held are
// closed once header_timeout has passed without a request head.
TEST_F(HttpServerTest, SilentConnectionsFromOneClientAreCappedAndClosedAfterTheHeaderTimeout) {
  options_.limits.max_connections = 200;  // the unauthenticated share is not the subject
  options_.limits.max_connections_per_client = 16;
  options_.limits.header_timeout = Millis(1500);
  options_.limits.idle_timeout = Millis(60000);
  ASSERT_NO_FATAL_FAILURE(Start());
  const Steady::time_point opened = Steady::now();
  std::vector<std::unique_ptr<TestHttpClient>> silent;
  for (int i = 0; i < 40; ++i) {
    silent.push_back(std::make_unique<TestHttpClient>(server_->port()));
    ASSERT_TRUE(silent.back()->connected()) << silent.back()->error();
  }
  // The 24 beyond the per-client limit are answered 503 without asking, and closed.
  int refused_now = 0;
  for (size_t i = 16; i < silent.size(); ++i) {
    absl::StatusOr<TestHttpResponse> r = silent[i]->ReadResponse();
    ASSERT_OK(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->Json()["error"]["code"], "too_many_connections");
    EXPECT_THAT(r->body, HasSubstr("client address"));
    EXPECT_FALSE(r->Header("Retry-After").empty());
    ++refused_now;
  }
  EXPECT_EQ(refused_now, 24);
  EXPECT_EQ(server_->stats().refused, 24u);
  // Another client (another loopback address) is served while the 16 are held.
  TestHttpClient fresh(server_->port(), Millis(10000), "127.0.0.2");
  ASSERT_TRUE(fresh.connected()) << fresh.error();
  absl::StatusOr<TestHttpResponse> served = fresh.Request("GET", "/fresh");
  ASSERT_OK(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_THAT(served->Json()["remote"].get<std::string>(), HasSubstr("127.0.0.2:"));
  EXPECT_LT(Steady::now() - opened, Millis(1500)) << "served only after the silent ones closed";
  // The 16 held are closed for want of a request head, after header_timeout, not idle_timeout.
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_TRUE(silent[i]->WaitForClose(Millis(10000))) << i;
  }
  EXPECT_GE(Steady::now() - opened, Millis(1400));  // not before the bound (less timer slack)
  EXPECT_LT(Steady::now() - opened, Millis(10000));
  silent.clear();
  fresh.Close();
  AwaitOpenAtMost(*server_, 0);
  EXPECT_EQ(server_->stats().open, 0u);
  EXPECT_GE(server_->stats().timeouts, 16u);
}

// Connections without a credential hold at most their share of max_connections: a new
// connection beyond it closes the unauthenticated one idle the longest, so silent connections
// from many addresses cannot starve an authenticated client, nor keep a new one out.
TEST_F(HttpServerTest, UnauthenticatedConnectionsAreEvictedOldestFirstToMakeRoom) {
  options_.limits.max_connections = 8;
  options_.limits.max_unauthenticated_share = 0.5;  // 4
  options_.limits.max_connections_per_client = 100;
  options_.limits.header_timeout = Millis(60000);  // eviction, not the timeout, is the subject
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient trusted(server_->port());
  ASSERT_OK(trusted.Request("GET", "/t", "", {{"Authorization", "ok"}}));
  std::vector<std::unique_ptr<TestHttpClient>> silent;
  for (int i = 0; i < 4; ++i) {
    silent.push_back(std::make_unique<TestHttpClient>(server_->port()));
    ASSERT_TRUE(silent.back()->connected());
  }
  // All four held; then each new one closes the oldest silent one.
  const Steady::time_point give_up = Steady::now() + Millis(5000);
  while (server_->stats().accepted < 5 && Steady::now() < give_up) {
    std::this_thread::sleep_for(Millis(2));
  }
  for (int i = 0; i < 3; ++i) {
    silent.push_back(std::make_unique<TestHttpClient>(server_->port()));
    ASSERT_TRUE(silent.back()->connected());
    EXPECT_TRUE(silent[static_cast<size_t>(i)]->WaitForClose(Millis(5000))) << i;
  }
  EXPECT_EQ(server_->stats().evicted, 3u);
  EXPECT_EQ(server_->stats().refused, 0u);
  // A new client (no credential yet) is served, evicting the oldest silent one in turn.
  TestHttpClient fresh(server_->port());
  absl::StatusOr<TestHttpResponse> r = fresh.Request("GET", "/fresh", "", {{"Authorization", "ok"}});
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(silent[3]->WaitForClose(Millis(5000)));
  EXPECT_EQ(server_->stats().evicted, 4u);
  // The authenticated connections were never touched.
  absl::StatusOr<TestHttpResponse> again = trusted.Request("GET", "/t2");
  ASSERT_OK(again);
  EXPECT_EQ(again->status, 200);
  absl::StatusOr<TestHttpResponse> again2 = fresh.Request("GET", "/f2");
  ASSERT_OK(again2);
  EXPECT_EQ(again2->status, 200);
  // The newest silent ones are still open: evicted oldest first.
  for (size_t i = 4; i < silent.size(); ++i) {
    EXPECT_FALSE(silent[i]->WaitForClose(Millis(50))) << i;
  }
}

TEST_F(HttpServerTest, AMalformedRequestIs400) {
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    TestHttpClient client(server_->port());
    ASSERT_OK(client.SendRaw("GARBAGE\r\n\r\n"));
    ExpectError(client, 400, "bad_request");
  }
  {
    TestHttpClient client(server_->port());
    ASSERT_OK(client.SendRaw("GET /healthz HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n"));
    ExpectError(client, 400, "bad_request");
  }
  EXPECT_EQ(handler_->handled(), 0);
}

TEST_F(HttpServerTest, StopAnswersARequestInFlightBeforeReturning) {
  options_.grace = Millis(10000);
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient idle(server_->port());
  ASSERT_OK(idle.Request("GET", "/warm"));
  TestHttpClient client(server_->port());
  ASSERT_OK(client.SendRaw(TestHttpClient::Format("GET", "/slow")));
  ASSERT_TRUE(handler_->slow_started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  server_->Stop();
  absl::StatusOr<TestHttpResponse> r = client.ReadResponse();
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "xxxxx");
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose(Millis(5000)));
  EXPECT_TRUE(idle.WaitForClose(Millis(5000)));  // idle connections are closed at once
}

// A response in flight is written to the end before Stop returns, however large: Stop must wait
// for the write, not only for the handler's answer.
TEST_F(HttpServerTest, StopFinishesWritingALargeResponse) {
  options_.grace = Millis(10000);
  handler_->slow_delay = Millis(100);
  handler_->slow_body_bytes = 32 << 20;
  ASSERT_NO_FATAL_FAILURE(Start());
  TestHttpClient client(server_->port(), Millis(10000));
  ASSERT_OK(client.SendRaw(TestHttpClient::Format("GET", "/slow")));
  absl::StatusOr<TestHttpResponse> r;
  std::thread reader([&] { r = client.ReadResponse(); });
  ASSERT_TRUE(handler_->slow_started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  server_->Stop();
  reader.join();
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.size(), handler_->slow_body_bytes);
}

TEST_F(HttpServerTest, StopWithNothingInFlightReturnsPromptly) {
  ASSERT_NO_FATAL_FAILURE(Start());  // idle_timeout 5 s: Stop must not wait for it
  TestHttpClient idle(server_->port());
  ASSERT_OK(idle.Request("GET", "/x"));
  const Steady::time_point start = Steady::now();
  server_->Stop();
  EXPECT_LT(Steady::now() - start, Millis(3000));
  EXPECT_TRUE(idle.WaitForClose(Millis(1000)));
  EXPECT_FALSE(TestHttpClient(server_->port()).Request("GET", "/x").ok());  // not listening
}

}  // namespace
}  // namespace vigil
