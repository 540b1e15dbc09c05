// HttpServer: HTTP/1.1 over TCP (Boost.Beast behind this header), keep-alive, a fixed number of
// I/O threads, and the limits that keep one client from holding the server:
//  - a connection waits for its next request at most idle_timeout, then is closed; one that
//    has not yet been answered a request with a valid credential (HttpResponse::authenticated)
//    must complete its next request head within header_timeout, counted from its accept or
//    its last answer;
//  - once a request's first byte arrives it must be complete within request_timeout (a slow
//    sender gets 408 and is closed), and a response that the client does not read within the
//    same time closes the connection;
//  - headers above header_bytes get 431, bodies above body_bytes 413 (both then close);
//  - connections above max_connections, or above max_connections_per_client from one source
//    address, are answered 503 too_many_connections and closed. Connections without a valid
//    credential hold at most max_unauthenticated_share of max_connections: a new connection
//    beyond that share (or beyond max_connections) first closes the unauthenticated connection
//    that has waited for a request the longest (evicted), so a flood of silent connections
//    cannot lock authenticated clients out.
// With options.tls it speaks HTTPS instead (TLS 1.2/1.3, OpenSSL), optionally mutual TLS; the
// same limits hold, and the TLS handshake must complete within request_timeout. A failed
// handshake closes the connection unanswered. When the server ends a TLS connection after an
// answer (Connection: close) it sends close_notify first (without waiting for the client's);
// idle connections closed by a timeout or by Stop() are closed at once.
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
  bool tls = false;    // the request came over TLS
  // Under mutual TLS, the verified client certificate's subject in RFC 2253 form as OpenSSL
  // prints it (XN_FLAG_RFC2253), e.g. "CN=payments-gw,O=vigil tests"; "" otherwise.
  std::string client_principal;

  // The first header of that name (case-insensitive); "" when absent.
  std::string_view Header(std::string_view name) const;
  // The media type of its Content-Type, lower case, without parameters ("" when none).
  std::string MediaType() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<HttpHeader> headers;  // besides Content-Type, Content-Length, Server, Connection
  // The request carried a valid credential: its connection counts as authenticated from now
  // on (idle_timeout instead of header_timeout; never evicted). Not sent.
  bool authenticated = false;
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

// HTTPS. Files are PEM. Start() refuses a configuration it cannot fully honour: a file that
// cannot be read or parsed, a key that does not match the certificate, a key file its group or
// others may read or write, a cipher list that selects nothing, an unknown min_version.
struct HttpTlsOptions {
  bool enabled = false;  // false: plain HTTP, and the three files below must be left empty
  // The server certificate, then any intermediates up to (not including) the root.
  std::string cert_file;
  // Its private key, unencrypted (no passphrases), mode 0600 or stricter.
  std::string key_file;
  // Mutual TLS when set: every client must present a certificate that chains to a CA in this
  // file (and, if it names an extended key usage, allows clientAuth), or the handshake fails.
  // Its subject becomes HttpRequest::client_principal.
  std::string client_ca_file;
  // TLS 1.2 cipher list, OpenSSL syntax. "": forward-secret AEAD only,
  // "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL:!PSK".
  std::string ciphers;
  // TLS 1.3 cipher suites, OpenSSL syntax ("TLS_AES_256_GCM_SHA384:..."); "": OpenSSL's default
  // (all three AEAD suites).
  std::string ciphersuites;
  // The oldest protocol accepted: "1.2" or "1.3". SSLv3, TLS 1.0 and 1.1 are never accepted.
  std::string min_version = "1.2";
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
  HttpTlsOptions tls;
  // Told of every failed TLS handshake (the connection is then closed without an answer), for
  // metrics; "reason" is short and holds no secret: OpenSSL's reason, e.g. "peer did not return
  // a certificate", "certificate verify failed: certificate has expired", "unsupported
  // protocol", "http request" (plain HTTP to the TLS port); "timeout" (not complete within
  // request_timeout); "the client closed the connection during the handshake" (as TCP health
  // checks do). Handshakes cut short by Stop() are not reported. Called on I/O threads.
  std::function<void(std::string_view reason)> on_tls_failure;
};

class HttpServer {
 public:
  // Binds, listens and starts the I/O threads. Errors: the address does not resolve or cannot
  // be bound (kUnavailable, naming host:port and the reason); with TLS, a TLS option is invalid
  // (kInvalidArgument), a file cannot be read (kNotFound, kPermissionDenied, ...) or the key
  // file is not private to its owner (kPermissionDenied); each names the option, the file and
  // the reason, never key material.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           std::shared_ptr<HttpHandler> handler);
  ~HttpServer();  // Stop()

  uint16_t port() const;  // the bound port
  void StopAccepting();
  void Stop();

  struct Stats {
    uint64_t accepted = 0;  // connections
    uint64_t refused = 0;   // connections over max_connections or max_connections_per_client
    uint64_t evicted = 0;   // unauthenticated connections closed to make room (see above)
    uint64_t open = 0;      // connections now
    uint64_t requests = 0;
    uint64_t timeouts = 0;  // idle, header or request timeouts that closed a connection
    uint64_t tls_handshake_failures = 0;  // as told to on_tls_failure (timeouts too)
  };
  Stats stats() const;

  struct State;  // Beast and Asio live in the .cc

 private:
  explicit HttpServer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_HTTP_SERVER_H_
