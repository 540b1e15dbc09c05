#include "vigil/loadgen/internal/http_codec.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace vigil::loadgen_internal {
namespace {

// RFC 9110 tchar.
bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (absl::string_view("!#$%&'*+-.^_`|~").find(c) == absl::string_view::npos) return false;
  }
  return true;
}

bool HasCrLfNul(absl::string_view s) {
  return s.find_first_of(absl::string_view("\r\n\0", 3)) != s.npos;
}

bool IsValidPath(absl::string_view path) {
  if (path.empty() || (path[0] != '/' && path != "*")) return false;
  return std::none_of(path.begin(), path.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

}  // namespace

absl::Status AppendRequest(const LoadRequest& request, absl::string_view host, std::string* out) {
  if (!IsToken(request.method)) {
    return absl::InvalidArgumentError(
        absl::StrCat("method \"", request.method, "\" is not a token"));
  }
  if (!IsValidPath(request.path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("path \"", request.path,
                     "\" must start with '/' and have no spaces or control characters"));
  }
  if (HasCrLfNul(request.content_type)) {
    return absl::InvalidArgumentError("content_type contains CR, LF or NUL");
  }
  bool has_host = false;
  for (const auto& [name, value] : request.headers) {
    if (!IsToken(name)) {
      return absl::InvalidArgumentError(absl::StrCat("header name \"", name, "\" is not a token"));
    }
    if (HasCrLfNul(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("header ", name, ": value contains CR, LF or NUL"));
    }
    if (absl::EqualsIgnoreCase(name, "content-length") ||
        absl::EqualsIgnoreCase(name, "transfer-encoding") ||
        absl::EqualsIgnoreCase(name, "connection")) {
      return absl::InvalidArgumentError(
          absl::StrCat("header ", name, " is written by the load generator"));
    }
    has_host = has_host || absl::EqualsIgnoreCase(name, "host");
  }

  absl::StrAppend(out, request.method, " ", request.path, " HTTP/1.1\r\n");
  if (!has_host) absl::StrAppend(out, "Host: ", host, "\r\n");
  if (!request.body.empty() && !request.content_type.empty()) {
    absl::StrAppend(out, "Content-Type: ", request.content_type, "\r\n");
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    absl::StrAppend(out, "Content-Length: ", request.body.size(), "\r\n");
  }
  for (const auto& [name, value] : request.headers) absl::StrAppend(out, name, ": ", value, "\r\n");
  absl::StrAppend(out, "\r\n", request.body);
  return absl::OkStatus();
}

HttpResponseParser::HttpResponseParser(size_t max_response_bytes)
    : max_response_bytes_(max_response_bytes) {}

void HttpResponseParser::Reset(bool head_request) {
  *this = HttpResponseParser(max_response_bytes_);
  head_request_ = head_request;
}

HttpResponseParser::State HttpResponseParser::Fail(absl::string_view why) {
  error_ = why;
  state_ = State::kError;
  return state_;
}

HttpResponseParser::State HttpResponseParser::Parse(absl::string_view data, bool eof) {
  if (state_ != State::kIncomplete) return state_;
  while (!have_head_) {
    const size_t end = data.find("\r\n\r\n", scan_from_);
    if (end == absl::string_view::npos) {
      if (data.size() - head_start_ > kMaxHeadBytes) return Fail("response head too large");
      // The terminator may straddle this chunk and the next: resume 3 bytes back.
      scan_from_ = std::max(head_start_, data.size() < 3 ? size_t{0} : data.size() - 3);
      if (!eof) return State::kIncomplete;
      return Fail(data.size() == head_start_ ? "connection closed before the response"
                                             : "connection closed in the response head");
    }
    if (end + 4 - head_start_ > kMaxHeadBytes) return Fail("response head too large");
    if (const char* why = ParseHead(data.substr(head_start_, end + 2 - head_start_))) {
      return Fail(why);
    }
    if (status_ >= 100 && status_ < 200) {
      // Interim (100 Continue, 103 Early Hints): the final response follows.
      if (status_ == 101) return Fail("101 Switching Protocols is not supported");
      head_start_ = scan_from_ = end + 4;
      continue;
    }
    have_head_ = true;
    body_offset_ = end + 4;
  }

  const bool no_body = head_request_ || status_ == 204 || status_ == 304;
  if (no_body) {
    body_size_ = 0;
  } else if (has_length_) {
    if (content_length_ > max_response_bytes_ - std::min(max_response_bytes_, body_offset_)) {
      return Fail("response larger than max_response_bytes");
    }
    if (data.size() - body_offset_ < content_length_) {
      return eof ? Fail("connection closed in the response body") : State::kIncomplete;
    }
    body_size_ = static_cast<size_t>(content_length_);
  } else {
    // No Content-Length: the body runs to the close (RFC 9112 section 6.3).
    if (data.size() > max_response_bytes_) return Fail("response larger than max_response_bytes");
    if (!eof) return State::kIncomplete;
    body_size_ = data.size() - body_offset_;
    close_ = true;
  }
  if (http10_ && !keep_alive_) close_ = true;
  state_ = State::kComplete;
  return state_;
}

const char* HttpResponseParser::ParseHead(absl::string_view head) {
  // Each response's head starts afresh (an interim response's headers do not carry over).
  status_ = 0;
  close_ = keep_alive_ = has_length_ = false;
  content_length_ = 0;

  const size_t eol = head.find("\r\n");
  const absl::string_view line = head.substr(0, eol);
  // "HTTP/1.x SSS[ reason]"
  if (line.size() < 12 || !absl::StartsWith(line, "HTTP/1.") ||
      !absl::ascii_isdigit(static_cast<unsigned char>(line[7])) || line[8] != ' ' ||
      (line.size() > 12 && line[12] != ' ')) {
    return "malformed status line";
  }
  for (int i = 9; i < 12; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(line[i]))) {
      return "malformed status line";
    }
    status_ = status_ * 10 + (line[i] - '0');
  }
  if (status_ < 100) return "malformed status line";
  http10_ = line[7] == '0';

  absl::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    const size_t next = rest.find("\r\n");  // the head ends in CRLF, so this is found
    if (const char* why = ParseHeader(rest.substr(0, next))) return why;
    rest.remove_prefix(next + 2);
  }
  return nullptr;
}

const char* HttpResponseParser::ParseHeader(absl::string_view line) {
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
    return "malformed header line";
  }
  const absl::string_view name = line.substr(0, colon);
  const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
  if (absl::EqualsIgnoreCase(name, "content-length")) {
    if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) {
          return absl::ascii_isdigit(static_cast<unsigned char>(c));
        })) {
      return "malformed Content-Length";
    }
    uint64_t n = 0;
    for (char c : value) n = n * 10 + static_cast<uint64_t>(c - '0');
    if (has_length_ && n != content_length_) return "conflicting Content-Length headers";
    has_length_ = true;
    content_length_ = n;
  } else if (absl::EqualsIgnoreCase(name, "transfer-encoding")) {
    return absl::StrContains(absl::AsciiStrToLower(value), "chunked")
               ? "chunked transfer encoding is not supported"
               : "Transfer-Encoding is not supported";
  } else if (absl::EqualsIgnoreCase(name, "connection")) {
    for (absl::string_view token : absl::StrSplit(value, ',')) {
      token = absl::StripAsciiWhitespace(token);
      if (absl::EqualsIgnoreCase(token, "close")) close_ = true;
      if (absl::EqualsIgnoreCase(token, "keep-alive")) keep_alive_ = true;
    }
  }
  return nullptr;
}

}  // namespace vigil::loadgen_internal
