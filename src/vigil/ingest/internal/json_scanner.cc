#include "vigil/ingest/internal/json_scanner.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace vigil::ingest_internal {
namespace {

bool IsIdentifier(std::string_view key) {
  if (key.empty()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Appends ".key", or ["key"] when the key is not an identifier.
void AppendKey(std::string_view key, std::string* out) {
  if (IsIdentifier(key)) {
    out->push_back('.');
    out->append(key);
    return;
  }
  out->append("[\"");
  for (const char c : key) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  }
  out->append("\"]");
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Recursive-descent checker; remembers the path of the value being read.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  // Returns false on the first error (then error() is set).
  bool ScanDocument() {
    SkipWhitespace();
    if (AtEnd()) return Fail("empty document");
    if (!Value(1)) return false;
    SkipWhitespace();
    if (!AtEnd()) return Fail(absl::StrCat("unexpected ", Describe(), " after the JSON value"));
    return true;
  }

  const std::optional<JsonSyntaxError>& error() const { return error_; }

 private:
  struct Segment {
    std::string_view key;  // raw key text when !is_index
    size_t index = 0;
    bool is_index = false;
  };

  bool AtEnd() const { return pos_ >= text_.size(); }
  unsigned char Peek() const { return static_cast<unsigned char>(text_[pos_]); }

  void SkipWhitespace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      ++pos_;
    }
  }

  std::string Describe() const {
    if (AtEnd()) return "end of input";
    const unsigned char c = Peek();
    if (c >= 0x20 && c < 0x7f) return absl::StrFormat("character '%c'", c);
    return absl::StrFormat("byte 0x%02X", c);
  }

  bool Fail(std::string message) {
    JsonSyntaxError e;
    e.offset = pos_;
    e.path.push_back('$');  // (not `= "$"`: GCC 12 -Wrestrict false positive under ASan)
    for (const Segment& s : path_) {
      if (s.is_index) {
        absl::StrAppend(&e.path, "[", s.index, "]");
      } else {
        AppendKey(s.key, &e.path);
      }
    }
    e.message = std::move(message);
    error_ = std::move(e);
    return false;
  }

  bool Value(int depth) {
    SkipWhitespace();
    if (AtEnd()) return Fail("unexpected end of input, expected a value");
    bool ok;
    switch (Peek()) {
      case '{':
        return Object(depth);
      case '[':
        return Array(depth);
      case '"':
        ok = String();
        break;
      case 't':
        ok = Literal("true");
        break;
      case 'f':
        ok = Literal("false");
        break;
      case 'n':
        ok = Literal("null");
        break;
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) {
          ok = Number();
        } else {
          return Fail(absl::StrCat("unexpected ", Describe(), ", expected a value"));
        }
    }
    return ok;
  }

  bool Object(int depth) {
    if (depth > kMaxJsonDepth) return Fail("nesting deeper than 1024 levels");
    ++pos_;  // '{'
    SkipWhitespace();
    if (!AtEnd() && Peek() == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      SkipWhitespace();
      if (AtEnd() || Peek() != '"') {
        return Fail(absl::StrCat("unexpected ", Describe(), ", expected a string key"));
      }
      const size_t key_start = pos_ + 1;
      if (!String()) return false;
      const std::string_view key = text_.substr(key_start, pos_ - 1 - key_start);
      SkipWhitespace();
      if (AtEnd() || Peek() != ':') {
        path_.push_back({key, 0, false});
        return Fail(absl::StrCat("unexpected ", Describe(), ", expected ':' after the key"));
      }
      ++pos_;
      path_.push_back({key, 0, false});
      if (!Value(depth + 1)) return false;
      path_.pop_back();
      SkipWhitespace();
      if (!AtEnd() && Peek() == ',') {
        ++pos_;
        continue;
      }
      if (!AtEnd() && Peek() == '}') {
        ++pos_;
        return true;
      }
      return Fail(absl::StrCat("unexpected ", Describe(), ", expected ',' or '}' in an object"));
    }
  }

  bool Array(int depth) {
    if (depth > kMaxJsonDepth) return Fail("nesting deeper than 1024 levels");
    ++pos_;  // '['
    SkipWhitespace();
    if (!AtEnd() && Peek() == ']') {
      ++pos_;
      return true;
    }
    for (size_t index = 0;; ++index) {
      path_.push_back({{}, index, true});
      if (!Value(depth + 1)) return false;
      path_.pop_back();
      SkipWhitespace();
      if (!AtEnd() && Peek() == ',') {
        ++pos_;
        continue;
      }
      if (!AtEnd() && Peek() == ']') {
        ++pos_;
        return true;
      }
      return Fail(absl::StrCat("unexpected ", Describe(), ", expected ',' or ']' in an array"));
    }
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Fail(absl::StrCat("unexpected ", Describe(), ", expected a value"));
    }
    pos_ += word.size();
    return true;
  }

  bool Digits() {
    const size_t start = pos_;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool Number() {
    if (Peek() == '-') ++pos_;
    if (!AtEnd() && Peek() == '0') {
      ++pos_;
    } else if (!Digits()) {
      return Fail(absl::StrCat("invalid number: unexpected ", Describe()));
    }
    if (!AtEnd() && Peek() == '.') {
      ++pos_;
      if (!Digits()) return Fail(absl::StrCat("invalid number: expected a digit after '.'"));
    }
    if (!AtEnd() && (Peek() == 'e' || Peek() == 'E')) {
      ++pos_;
      if (!AtEnd() && (Peek() == '+' || Peek() == '-')) ++pos_;
      if (!Digits()) return Fail("invalid number: expected a digit in the exponent");
    }
    return true;
  }

  // Reads 4 hex digits at pos_; -1 when they are not.
  int Hex4() {
    if (pos_ + 4 > text_.size()) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = HexValue(text_[pos_ + static_cast<size_t>(i)]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    pos_ += 4;
    return v;
  }

  bool Escape() {
    ++pos_;  // '\'
    if (AtEnd()) return Fail("unterminated string");
    const char e = text_[pos_];
    if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
        e == 't') {
      ++pos_;
      return true;
    }
    if (e != 'u') {
      return Fail(absl::StrCat("invalid escape sequence: backslash before ", Describe()));
    }
    const size_t escape_start = pos_ - 1;
    ++pos_;
    const int cp = Hex4();
    if (cp < 0) return Fail("invalid \\u escape: expected 4 hex digits");
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      pos_ = escape_start;
      return Fail("invalid \\u escape: unpaired low surrogate");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") {
        pos_ = escape_start;
        return Fail("invalid \\u escape: high surrogate without a low surrogate");
      }
      pos_ += 2;
      const int low = Hex4();
      if (low < 0xDC00 || low > 0xDFFF) {
        pos_ = escape_start;
        return Fail("invalid \\u escape: high surrogate without a low surrogate");
      }
    }
    return true;
  }

  // Validates one UTF-8 sequence starting at pos_ (a byte >= 0x80).
  bool Utf8() {
    const unsigned char b0 = Peek();
    int extra;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      extra = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      extra = 2;
      if (b0 == 0xE0) lo = 0xA0;  // overlong
      if (b0 == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      extra = 3;
      if (b0 == 0xF0) lo = 0x90;  // overlong
      if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return Fail(absl::StrFormat("invalid UTF-8: byte 0x%02X cannot start a character", b0));
    }
    for (int i = 1; i <= extra; ++i) {
      const size_t at = pos_ + static_cast<size_t>(i);
      const unsigned char b = at < text_.size() ? static_cast<unsigned char>(text_[at]) : 0;
      const unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
      if (b < min || b > max) {
        return Fail(absl::StrFormat("invalid UTF-8: bad continuation of byte 0x%02X", b0));
      }
    }
    pos_ += static_cast<size_t>(extra) + 1;
    return true;
  }

  bool String() {
    const size_t open = pos_;
    ++pos_;  // '"'
    for (;;) {
      if (AtEnd()) {
        pos_ = open;
        return Fail("unterminated string");
      }
      const unsigned char c = Peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!Escape()) return false;
      } else if (c < 0x20) {
        return Fail(absl::StrFormat("control character 0x%02X in a string (must be escaped)", c));
      } else if (c < 0x80) {
        ++pos_;
      } else if (!Utf8()) {
        return false;
      }
    }
  }

  const std::string_view text_;
  size_t pos_ = 0;
  std::vector<Segment> path_;
  std::optional<JsonSyntaxError> error_;
};

// Walks a document known to be valid, without recursion or allocation.
class ValidJsonWalker {
 public:
  explicit ValidJsonWalker(std::string_view text) : text_(text) {}

  std::optional<std::string_view> Find(std::initializer_list<std::string_view> path) {
    SkipWhitespace();
    if (Peek() != '{') return std::nullopt;
    size_t level = 0;
    for (const std::string_view want : path) {
      ++level;
      ++pos_;  // '{'
      bool found = false;
      for (;;) {
        SkipWhitespace();
        if (Peek() != '"') return std::nullopt;  // '}': not in this object
        const size_t key_start = pos_ + 1;
        SkipString();
        const std::string_view key = text_.substr(key_start, pos_ - 1 - key_start);
        SkipWhitespace();
        ++pos_;  // ':'
        SkipWhitespace();
        if (key == want) {
          found = true;
          break;
        }
        SkipValue();
        SkipWhitespace();
        if (Peek() != ',') return std::nullopt;
        ++pos_;
      }
      if (!found) return std::nullopt;
      const char c = Peek();
      if (level == path.size()) {
        if (c == '{' || c == '[') return std::nullopt;
        const size_t start = pos_;
        SkipValue();
        return text_.substr(start, pos_ - start);
      }
      if (c != '{') return std::nullopt;
    }
    return std::nullopt;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void SkipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // REQUIRES: at a '"'. Leaves pos_ after the closing quote.
  void SkipString() {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
    ++pos_;
  }

  void SkipValue() {
    const char c = Peek();
    if (c == '"') {
      SkipString();
      return;
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      do {
        const char d = Peek();
        if (d == '"') {
          SkipString();
          continue;
        }
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') --depth;
        ++pos_;
      } while (depth > 0 && pos_ < text_.size());
      return;
    }
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ']' &&
           text_[pos_] != ' ' && text_[pos_] != '\t' && text_[pos_] != '\n' &&
           text_[pos_] != '\r') {
      ++pos_;
    }
  }

  const std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<JsonSyntaxError> FindJsonSyntaxError(std::string_view text) {
  Scanner scanner(text);
  if (scanner.ScanDocument()) return std::nullopt;
  return scanner.error();
}

std::optional<std::string_view> FindRawScalar(std::string_view text,
                                              std::initializer_list<std::string_view> path) {
  if (path.size() == 0) return std::nullopt;
  return ValidJsonWalker(text).Find(path);
}

void AppendJsonPath(std::string_view parent, std::string_view key, std::string* out) {
  out->append(parent);
  AppendKey(key, out);
}

}  // namespace vigil::ingest_internal
