#include "vigil/server/http_server.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <future>
#include <map>
#include <optional>
#include <thread>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/ssl/error.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl/ssl_stream.hpp"
#include "openssl/bio.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/ssl.h"
#include "openssl/x509.h"
#include "vigil/common/json_text.h"
#include "vigil/common/private_file.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/pem_private_key.h"

namespace vigil {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

std::string HttpRequest::MediaType() const {
  const std::string_view type = Header("Content-Type");
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(ToAbsl(type.substr(0, type.find(';')))));
}

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

class SessionBase;

struct HttpServer::State {
  // Declared before the io_context: sessions still queued in it when it is destroyed touch
  // these in their destructors.
  HttpServerOptions options;
  std::shared_ptr<HttpHandler> handler;
  // Set when options.tls.enabled; constant after Start. (Each SSL also holds a reference.)
  std::unique_ptr<net::ssl::context> tls_context;
  std::atomic<uint64_t> accepted{0}, refused{0}, open{0}, requests{0}, timeouts{0},
      tls_handshake_failures{0}, evicted{0};
  // Connections not yet answered a request with a valid credential (open ones only).
  std::atomic<uint64_t> unauthenticated{0};
  std::atomic<bool> stopping{false};
  uint16_t port = 0;
  absl::Mutex mu;
  absl::flat_hash_set<SessionBase*> sessions ABSL_GUARDED_BY(mu);
  // Open connections per source address.
  absl::flat_hash_map<std::string, size_t> per_client ABSL_GUARDED_BY(mu);
  // Unauthenticated connections waiting for a request (from their accept or last answer to
  // their next request head), by when they began to wait: the first is evicted first.
  std::map<uint64_t, SessionBase*> waiting ABSL_GUARDED_BY(mu);
  uint64_t next_wait ABSL_GUARDED_BY(mu) = 0;
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
  void TlsFailed(std::string_view reason) {
    tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    if (options.on_tls_failure) options.on_tls_failure(reason);
  }

  // Whether a new connection, the "from_client"-th open one of its address, is served; "" if
  // so, else the message of its 503. Over max_connections or the unauthenticated share it
  // evicts the connection that has waited the longest, and is refused only if none waits.
  std::string Admit(size_t from_client);
  // Closes the unauthenticated connection that has waited for a request the longest; false
  // when none waits.
  bool EvictOne();
};

namespace {

// How long writing close_notify may take when the server ends a TLS connection.
constexpr std::chrono::milliseconds kTlsShutdownTimeout{1000};

// The default TLS 1.2 cipher list (HttpTlsOptions::ciphers): forward secret and AEAD only.
constexpr char kDefaultCiphers[] = "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL:!PSK";

// "address:port" of the peer; *address gets the address alone. "" when unknown.
std::string Remote(const tcp::socket& socket, std::string* address) {
  boost::system::error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "";
  *address = ep.address().to_string();
  return absl::StrCat(*address, ":", ep.port());
}

// The reason of the first error in this thread's OpenSSL error queue, the root cause ("no start
// line" rather than the "PEM lib" it led to), which it then clears. Reasons never hold key
// material.

// The short reason a server handshake failed, for on_tls_failure.
std::string HandshakeFailureReason(const beast::error_code& ec, SSL* ssl) {
  if (ec == beast::error::timeout) return "timeout";
  if (ec == net::ssl::error::stream_truncated || ec == net::error::eof ||
      ec == net::error::connection_reset) {
    return "the client closed the connection during the handshake";
  }
  if (ec.category() != net::error::get_ssl_category()) return ec.message();
  // Asio keeps the OpenSSL error code as the value.
  const auto code = static_cast<unsigned long>(static_cast<unsigned int>(ec.value()));
  const char* reason = ERR_reason_error_string(code);
  std::string out = reason != nullptr ? reason : ec.message();
  if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK) {
    absl::StrAppend(&out, ": ", X509_verify_cert_error_string(verify));
  }
  return out;
}

// The verified peer certificate's subject, RFC 2253; "" when there is none.
std::string PeerPrincipal(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "";
  std::string out;
  if (X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  return out;
}

}  // namespace

// What HttpServer::State holds of a connection, whatever its stream.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Closes the connection if it is waiting for a request (shutdown); a request being handled
  // is answered first.
  virtual void CloseIfIdle() = 0;
  // Closes the connection if it still waits for a request (then counted as evicted). Called
  // with State::mu held, after taking the connection out of State::waiting.
  virtual void Evict() = 0;
};

std::string HttpServer::State::Admit(size_t from_client) {
  const ServeLimits& l = options.limits;
  if (from_client > l.max_connections_per_client) {
    return absl::StrCat("this client address holds its maximum of ", l.max_connections_per_client,
                        " connections; retry later");
  }
  const auto share_cap = static_cast<uint64_t>(static_cast<double>(l.max_connections) *
                                               l.max_unauthenticated_share);
  const uint64_t unauthenticated_cap = std::max<uint64_t>(1, share_cap);
  if (open.load(std::memory_order_relaxed) <= l.max_connections &&
      unauthenticated.load(std::memory_order_relaxed) <= unauthenticated_cap) {
    return "";
  }
  if (EvictOne()) return "";
  return absl::StrCat("the server holds its maximum of ", l.max_connections,
                      " connections; retry later");
}

bool HttpServer::State::EvictOne() {
  absl::MutexLock lock(&mu);
  if (waiting.empty()) return false;
  SessionBase* oldest = waiting.begin()->second;
  waiting.erase(waiting.begin());
  oldest->Evict();
  return true;
}

// One connection over Stream: beast::tcp_stream (HTTP) or beast::ssl_stream<beast::tcp_stream>
// (HTTPS). Lives as long as an operation (or a pending responder) holds it. Every member
// function runs on the connection's strand, except the constructor, Start and CloseIfIdle.
template <class Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  // "stream_args" after the socket: the ssl::context for HTTPS.
  template <class... Args>
  Session(HttpServer::State* state, tcp::socket&& socket, Args&... stream_args)
      : stream_(std::move(socket), stream_args...),
        request_timer_(stream_.get_executor()),
        state_(state) {
    remote_ = Remote(Lowest().socket(), &address_);
    state_->open.fetch_add(1, std::memory_order_relaxed);
    state_->unauthenticated.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&state_->mu);
    state_->sessions.insert(this);
    from_client_ = ++state_->per_client[address_];
  }
  ~Session() override {
    state_->open.fetch_sub(1, std::memory_order_relaxed);
    if (!authenticated_) state_->unauthenticated.fetch_sub(1, std::memory_order_relaxed);
    absl::MutexLock lock(&state_->mu);
    state_->sessions.erase(this);
    if (wait_key_.has_value()) state_->waiting.erase(*wait_key_);
    const auto it = state_->per_client.find(address_);
    if (it != state_->per_client.end() && --it->second == 0) state_->per_client.erase(it);
  }

  // This connection's place among the open ones of its source address (1: the only one).
  size_t from_client() const { return from_client_; }

  // Serves the connection; "refusal" not empty: answers 503 too_many_connections with it
  // (after the TLS handshake, if any) and closes.
  void Start(std::string refusal) {
    net::dispatch(stream_.get_executor(), [self = Self(), refusal = std::move(refusal)]() mutable {
      self->head_deadline_ = Steady::now() + self->state_->options.limits.header_timeout;
      if (refusal.empty()) self->ListWaiting();
      if constexpr (kTls) {
        self->Handshake(std::move(refusal));
      } else if (!refusal.empty()) {
        self->Refuse(refusal);
      } else {
        self->AwaitRequest();
      }
    });
  }

  void CloseIfIdle() override {
    std::shared_ptr<Session> self = this->weak_from_this().lock();
    if (self == nullptr) return;  // being destroyed
    net::post(stream_.get_executor(), [self = std::move(self)] {
      if (!self->busy_) self->Close();
    });
  }

  void Evict() override ABSL_NO_THREAD_SAFETY_ANALYSIS {  // State::mu is held
    wait_key_.reset();
    std::shared_ptr<Session> self = this->weak_from_this().lock();
    if (self == nullptr) return;  // being destroyed
    net::post(stream_.get_executor(), [self = std::move(self)] {
      // Not if its request came (and is being handled) in the meantime.
      if (!self->waiting_) return;
      self->waiting_ = false;
      self->state_->evicted.fetch_add(1, std::memory_order_relaxed);
      self->Close();
    });
  }

 private:
  using Steady = std::chrono::steady_clock;
  std::shared_ptr<Session> Self() { return this->shared_from_this(); }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // An unauthenticated connection waiting for its next request head may be evicted from now
  // on (until UnlistWaiting). Listed once per wait: the place is kept from its beginning.
  void ListWaiting() {
    if (authenticated_ || waiting_) return;
    waiting_ = true;
    absl::MutexLock lock(&state_->mu);
    wait_key_ = state_->next_wait++;
    state_->waiting.emplace(*wait_key_, this);
  }
  void UnlistWaiting() {
    if (!waiting_) return;
    waiting_ = false;
    absl::MutexLock lock(&state_->mu);
    if (wait_key_.has_value()) state_->waiting.erase(*wait_key_);
    wait_key_.reset();
  }
  // When the wait for the next request head ends: for an unauthenticated connection the
  // earlier of the head deadline and "bound" from now.
  Steady::time_point WaitBound(std::chrono::milliseconds bound) const {
    const Steady::time_point end = Steady::now() + bound;
    return authenticated_ ? end : std::min(end, head_deadline_);
  }

  // TLS: the server handshake, bounded by the request timeout. A failure closes the
  // connection without an answer: there is no channel to send one on.
  void Handshake(std::string refusal) {
    Lowest().expires_at(WaitBound(state_->options.limits.request_timeout));
    stream_.async_handshake(
        net::ssl::stream_base::server,
        [self = Self(), refusal = std::move(refusal)](beast::error_code ec) {
          if (ec) return self->HandshakeFailed(ec);
          self->handshake_done_ = true;
          if (!self->state_->options.tls.client_ca_file.empty()) {
            self->principal_ = PeerPrincipal(self->stream_.native_handle());
          }
          if (!refusal.empty()) return self->Refuse(refusal);
          self->AwaitRequest();
        });
  }

  void HandshakeFailed(const beast::error_code& ec) {
    // A handshake cut short by Stop() is not the client's failure.
    if (!state_->stopping.load()) {
      state_->TlsFailed(HandshakeFailureReason(ec, stream_.native_handle()));
    }
    Close();
  }

  void Refuse(const std::string& message) {
    Write(HttpError(503, "too_many_connections", "", message), /*keep_alive=*/false,
          /*retry_after=*/true);
  }

  // Waits (idle timeout; unauthenticated: at most to the head deadline) for the first byte of
  // the next request.
  void AwaitRequest() {
    busy_ = false;
    if (state_->stopping.load()) return Finish();
    ListWaiting();
    if (buffer_.size() > 0) return ReadRequest();
    Lowest().expires_at(WaitBound(state_->options.limits.idle_timeout));
    stream_.async_read_some(buffer_.prepare(4096), [self = Self()](beast::error_code ec, size_t n) {
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
    // written. This timer cancels the read instead; OnRead then answers 408. (Under TLS the
    // cancelled read leaves the session usable: only a socket read was pending.)
    // An unauthenticated connection's head must also be complete by its head deadline.
    Lowest().expires_never();
    const uint64_t read = ++reads_;
    reading_ = true;
    timed_out_ = false;
    const Steady::time_point request_end = Steady::now() + state_->options.limits.request_timeout;
    head_bound_ = !authenticated_ && head_deadline_ < request_end;
    request_timer_.expires_at(head_bound_ ? head_deadline_ : request_end);
    AwaitReadTimer(read, request_end);
    http::async_read(stream_, buffer_, *parser_, [self = Self()](beast::error_code ec, size_t) {
      self->reading_ = false;
      self->request_timer_.cancel();
      self->OnRead(ec);
    });
  }

  // At the head deadline a request whose head is complete gets the rest of its own bound;
  // otherwise (and at that bound) the read is cancelled, and OnRead answers 408.
  void AwaitReadTimer(uint64_t read, Steady::time_point request_end) {
    request_timer_.async_wait([self = Self(), read, request_end](beast::error_code ec) {
      if (ec || !self->reading_ || read != self->reads_) return;  // cancelled or stale
      if (self->head_bound_ && self->parser_->is_header_done()) {
        self->head_bound_ = false;
        self->request_timer_.expires_at(request_end);
        return self->AwaitReadTimer(read, request_end);
      }
      self->timed_out_ = true;
      beast::error_code ignored;
      self->Lowest().socket().cancel(ignored);
    });
  }

  void OnRead(beast::error_code ec) {
    UnlistWaiting();
    if (ec) {
      if (ec == http::error::end_of_stream) return Close();
      const ServeLimits& limits = state_->options.limits;
      if (timed_out_ || ec == beast::error::timeout) {
        state_->timeouts.fetch_add(1, std::memory_order_relaxed);
        if (head_bound_) {
          return Fail(408, "request_timeout", "",
                      absl::StrCat("the request head was not complete within ",
                                   limits.header_timeout.count(),
                                   " ms of the connection's start or last answer"));
        }
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
      // Beast's HTTP parse errors.
      if (ec.category() == http::make_error_code(http::error::body_limit).category()) {
        return Fail(400, "bad_request", "", absl::StrCat("malformed HTTP request: ", ec.message()));
      }
      return Close();  // the network (or TLS) failed: nobody to answer
    }
    state_->requests.fetch_add(1, std::memory_order_relaxed);
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    keep_alive_ = req.keep_alive();
    Lowest().expires_never();  // the handler bounds its own time (the SLA budget)

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
    request.tls = kTls;
    request.client_principal = principal_;

    state_->handler->Handle(std::move(request), [self = Self()](HttpResponse response) mutable {
      Session* s = self.get();
      net::post(s->stream_.get_executor(),
                [self = std::move(self), response = std::move(response)]() mutable {
                  if (response.authenticated && !self->authenticated_) {
                    self->authenticated_ = true;
                    self->state_->unauthenticated.fetch_sub(1, std::memory_order_relaxed);
                  }
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
    Lowest().expires_after(state_->options.limits.request_timeout);
    http::async_write(stream_, *response_,
                      [self = Self(), keep_alive](beast::error_code ec, size_t) {
                        self->response_.reset();
                        if (ec) return self->Close();
                        if (!keep_alive) return self->Finish();
                        self->head_deadline_ =
                            Steady::now() + self->state_->options.limits.header_timeout;
                        self->AwaitRequest();
                      });
  }

  // Ends a connection on which nothing is pending. TLS: first sends close_notify, so that a
  // client reading to the end sees a clean end rather than a truncation. It does not wait for the
  // client's close_notify (RFC 8446 6.1 does not require it): Stop() would wait on clients that
  // never send one. Then, or at once without TLS, Close().
  void Finish() {
    if constexpr (kTls) {
      if (handshake_done_) {
        busy_ = true;  // CloseIfIdle would cut the write short; it is bounded anyway
        SSL* ssl = stream_.native_handle();
        // As if the client's close_notify had come: SSL_shutdown then only sends ours.
        SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_RECEIVED_SHUTDOWN);
        Lowest().expires_after(std::min<std::chrono::milliseconds>(
            kTlsShutdownTimeout, state_->options.limits.request_timeout));
        stream_.async_shutdown([self = Self()](beast::error_code) { self->Close(); });
        return;
      }
    }
    Close();
  }

  // Closes the socket at once, cancelling what is pending on it.
  void Close() {
    beast::error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    Lowest().close();
  }

  Stream stream_;
  net::steady_timer request_timer_;  // bounds reading one request (see ReadRequest)
  HttpServer::State* state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::string remote_;
  std::string address_;  // remote_'s address, without the port
  size_t from_client_ = 0;  // constant after construction
  std::optional<uint64_t> wait_key_;  // its place in State::waiting; guarded by State::mu
  bool waiting_ = false;        // listed in State::waiting (or evicted and not yet closed)
  bool authenticated_ = false;  // answered a request with a valid credential
  Steady::time_point head_deadline_{};  // unauthenticated: the next head is due by then
  bool head_bound_ = false;     // the read's timer is at head_deadline_
  std::string principal_;        // HttpRequest::client_principal, set after the handshake
  bool handshake_done_ = false;  // TLS only
  bool keep_alive_ = true;
  bool busy_ = false;       // reading or handling a request, or writing a response
  bool reading_ = false;    // a request is being read
  bool timed_out_ = false;  // ... and request_timer_ cancelled the read
  uint64_t reads_ = 0;      // requests begun: tells a stale timer expiry from the live one
};

namespace {

using PlainSession = Session<beast::tcp_stream>;
using TlsSession = Session<beast::ssl_stream<beast::tcp_stream>>;

void Accept(HttpServer::State* s) {
  s->acceptor.async_accept(net::make_strand(s->ioc), [s](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !s->acceptor.is_open()) return;
    if (!ec) {
      s->accepted.fetch_add(1, std::memory_order_relaxed);
      // Counted as open from construction: the checks include this connection.
      const auto start = [s](auto& session) {
        std::string refusal = s->Admit(session->from_client());
        if (!refusal.empty()) {
          s->refused.fetch_add(1, std::memory_order_relaxed);
          s->Refused(503, "too_many_connections");
        }
        session->Start(std::move(refusal));
      };
      if (s->tls_context != nullptr) {
        auto session = std::make_shared<TlsSession>(s, std::move(socket), *s->tls_context);
        start(session);
      } else {
        auto session = std::make_shared<PlainSession>(s, std::move(socket));
        start(session);
      }
    }
    // An accept error (say, out of file descriptors) must not end the accept loop.
    Accept(s);
  });
}

// OK when "path" names a file this process can open for reading; else the errno's status,
// naming "what" and the path.
absl::Status CheckReadable(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), " '", path, "' is a directory, not a PEM file"));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int error = errno;
    return absl::ErrnoToStatus(error, absl::StrCat(ToAbsl(what), " '", path, "' cannot be read"));
  }
  std::fclose(f);
  return absl::OkStatus();
}

absl::Status LoadCertificateAndKey(const HttpTlsOptions& tls, SSL_CTX* ctx) {
  if (absl::Status s = CheckReadable(tls.cert_file, "TLS certificate file"); !s.ok()) return s;
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS certificate file '", tls.cert_file,
                     "' holds no usable PEM certificate: ", crypto::TakeOpenSslReason()));
  }
  // Before reading it: a key others may read is refused whatever it holds.
  if (absl::Status s = CheckOwnerOnly(tls.key_file, "TLS key file"); !s.ok()) return s;
  if (absl::Status s = CheckReadable(tls.key_file, "TLS key file"); !s.ok()) return s;
  absl::StatusOr<EVP_PKEY*> key = crypto::ReadUnencryptedPrivateKey(tls.key_file, "TLS key file");
  if (!key.ok()) return key.status();
  const bool matches = X509_check_private_key(SSL_CTX_get0_certificate(ctx), *key) == 1;
  ERR_clear_error();
  const bool used = matches && SSL_CTX_use_PrivateKey(ctx, *key) == 1;
  EVP_PKEY_free(*key);
  if (!matches) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key file '", tls.key_file,
                                                   "' does not match the certificate in '",
                                                   tls.cert_file, "'"));
  }
  if (!used) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TLS key file '", tls.key_file, "' cannot be used: ", crypto::TakeOpenSslReason()));
  }
  return absl::OkStatus();
}

// Mutual TLS: trust the CAs in client_ca_file for client certificates, and require one.
absl::Status LoadClientCa(const std::string& path, SSL_CTX* ctx) {
  if (absl::Status s = CheckReadable(path, "TLS client CA file"); !s.ok()) return s;
  const auto unusable = [&path] {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS client CA file '", path,
                     "' holds no usable PEM certificate: ", crypto::TakeOpenSslReason()));
  };
  if (SSL_CTX_load_verify_locations(ctx, path.c_str(), nullptr) != 1) return unusable();
  // The CA names the server sends in its CertificateRequest, so clients pick the right cert.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(path.c_str());
  if (names == nullptr) return unusable();
  SSL_CTX_set_client_CA_list(ctx, names);  // takes ownership
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<net::ssl::context>> MakeTlsContext(const HttpTlsOptions& tls) {
  int min_version = 0;
  if (tls.min_version == "1.2") {
    min_version = TLS1_2_VERSION;
  } else if (tls.min_version == "1.3") {
    min_version = TLS1_3_VERSION;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS min_version must be \"1.2\" or \"1.3\", not '", tls.min_version, "'"));
  }
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate file and a key file");
  }
  ERR_clear_error();
  auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  // Renegotiation is refused: a client could make the server repeat handshakes at will.
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 |
                               SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot set the TLS minimum version: ", crypto::TakeOpenSslReason()));
  }
  const std::string ciphers = tls.ciphers.empty() ? kDefaultCiphers : tls.ciphers;
  if (SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("TLS 1.2 cipher list '", ciphers,
                                                   "' is rejected: ", crypto::TakeOpenSslReason()));
  }
  if (!tls.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, tls.ciphersuites.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS 1.3 cipher suites '", tls.ciphersuites,
                     "' are rejected: ", crypto::TakeOpenSslReason()));
  }
  // Sessions may be resumed (tickets, or the cache): with a client CA set, OpenSSL refuses
  // resumption unless the sessions carry a context id.
  static constexpr unsigned char kSessionContext[] = "vigil";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  if (absl::Status s = LoadCertificateAndKey(tls, ctx); !s.ok()) return s;
  if (!tls.client_ca_file.empty()) {
    if (absl::Status s = LoadClientCa(tls.client_ca_file, ctx); !s.ok()) return s;
  }
  return context;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, std::shared_ptr<HttpHandler> handler) {
  if (options.io_threads < 1) {
    return absl::InvalidArgumentError("io_threads must be at least 1");
  }
  const HttpTlsOptions& tls = options.tls;
  if (!tls.enabled &&
      (!tls.cert_file.empty() || !tls.key_file.empty() || !tls.client_ca_file.empty())) {
    // Refused rather than ignored: a server meant to require client certificates must not
    // quietly serve plain HTTP to anyone.
    return absl::InvalidArgumentError(
        "TLS files are set but TLS is not enabled: enable it or remove them");
  }
  std::unique_ptr<net::ssl::context> tls_context;
  if (tls.enabled) {
    absl::StatusOr<std::unique_ptr<net::ssl::context>> made = MakeTlsContext(tls);
    if (!made.ok()) return made.status();
    tls_context = *std::move(made);
  }
  auto state = std::make_shared<State>(std::move(options));
  state->handler = std::move(handler);
  state->tls_context = std::move(tls_context);
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
    for (SessionBase* session : s->sessions) session->CloseIfIdle();
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
  st.tls_handshake_failures = state_->tls_handshake_failures.load();
  st.evicted = state_->evicted.load();
  return st;
}

}  // namespace vigil
