#include "vigil/loadgen/internal/http_codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::loadgen_internal {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;
using State = HttpResponseParser::State;

constexpr size_t kMax = 4096;

TEST(AppendRequest, WritesPostWithBodyAndHeaders) {
  LoadRequest request;
  request.path = "/v1/screen";
  request.body = R"({"id":1})";
  request.headers = {{"X-Trace", "abc"}};
  std::string out = "prefix|";
  ASSERT_OK(AppendRequest(request, "127.0.0.1:8080", &out));
  EXPECT_EQ(out,
            "prefix|POST /v1/screen HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
            "Content-Type: application/json\r\nContent-Length: 8\r\nX-Trace: abc\r\n\r\n"
            R"({"id":1})");
}

TEST(AppendRequest, GetWithoutBodyHasNoContentHeadersAndAnExplicitHostWins) {
  LoadRequest request;
  request.method = "GET";
  request.path = "/healthz?full=1";
  request.headers = {{"host", "vigil.local"}};
  std::string out;
  ASSERT_OK(AppendRequest(request, "127.0.0.1:8080", &out));
  EXPECT_EQ(out, "GET /healthz?full=1 HTTP/1.1\r\nhost: vigil.local\r\n\r\n");
}

TEST(AppendRequest, EmptyPostStillSendsContentLength) {
  LoadRequest request;
  std::string out;
  ASSERT_OK(AppendRequest(request, "h:1", &out));
  EXPECT_EQ(out, "POST / HTTP/1.1\r\nHost: h:1\r\nContent-Length: 0\r\n\r\n");
}

TEST(AppendRequest, RejectsWhatWouldCorruptTheStream) {
  struct Case {
    const char* why;
    LoadRequest request;
    const char* message;
  };
  const Case cases[] = {
      {"method must be a token", {.method = "PO ST"}, "method"},
      {"method must not be empty", {.method = ""}, "method"},
      {"path must start with /", {.path = "v1/screen"}, "path"},
      {"a space would end the request target", {.path = "/a b"}, "path"},
      {"CR/LF would inject headers", {.path = "/a\r\nX: y"}, "path"},
      {"content type with LF", {.content_type = "a\nb"}, "content_type"},
      {"header name with a space", {.headers = {{"X Y", "1"}}}, "header name"},
      {"header value with CRLF", {.headers = {{"X", "1\r\nY: 2"}}}, "CR, LF"},
      {"framing is the generator's", {.headers = {{"Content-Length", "3"}}}, "Content-Length"},
      {"framing is the generator's", {.headers = {{"transfer-encoding", "chunked"}}}, "transfer"},
      {"keep-alive is the generator's", {.headers = {{"Connection", "close"}}}, "Connection"},
  };
  for (const Case& c : cases) {
    std::string out;
    EXPECT_THAT(AppendRequest(c.request, "h:1", &out),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.why;
  }
}

// Feeds "wire" to a fresh parser in chunks of "chunk" bytes, then EOF when "eof".
State ParseInChunks(HttpResponseParser* parser, const std::string& wire, size_t chunk, bool eof,
                    bool head_request = false) {
  parser->Reset(head_request);
  State state = State::kIncomplete;
  for (size_t n = std::min(chunk, wire.size());; n = std::min(n + chunk, wire.size())) {
    state = parser->Parse(absl::string_view(wire).substr(0, n), false);
    if (state != State::kIncomplete || n == wire.size()) break;
  }
  if (state == State::kIncomplete && eof) state = parser->Parse(wire, true);
  return state;
}

TEST(HttpResponseParser, ParsesOneResponseWhateverTheChunking) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nContent-TYPE: application/json\r\ncontent-length: 17\r\n\r\n"
      R"({"degraded":true})"
      "HTTP/1.1 503";  // the start of a next response is not consumed
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, wire.size()}) {
    HttpResponseParser parser(kMax);
    ASSERT_EQ(ParseInChunks(&parser, wire, chunk, false), State::kComplete) << chunk;
    EXPECT_EQ(parser.status(), 200);
    EXPECT_FALSE(parser.close());
    EXPECT_EQ(parser.body(wire), R"({"degraded":true})");
    EXPECT_EQ(parser.size(), wire.size() - 12);
  }
}

TEST(HttpResponseParser, ConnectionHeaderAndVersionDecideClose) {
  struct Case {
    const char* why;
    std::string head;
    bool close;
  };
  const Case cases[] = {
      {"1.1 defaults to keep-alive", "HTTP/1.1 200 OK\r\n", false},
      {"close token, any case", "HTTP/1.1 200 OK\r\nconnection: CLOSE\r\n", true},
      {"close in a token list", "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\n", true},
      {"1.0 defaults to close", "HTTP/1.0 200 OK\r\n", true},
      {"1.0 with keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n", false},
      {"no reason phrase", "HTTP/1.1 200\r\n", false},
  };
  for (const Case& c : cases) {
    const std::string wire = c.head + "Content-Length: 2\r\n\r\nok";
    HttpResponseParser parser(kMax);
    parser.Reset(false);
    ASSERT_EQ(parser.Parse(wire, false), State::kComplete) << c.why;
    EXPECT_EQ(parser.close(), c.close) << c.why;
  }
}

TEST(HttpResponseParser, BodyWithoutContentLengthRunsToTheClose) {
  const std::string wire = "HTTP/1.1 200 OK\r\n\r\npartial body";
  HttpResponseParser parser(kMax);
  parser.Reset(false);
  EXPECT_EQ(parser.Parse(wire, false), State::kIncomplete);
  ASSERT_EQ(parser.Parse(wire, true), State::kComplete);
  EXPECT_EQ(parser.body(wire), "partial body");
  EXPECT_TRUE(parser.close());
}

TEST(HttpResponseParser, ResponsesWithoutBody) {
  HttpResponseParser parser(kMax);
  // HEAD: Content-Length describes the GET body that is not sent.
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
  parser.Reset(/*head_request=*/true);
  ASSERT_EQ(parser.Parse(head, false), State::kComplete);
  EXPECT_EQ(parser.size(), head.size());
  // 204 and 304 never have a body.
  for (const char* status : {"204", "304"}) {
    const std::string wire = absl::StrCat("HTTP/1.1 ", status, " X\r\n\r\n");
    parser.Reset(false);
    ASSERT_EQ(parser.Parse(wire, false), State::kComplete) << status;
    EXPECT_EQ(parser.size(), wire.size());
    EXPECT_FALSE(parser.close());
  }
}

TEST(HttpResponseParser, SkipsInterimResponses) {
  const std::string wire =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx";
  for (size_t chunk : {size_t{1}, wire.size()}) {
    HttpResponseParser parser(kMax);
    ASSERT_EQ(ParseInChunks(&parser, wire, chunk, false), State::kComplete);
    EXPECT_EQ(parser.status(), 201);
    EXPECT_EQ(parser.size(), wire.size());
    EXPECT_EQ(parser.body(wire), "x");
  }
}

TEST(HttpResponseParser, ErrorsHaveFixedMessages) {
  struct Case {
    const char* why;
    std::string wire;
    bool eof;
    const char* error;
  };
  const std::string too_long_head = "HTTP/1.1 200 OK\r\nX: " + std::string(70 << 10, 'a');
  const Case cases[] = {
      {"not HTTP", "THIS IS NOT HTTP\r\n\r\n", false, "malformed status line"},
      {"two-digit status", "HTTP/1.1 20 OK\r\n\r\n", false, "malformed status line"},
      {"no space after status", "HTTP/1.1 200OK\r\n\r\n", false, "malformed status line"},
      {"status below 100", "HTTP/1.1 099 X\r\n\r\n", false, "malformed status line"},
      {"HTTP/2 preface", "HTTP/2 200\r\n\r\n", false, "malformed status line"},
      {"header without colon", "HTTP/1.1 200 OK\r\nBroken\r\n\r\n", false, "malformed header line"},
      {"obsolete line folding", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", false,
       "malformed header line"},
      {"signed length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false,
       "malformed Content-Length"},
      {"overflowing length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
       false, "malformed Content-Length"},
      {"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", false,
       "conflicting Content-Length headers"},
      {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", false,
       "chunked transfer encoding is not supported"},
      {"other coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false,
       "Transfer-Encoding is not supported"},
      {"upgrade", "HTTP/1.1 101 Switching Protocols\r\n\r\n", false,
       "101 Switching Protocols is not supported"},
      {"body over the limit", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", false,
       "response larger than max_response_bytes"},
      {"close-delimited body over the limit", "HTTP/1.1 200 OK\r\n\r\n" + std::string(5000, 'x'),
       false, "response larger than max_response_bytes"},
      {"endless head", too_long_head, false, "response head too large"},
      {"closed before anything", "", true, "connection closed before the response"},
      {"closed in the head", "HTTP/1.1 200 OK\r\nContent-", true,
       "connection closed in the response head"},
      {"closed in the body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true,
       "connection closed in the response body"},
  };
  for (const Case& c : cases) {
    HttpResponseParser parser(kMax);
    parser.Reset(false);
    ASSERT_EQ(parser.Parse(c.wire, c.eof), State::kError) << c.why;
    EXPECT_EQ(parser.error(), c.error) << c.why;
    EXPECT_EQ(parser.Parse(c.wire, c.eof), State::kError) << "sticky: " << c.why;
  }
}

}  // namespace
}  // namespace vigil::loadgen_internal
