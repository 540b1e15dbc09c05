#include "vigil/ingest/internal/json_scanner.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::ingest_internal {
namespace {

using ::testing::HasSubstr;

struct Case {
  std::string json;
  size_t offset;
  const char* path;
  const char* message;
};

TEST(FindJsonSyntaxError, ValidDocuments) {
  for (const char* ok :
       {"{}", "[]", " {\"a\":[1,-2.5e+3,true,false,null,\"x\\u00e9\\n\"]} ", "\"s\"", "0", "-0.0",
        "{\"a\":{\"b\":{}}}", "\"\\ud83d\\ude00\"", "\"\xE2\x82\xAC\xF0\x9F\x98\x80\""}) {
    EXPECT_EQ(FindJsonSyntaxError(ok), std::nullopt) << ok;
  }
}

TEST(FindJsonSyntaxError, LocatesTheFirstError) {
  const Case kCases[] = {
      {"", 0, "$", "empty document"},
      {"{\"a\":}", 5, "$.a", "expected a value"},
      {"{\"a\":1,}", 7, "$", "expected a string key"},
      {"{\"a\" 1}", 5, "$.a", "expected ':'"},
      {"{\"a\":1 \"b\":2}", 7, "$", "expected ',' or '}'"},
      {"{\"a\":[1,2,}", 10, "$.a[2]", "expected a value"},
      {"{\"a\":[1 2]}", 8, "$.a", "expected ',' or ']'"},
      {"{\"a\":\"x", 5, "$.a", "unterminated string"},
      {"{\"a\":01}", 6, "$", "expected ',' or '}'"},
      {"{\"a\":1.}", 7, "$.a", "expected a digit after '.'"},
      {"{\"a\":1e}", 7, "$.a", "digit in the exponent"},
      {"{\"a\":tru}", 5, "$.a", "expected a value"},
      {"{\"a\":\"\\x\"}", 7, "$.a", "invalid escape"},
      {"{\"a\":\"\\u12G4\"}", 8, "$.a", "4 hex digits"},
      {"{\"a\":\"\\udc00\"}", 6, "$.a", "unpaired low surrogate"},
      {"{\"a\":\"\\ud800x\"}", 6, "$.a", "high surrogate without a low"},
      {"{\"a\":\"\x01\"}", 6, "$.a", "control character 0x01"},
      {"{\"a\":\"\xFF\"}", 6, "$.a", "invalid UTF-8"},
      {"{\"a\":\"\xE2\x82\"}", 6, "$.a", "invalid UTF-8"},
      {"{\"a\":\"\xF4\x90\x80\x80\"}", 6, "$.a", "invalid UTF-8"},  // above U+10FFFF
      {"{} x", 3, "$", "after the JSON value"},
      {"{\"odd key\":[}", 12, "$[\"odd key\"][0]", "expected a value"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.json);
    const std::optional<JsonSyntaxError> e = FindJsonSyntaxError(c.json);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->offset, c.offset) << e->message;
    EXPECT_EQ(e->path, c.path);
    EXPECT_THAT(e->message, HasSubstr(c.message));
  }
}

TEST(FindJsonSyntaxError, DeepNestingIsAnErrorNotACrash) {
  const std::string deep(100000, '[');
  const std::optional<JsonSyntaxError> e = FindJsonSyntaxError(deep);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(e->message, HasSubstr("nesting deeper than 1024"));
}

TEST(FindRawScalar, ReturnsTheSourceText) {
  const std::string doc = R"({"amount":{"currency":"USD","value": 0.10 },)"
                          R"("settled_amount":{"value":1e2},"x":[{"value":5}]})";
  EXPECT_EQ(FindRawScalar(doc, {"amount", "value"}), "0.10");
  EXPECT_EQ(FindRawScalar(doc, {"amount", "currency"}), "\"USD\"");
  EXPECT_EQ(FindRawScalar(doc, {"settled_amount", "value"}), "1e2");
  EXPECT_EQ(FindRawScalar(doc, {"amount"}), std::nullopt);  // an object, not a scalar
  EXPECT_EQ(FindRawScalar(doc, {"value"}), std::nullopt);   // only inside arrays
  EXPECT_EQ(FindRawScalar(R"({"a":{"b":"}"},"c":[1,{"d":2}],"e" : -1.5e-3 })", {"e"}), "-1.5e-3");
  EXPECT_EQ(FindRawScalar(R"({"a":"x\"y","b":true})", {"b"}), "true");
  EXPECT_EQ(FindRawScalar(R"({"a":1,"a":2})", {"a"}), "1");  // first occurrence
  EXPECT_EQ(FindRawScalar("[1]", {"a"}), std::nullopt);
}

TEST(AppendJsonPath, QuotesKeysThatAreNotIdentifiers) {
  std::string out;
  AppendJsonPath("$", "amount", &out);
  EXPECT_EQ(out, "$.amount");
  out.clear();
  AppendJsonPath("$.a", "b c", &out);
  EXPECT_EQ(out, "$.a[\"b c\"]");
  out.clear();
  AppendJsonPath("$", "q\"\\", &out);
  EXPECT_EQ(out, "$[\"q\\\"\\\\\"]");
  out.clear();
  AppendJsonPath("$", "", &out);
  EXPECT_EQ(out, "$[\"\"]");
}

}  // namespace
}  // namespace vigil::ingest_internal
