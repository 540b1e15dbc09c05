// HttpServer: HTTP/1.1 over TCP (Boost.Beast behind this header), keep-alive, a fixed number of
// I/O threads, and the limits that keep one client from holding the server:
//  - a connection waits for its next request at most idle_timeout, then is closed;
//  - once a request's first byte arrives it must be complete within request_timeout (a slow
//    sender gets 408 and is closed), and a response that the client does not read within the
//    same time closes the connection;
//  - headers above header_bytes get 431, bodies above body_bytes 413 (both then close);
//  - connections above max_connections are answered 503 too_many_connections and closed.
// Errors the server answers itself carry the same JSON error body as the API's own.
//
// Requests are handed to an HttpHandler on an I/O thread; the handler answers through the
// responder, at once or later from any thread (exactly once). The I/O threads never wait for a
// decision, so a request waiting for the batcher holds no thread that reads sockets.
//
// Shutdown: StopAccepting() closes the listening socket; Stop() closes idle connections, gives
// requests in flight up to `grace` to be answered, then stops the I/O threads. The handler must
// not call a responder after Stop() returns (stop its workers first).
//
// Thread safety: Start/StopAccepting/Stop from one controlling thread; port() and stats() from any.
#ifndef VIGIL_SERVER_HTTP_SERVER_H_
#define VIGIL_SERVER_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "vigil/server/serve_config.h"

namespace vigil {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target before '?'
  std::string query;   // the target after '?', undecoded; "" when none
  std::string body;
  std::vector<HttpHeader> headers;
  std::string remote;  // "address:port" of the client

  // The first header of that name (case-insensitive); "" when absent.
  std::string_view Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<HttpHeader> headers;  // besides Content-Type, Content-Length, Server, Connection
  // For the request log when status >= 400 (the body holds them too): not sent.
  std::string error_code;
  std::string error_message;
};

// An error response: status and the JSON error body (JsonErrorBody), code and message kept
// for the request log.
HttpResponse HttpError(int status, std::string_view code, std::string_view field,
                       std::string_view message);

using HttpResponder = absl::AnyInvocable<void(HttpResponse) &&>;

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Called on an I/O thread; must not block. "respond" must be called exactly once.
  virtual void Handle(HttpRequest request, HttpResponder respond) = 0;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see port())
  int io_threads = 2;
  ServeLimits limits;
  std::chrono::milliseconds grace{5000};  // Stop(): how long requests in flight may finish
  // Told of every error the server answers itself (408, 413, 431, 400 unparsable, 503
  // too_many_connections), for metrics; called on I/O threads.
  std::function<void(int status, std::string_view code)> on_refused;
};

class HttpServer {
 public:
  // Binds, listens and starts the I/O threads. Errors: the address does not resolve or cannot
  // be bound (kUnavailable, naming host:port and the reason).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           std::shared_ptr<HttpHandler> handler);
  ~HttpServer();  // Stop()

  uint16_t port() const;  // the bound port
  void StopAccepting();
  void Stop();

  struct Stats {
    uint64_t accepted = 0;  // connections
    uint64_t refused = 0;   // connections over max_connections
    uint64_t open = 0;      // connections now
    uint64_t requests = 0;
    uint64_t timeouts = 0;  // idle or request timeouts that closed a connection
  };
  Stats stats() const;

  struct State;  // Beast and Asio live in the .cc

 private:
  explicit HttpServer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_HTTP_SERVER_H_
