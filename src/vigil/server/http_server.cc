#include "vigil/server/http_server.h"

#include <atomic>
#include <future>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "vigil/common/json_text.h"

namespace vigil {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (absl::EqualsIgnoreCase(absl::string_view(h.name.data(), h.name.size()),
                               absl::string_view(name.data(), name.size()))) {
      return h.value;
    }
  }
  return {};
}


HttpResponse HttpError(int status, std::string_view code, std::string_view field,
                       std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = JsonErrorBody(code, field, message);
  r.error_code = std::string(code);
  r.error_message = std::string(message);
  return r;
}

class Session;

struct HttpServer::State {
  // Declared before the io_context: sessions still queued in it when it is destroyed touch
  // these in their destructors.
  HttpServerOptions options;
  std::shared_ptr<HttpHandler> handler;
  std::atomic<uint64_t> accepted{0}, refused{0}, open{0}, requests{0}, timeouts{0};
  std::atomic<bool> stopping{false};
  uint16_t port = 0;
  absl::Mutex mu;
  absl::flat_hash_set<Session*> sessions ABSL_GUARDED_BY(mu);
  net::io_context ioc;
  // Keeps the I/O threads running while nothing is pending (acceptor closed, no connections),
  // until Stop().
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  bool accepting = true;  // controlling thread only

  explicit State(HttpServerOptions o)
      : options(std::move(o)), ioc(options.io_threads), acceptor(net::make_strand(ioc)) {}

  void Refused(int status, std::string_view code) {
    if (options.on_refused) options.on_refused(status, code);
  }
};

namespace {

std::string Remote(const tcp::socket& socket) {
  boost::system::error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "";
  return absl::StrCat(ep.address().to_string(), ":", ep.port());
}

}  // namespace

// One connection. Lives as long as an operation (or a pending responder) holds it.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, HttpServer::State* state)
      : stream_(std::move(socket)), request_timer_(stream_.get_executor()), state_(state) {
    state_->open.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&state_->mu);
    state_->sessions.insert(this);
  }
  ~Session() {
    state_->open.fetch_sub(1, std::memory_order_relaxed);
    absl::MutexLock lock(&state_->mu);
    state_->sessions.erase(this);
  }

  void Start() {
    remote_ = Remote(stream_.socket());
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->AwaitRequest(); });
  }

  // Answers 503 too_many_connections and closes.
  void Refuse() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->Write(HttpError(503, "too_many_connections", "",
                            absl::StrCat("the server holds its maximum of ",
                                         self->state_->options.limits.max_connections,
                                         " connections; retry later")),
                  /*keep_alive=*/false, /*retry_after=*/true);
    });
  }

  // Closes the connection if it is waiting for a request (shutdown); a request being handled
  // is answered first.
  void CloseIfIdle() {
    std::shared_ptr<Session> self = weak_from_this().lock();
    if (self == nullptr) return;  // being destroyed
    net::post(stream_.get_executor(), [self = std::move(self)] {
      if (!self->busy_) self->Close();
    });
  }

 private:
  // Waits (idle timeout) for the first byte of the next request.
  void AwaitRequest() {
    busy_ = false;
    if (state_->stopping.load()) return Close();
    if (buffer_.size() > 0) return ReadRequest();
    stream_.expires_after(state_->options.limits.idle_timeout);
    stream_.async_read_some(
        buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
          if (ec) {
            if (ec == beast::error::timeout) {
              self->state_->timeouts.fetch_add(1, std::memory_order_relaxed);
            }
            return self->Close();
          }
          self->buffer_.commit(n);
          self->ReadRequest();
        });
  }

  void ReadRequest() {
    busy_ = true;
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(state_->options.limits.header_bytes));
    parser_->body_limit(state_->options.limits.body_bytes);
    // Not the stream's own timeout: on expiry that closes the socket, and the 408 could not be
    // written. This timer cancels the read instead; OnRead then answers 408.
    stream_.expires_never();
    const uint64_t read = ++reads_;
    reading_ = true;
    timed_out_ = false;
    request_timer_.expires_after(state_->options.limits.request_timeout);
    request_timer_.async_wait([self = shared_from_this(), read](beast::error_code ec) {
      if (ec || !self->reading_ || read != self->reads_) return;  // cancelled or stale
      self->timed_out_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->reading_ = false;
                       self->request_timer_.cancel();
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      if (ec == http::error::end_of_stream) return Close();
      const ServeLimits& limits = state_->options.limits;
      if (timed_out_ || ec == beast::error::timeout) {
        state_->timeouts.fetch_add(1, std::memory_order_relaxed);
        return Fail(408, "request_timeout", "",
                    absl::StrCat("the request was not complete within ",
                                 limits.request_timeout.count(), " ms"));
      }
      if (ec == http::error::body_limit) {
        return Fail(413, "payload_too_large", "Content-Length",
                    absl::StrCat("the body exceeds the limit of ", limits.body_bytes, " bytes"));
      }
      if (ec == http::error::header_limit) {
        return Fail(431, "headers_too_large", "",
                    absl::StrCat("the request line and headers exceed the limit of ",
                                 limits.header_bytes, " bytes"));
      }
      if (ec.category() == http::make_error_code(http::error::body_limit).category()) {  // Beast's HTTP parse errors
        return Fail(400, "bad_request", "", absl::StrCat("malformed HTTP request: ", ec.message()));
      }
      return Close();  // the network failed: nobody to answer
    }
    state_->requests.fetch_add(1, std::memory_order_relaxed);
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    keep_alive_ = req.keep_alive();
    stream_.expires_never();  // the handler bounds its own time (the SLA budget)

    HttpRequest request;
    request.method = std::string(req.method_string());
    const beast::string_view target = req.target();
    const size_t q = target.find('?');
    request.path = std::string(target.substr(0, q));
    if (q != beast::string_view::npos) request.query = std::string(target.substr(q + 1));
    request.headers.reserve(8);
    for (const auto& field : req) {
      request.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    }
    request.body = std::move(req.body());
    request.remote = remote_;

    state_->handler->Handle(
        std::move(request), [self = shared_from_this()](HttpResponse response) mutable {
          Session* s = self.get();
          net::post(s->stream_.get_executor(),
                    [self = std::move(self), response = std::move(response)]() mutable {
                      const bool overloaded = response.status == 503;
                      self->Write(std::move(response), self->keep_alive_, overloaded);
                    });
        });
  }

  void Fail(int status, std::string_view code, std::string_view field, std::string message) {
    state_->Refused(status, code);
    Write(HttpError(status, code, field, message), /*keep_alive=*/false, /*retry_after=*/false);
  }

  void Write(HttpResponse r, bool keep_alive, bool retry_after) {
    busy_ = true;
    if (state_->stopping.load()) keep_alive = false;
    response_.emplace();
    response_->version(11);
    response_->result(static_cast<unsigned>(r.status));
    response_->set(http::field::server, "vigil");
    response_->set(http::field::content_type, r.content_type);
    bool has_retry_after = false;
    for (const HttpHeader& h : r.headers) {
      response_->set(h.name, h.value);
      has_retry_after |= absl::EqualsIgnoreCase(h.name, "Retry-After");
    }
    if (retry_after && !has_retry_after) response_->set(http::field::retry_after, "1");
    response_->body() = std::move(r.body);
    response_->keep_alive(keep_alive);
    response_->prepare_payload();
    stream_.expires_after(state_->options.limits.request_timeout);
    http::async_write(stream_, *response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        self->response_.reset();
                        if (ec || !keep_alive) return self->Close();
                        self->AwaitRequest();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  net::steady_timer request_timer_;  // bounds reading one request (see ReadRequest)
  HttpServer::State* state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::string remote_;
  bool keep_alive_ = true;
  bool busy_ = false;  // reading or handling a request, or writing a response
  bool reading_ = false;    // a request is being read
  bool timed_out_ = false;  // ... and request_timer_ cancelled the read
  uint64_t reads_ = 0;      // requests begun: tells a stale timer expiry from the live one
};

namespace {

void Accept(HttpServer::State* s) {
  s->acceptor.async_accept(net::make_strand(s->ioc), [s](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !s->acceptor.is_open()) return;
    if (!ec) {
      s->accepted.fetch_add(1, std::memory_order_relaxed);
      auto session = std::make_shared<Session>(std::move(socket), s);
      if (s->open.load(std::memory_order_relaxed) > s->options.limits.max_connections) {
        s->refused.fetch_add(1, std::memory_order_relaxed);
        s->Refused(503, "too_many_connections");
        session->Refuse();
      } else {
        session->Start();
      }
    }
    // An accept error (say, out of file descriptors) must not end the accept loop.
    Accept(s);
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, std::shared_ptr<HttpHandler> handler) {
  if (options.io_threads < 1) {
    return absl::InvalidArgumentError("io_threads must be at least 1");
  }
  auto state = std::make_shared<State>(std::move(options));
  state->handler = std::move(handler);
  const std::string where = absl::StrCat(state->options.host, ":", state->options.port);
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(state->options.host, ec);
  tcp::endpoint endpoint;
  if (ec) {
    tcp::resolver resolver(state->ioc);
    auto results = resolver.resolve(state->options.host, std::to_string(state->options.port), ec);
    if (ec || results.empty()) {
      return absl::UnavailableError(
          absl::StrCat("cannot resolve listen host '", state->options.host, "': ", ec.message()));
    }
    endpoint = results.begin()->endpoint();
  } else {
    endpoint = tcp::endpoint(address, state->options.port);
  }
  tcp::acceptor& acceptor = state->acceptor;
  auto fail = [&](std::string_view what) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", where, ": ",
                                               absl::string_view(what.data(), what.size()), ": ",
                                               ec.message()));
  };
  if (acceptor.open(endpoint.protocol(), ec); ec) return fail("open");
  if (acceptor.set_option(net::socket_base::reuse_address(true), ec); ec) return fail("reuse");
  if (acceptor.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) return fail("listen");
  state->port = acceptor.local_endpoint().port();
  Accept(state.get());
  state->work.emplace(state->ioc.get_executor());
  for (int i = 0; i < state->options.io_threads; ++i) {
    state->threads.emplace_back([s = state.get()] { s->ioc.run(); });
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const { return state_->port; }

void HttpServer::StopAccepting() {
  State* s = state_.get();
  if (!s->accepting) return;
  s->accepting = false;
  std::promise<void> closed;
  net::dispatch(s->acceptor.get_executor(), [s, &closed] {
    beast::error_code ignored;
    s->acceptor.close(ignored);
    closed.set_value();
  });
  if (!s->threads.empty()) closed.get_future().wait();
}

void HttpServer::Stop() {
  State* s = state_.get();
  if (s->threads.empty()) return;
  StopAccepting();
  s->stopping.store(true);
  {
    absl::MutexLock lock(&s->mu);
    for (Session* session : s->sessions) session->CloseIfIdle();
  }
  // Idle connections close at once; one with a request in flight closes once its answer is
  // written to the end (stopping: Connection: close). Wait for every connection to be gone, up
  // to grace: waiting only for the handler's answer would stop the I/O threads before the
  // closes posted above ran, or in the middle of writing a large answer.
  {
    absl::MutexLock lock(&s->mu);
    const auto closed = [s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu) { return s->sessions.empty(); };
    s->mu.AwaitWithTimeout(absl::Condition(&closed), absl::FromChrono(s->options.grace));
  }
  s->work.reset();
  s->ioc.stop();
  for (std::thread& t : s->threads) t.join();
  s->threads.clear();
}

HttpServer::Stats HttpServer::stats() const {
  Stats st;
  st.accepted = state_->accepted.load();
  st.refused = state_->refused.load();
  st.open = state_->open.load();
  st.requests = state_->requests.load();
  st.timeouts = state_->timeouts.load();
  return st;
}

}  // namespace vigil
