// The HTTP/1.1 wire format of the load generator: AppendRequest writes a LoadRequest, and
// HttpResponseParser reads one response at a time from a connection's receive buffer,
// incrementally (it remembers how far it got, so bytes are scanned once).
//
// The parser supports what a keep-alive client without pipelining needs: the status line
// (HTTP/1.0 or 1.1), headers, a body delimited by Content-Length or, without one, by the server
// closing; interim 1xx responses are skipped; HEAD, 204 and 304 responses have no body.
// Transfer-Encoding (chunked) is an error: vigil's server never sends it. Error messages are
// fixed strings, so callers may count errors by message.
//
// Private to the loadgen module. Thread safety: AppendRequest is a pure function;
// HttpResponseParser is externally synchronized.
#ifndef VIGIL_LOADGEN_INTERNAL_HTTP_CODEC_H_
#define VIGIL_LOADGEN_INTERNAL_HTTP_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "vigil/loadgen/http_load.h"

namespace vigil::loadgen_internal {

// Checks "request" against the LoadRequest rules and appends its wire form to "*out".
// "host" is the Host header's value, written unless request.headers has a Host.
// Errors: kInvalidArgument naming the offending part; "*out" may then hold a partial request.
absl::Status AppendRequest(const LoadRequest& request, absl::string_view host, std::string* out);

class HttpResponseParser {
 public:
  // Longest accepted status line plus headers, interim responses included.
  static constexpr size_t kMaxHeadBytes = 64 << 10;

  enum class State { kIncomplete, kComplete, kError };

  // "max_response_bytes": a response (head and body) longer than this is an error.
  explicit HttpResponseParser(size_t max_response_bytes);

  // Starts a new response; "head_request": it answers a HEAD request (no body).
  void Reset(bool head_request);

  // Parses "data": every byte received since Reset, the same prefix on each call plus whatever
  // arrived since. "eof": the server has closed, no more bytes will come. Once kComplete or
  // kError is returned, later calls return it again until Reset.
  State Parse(absl::string_view data, bool eof);

  // After kComplete: the final status code (100..999); whether the connection must be closed
  // after this response (Connection: close, HTTP/1.0 without keep-alive, or a body delimited
  // by the close); the bytes of "data" the response spans (interim responses included); and
  // the body within "data".
  int status() const { return status_; }
  bool close() const { return close_; }
  size_t size() const { return body_offset_ + body_size_; }
  absl::string_view body(absl::string_view data) const {
    return data.substr(body_offset_, body_size_);
  }

  // After kError: why, as a fixed string.
  absl::string_view error() const { return error_; }

 private:
  // Parse the head (the status line and header lines, each ending in CRLF) and one header line
  // into the fields below. Return nullptr, or why the response is malformed.
  const char* ParseHead(absl::string_view head);
  const char* ParseHeader(absl::string_view line);
  State Fail(absl::string_view why);

  // Constant after construction.
  size_t max_response_bytes_;

  bool head_request_ = false;
  State state_ = State::kIncomplete;
  bool have_head_ = false;
  size_t head_start_ = 0;  // start of the current (possibly interim) response head
  size_t scan_from_ = 0;   // where to resume looking for the end of the head
  int status_ = 0;
  bool http10_ = false;
  bool close_ = false;
  bool keep_alive_ = false;
  bool has_length_ = false;
  uint64_t content_length_ = 0;
  size_t body_offset_ = 0;
  size_t body_size_ = 0;
  absl::string_view error_;
};

}  // namespace vigil::loadgen_internal

#endif  // VIGIL_LOADGEN_INTERNAL_HTTP_CODEC_H_
