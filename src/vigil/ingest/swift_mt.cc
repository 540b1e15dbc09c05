#include "vigil/ingest/swift_mt.h"

#include <algorithm>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAlnumUpper(char c) { return IsDigit(c) || IsUpper(c); }
bool IsLineEnd(char c) { return c == '\r' || c == '\n'; }

// Reads a message front to back, counting lines for the errors.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  size_t pos() const { return pos_; }
  int line() const { return line_; }
  std::string_view text() const { return text_; }

  void Advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  // Skips one line ending (CrLf or Lf); false when none is here.
  bool LineEnd() {
    if (pos_ + 1 < text_.size() && text_[pos_] == '\r' && text_[pos_ + 1] == '\n') {
      pos_ += 2;
      ++line_;
      return true;
    }
    if (pos_ < text_.size() && text_[pos_] == '\n') {
      ++pos_;
      ++line_;
      return true;
    }
    return false;
  }
  void SkipLineEnds() {
    while (!done() && IsLineEnd(peek())) Advance();
  }
  // The text up to (not including) the next "stop"; false when the text ends first.
  bool Until(char stop, std::string_view* out) {
    const size_t start = pos_;
    const size_t found = text_.find(stop, pos_);
    const size_t end = found == std::string_view::npos ? text_.size() : found;
    line_ += static_cast<int>(std::count(text_.begin() + start, text_.begin() + end, '\n'));
    pos_ = end;
    if (done()) return false;
    *out = text_.substr(start, pos_ - start);
    return true;
  }
  // Moves to "pos" on the same line. REQUIRES: no line feed in [pos(), pos).
  void SkipTo(size_t pos) { pos_ = pos; }

  absl::Status Error(std::string_view block, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("SWIFT MT block ", ToAbsl(block), ", line ", line_, ": ", ToAbsl(what)));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

absl::Status ParseBasicHeader(std::string_view v, const Reader& r, MtBasicHeader* out) {
  // F 01 LLLLLLLLLLLL SSSS NNNNNN
  if (v.size() != 25) {
    return r.Error("1", absl::StrCat("the basic header has ", v.size(),
                                     " characters, not 25 (F01, logical terminal, session, "
                                     "sequence)"));
  }
  if (v[0] != 'F' && v[0] != 'A' && v[0] != 'L') {
    return r.Error("1", absl::StrCat("application id '", ToAbsl(v.substr(0, 1)),
                                     "' is not F (FIN), A or L"));
  }
  out->application_id = v[0];
  out->service_id = v.substr(1, 2);
  out->logical_terminal = v.substr(3, 12);
  out->session = v.substr(15, 4);
  out->sequence = v.substr(19, 6);
  if (!IsDigit(v[1]) || !IsDigit(v[2])) return r.Error("1", "the service id is not 2 digits");
  for (char c : out->logical_terminal) {
    if (!IsAlnumUpper(c)) {
      return r.Error("1", absl::StrCat("logical terminal \"", ToAbsl(out->logical_terminal),
                                       "\" is not 12 upper-case letters or digits"));
    }
  }
  for (char c : v.substr(15)) {
    if (!IsDigit(c)) return r.Error("1", "session and sequence numbers must be digits");
  }
  return absl::OkStatus();
}

absl::Status ParseApplicationHeader(std::string_view v, const Reader& r,
                                    MtApplicationHeader* out) {
  if (v.size() < 4 || (v[0] != 'I' && v[0] != 'O')) {
    return r.Error("2", "the application header must start with I (input) or O (output) and "
                        "the message type");
  }
  out->input = v[0] == 'I';
  out->message_type = v.substr(1, 3);
  for (char c : out->message_type) {
    if (!IsDigit(c)) {
      return r.Error("2", absl::StrCat("message type \"", ToAbsl(out->message_type),
                                       "\" is not 3 digits"));
    }
  }
  std::string_view rest = v.substr(4);
  if (out->input) {
    // Receiver address (12), then optionally priority, delivery monitoring, obsolescence.
    if (rest.size() < 12 || rest.size() > 17) {
      return r.Error("2", "an input header needs the receiver's 12-character address, then "
                          "at most a priority, delivery monitoring and obsolescence period");
    }
    out->counterparty_address = rest.substr(0, 12);
    if (rest.size() > 12) out->priority = rest[12];
  } else {
    // Input time (4), MIR (28: date 6, LT 12, session 4, sequence 6), output date (6), time (4),
    // then optionally the priority.
    if (rest.size() < 42 || rest.size() > 43) {
      return r.Error("2", "an output header needs the input time, the message input "
                          "reference, the output date and time (42 characters after the type)");
    }
    out->input_time = rest.substr(0, 4);
    out->input_reference = rest.substr(4, 28);
    out->counterparty_address = rest.substr(10, 12);
    out->output_date = rest.substr(32, 6);
    out->output_time = rest.substr(38, 4);
    if (rest.size() == 43) out->priority = rest[42];
    for (char c : out->input_time) {
      if (!IsDigit(c)) return r.Error("2", "the input time is not HHMM");
    }
  }
  for (char c : out->counterparty_address) {
    if (!IsAlnumUpper(c)) {
      return r.Error("2", absl::StrCat("address \"", ToAbsl(out->counterparty_address),
                                       "\" is not 12 upper-case letters or digits"));
    }
  }
  if (out->priority != 'N' && out->priority != 'U' && out->priority != 'S') {
    return r.Error("2", absl::StrCat("priority '", std::string(1, out->priority),
                                     "' is not N, U or S"));
  }
  return absl::OkStatus();
}

// {tag:value}{tag:value}...} : the sub-blocks of block 3 or 5, up to the block's closing brace.
// The trailer (block 5) may lack its closing brace at the very end of the text: some RJE
// exports drop it, and nothing can follow it.
absl::Status ParseTagValues(Reader& r, std::string_view block, std::vector<MtTagValue>* out) {
  for (;;) {
    if (r.done()) {
      if (block == "5") return absl::OkStatus();
      return r.Error(block, "the block is not closed with '}'");
    }
    if (r.peek() == '}') {
      r.Advance();
      return absl::OkStatus();
    }
    if (r.peek() != '{') return r.Error(block, "expected a {tag:value} sub-block");
    r.Advance();
    MtTagValue tv;
    if (!r.Until(':', &tv.tag) || tv.tag.empty() || tv.tag.size() > 3) {
      return r.Error(block, "a sub-block's tag must be 1 to 3 characters before ':'");
    }
    r.Advance();
    if (!r.Until('}', &tv.value)) return r.Error(block, "a sub-block is not closed with '}'");
    r.Advance();
    out->push_back(tv);
  }
}

// The first CR, LF or '{' in text at or after "from", or text.size(). Sixteen bytes at a time
// where SSE2 is there (x86-64 always): field lines are short, and a library search per line, or
// a byte loop, costs more than the line.
size_t FindLineStop(std::string_view text, size_t from) {
  const char* const data = text.data();
  const size_t n = text.size();
  size_t i = from;
#if defined(__SSE2__)
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i brace = _mm_set1_epi8('{');
  for (; i + 16 <= n; i += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(chunk, lf), _mm_cmpeq_epi8(chunk, cr)),
        _mm_cmpeq_epi8(chunk, brace));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < n; ++i) {
    const char c = data[i];
    if (c == '\n' || c == '\r' || c == '{') return i;
  }
  return n;
}

// Block 4 after "{4:": CrLf, then ":TAG:value" fields over lines, then a line "-}".
absl::Status ParseText(Reader& r, std::vector<MtField>* fields) {
  if (!r.LineEnd()) return r.Error("4", "the text block must start with a line break after {4:");
  const std::string_view text = r.text();
  MtField* current = nullptr;
  size_t value_start = 0, value_end = 0;
  // Sets the current field's value, which must not be empty.
  const auto finish = [&]() -> absl::Status {
    if (current == nullptr) return absl::OkStatus();
    current->value = text.substr(value_start, value_end - value_start);
    // Blank unless a character other than white space turns up (almost always the first).
    bool blank = true;
    for (const char c : current->value) {
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
        blank = false;
        break;
      }
    }
    if (blank) {
      return absl::InvalidArgumentError(absl::StrCat("SWIFT MT block 4, line ", current->line,
                                                     ": field :", ToAbsl(current->tag),
                                                     ": is empty"));
    }
    return absl::OkStatus();
  };
  for (;;) {
    if (r.done()) return r.Error("4", "the text block does not end with a line \"-}\"");
    const size_t line_start = r.pos();
    if (text.compare(line_start, 2, "-}") == 0) {
      if (absl::Status s = finish(); !s.ok()) return s;
      r.Advance();
      r.Advance();
      return absl::OkStatus();
    }
    if (r.peek() == ':') {
      // :NN: or :NNa:
      size_t p = line_start + 1;
      size_t tag_end = p;
      while (tag_end < text.size() && tag_end - p < 3 && IsAlnumUpper(text[tag_end])) ++tag_end;
      const std::string_view tag = text.substr(p, tag_end - p);
      const bool well_formed = tag_end < text.size() && text[tag_end] == ':' &&
                               tag.size() >= 2 && IsDigit(tag[0]) && IsDigit(tag[1]) &&
                               (tag.size() == 2 || IsUpper(tag[2]));
      if (!well_formed) {
        return r.Error("4", "a field must start with :NN: or :NNa: (two digits, an optional "
                            "option letter)");
      }
      if (absl::Status s = finish(); !s.ok()) return s;
      if (fields->size() >= kMaxFields) {
        return r.Error("4", absl::StrCat("more than ", kMaxFields, " fields"));
      }
      fields->push_back(MtField{tag, {}, r.line()});
      current = &fields->back();
      while (r.pos() <= tag_end) r.Advance();
      value_start = r.pos();
    } else if (current == nullptr) {
      return r.Error("4", "text before the first field");
    }
    // The rest of the line, up to CR or LF, belongs to the current field.
    {
      const size_t i = FindLineStop(text, r.pos());
      r.SkipTo(i);
      if (i < text.size() && text[i] == '{') {
        return r.Error("4", absl::StrCat("field :", ToAbsl(current->tag),
                                         ": holds '{', which only delimits blocks"));
      }
    }
    value_end = r.pos();
    if (!r.LineEnd()) return r.Error("4", "the text block does not end with a line \"-}\"");
  }
}

// Whether a service message 21 (ACK or NAK) starts at "pos": "{1:" and an application id, then
// the service id "21".
bool IsAcknowledgementAt(std::string_view text, size_t pos) {
  return pos + 6 <= text.size() && text.compare(pos, 3, "{1:") == 0 &&
         text.compare(pos + 4, 2, "21") == 0;
}

const MtTagValue* FindTag(const std::vector<MtTagValue>& tvs, std::string_view tag) {
  for (const MtTagValue& tv : tvs) {
    if (tv.tag == tag) return &tv;
  }
  return nullptr;
}

// The sub-blocks of an acknowledgement's block 4: {451:} required (0 or 1), {177:} 10 digits
// and {106:} 28 letters or digits when present.
absl::Status ReadAcknowledgementText(MtAcknowledgement* ack) {
  const auto error = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("SWIFT MT block 4 (ACK), line ", ack->line, ": ", ToAbsl(what)));
  };
  const MtTagValue* accepted = FindTag(ack->text, "451");
  if (accepted == nullptr) {
    return error("the acknowledgement has no {451:} (0: accepted, 1: refused)");
  }
  if (accepted->value != "0" && accepted->value != "1") {
    return error(absl::StrCat("{451:", ToAbsl(accepted->value),
                              "} is neither 0 (accepted) nor 1 (refused)"));
  }
  ack->accepted = accepted->value == "0";
  if (const MtTagValue* t = FindTag(ack->text, "177"); t != nullptr) {
    if (t->value.size() != 10 || !std::all_of(t->value.begin(), t->value.end(), IsDigit)) {
      return error(absl::StrCat("{177:", ToAbsl(t->value), "} is not a date and time YYMMDDHHMM"));
    }
    ack->date_time = t->value;
  }
  if (const MtTagValue* t = FindTag(ack->text, "405"); t != nullptr) ack->error_code = t->value;
  if (const MtTagValue* t = FindTag(ack->text, "106"); t != nullptr) {
    if (t->value.size() != 28 || !std::all_of(t->value.begin(), t->value.end(), IsAlnumUpper)) {
      return error(absl::StrCat("{106:", ToAbsl(t->value),
                                "} is not a message input reference (28 letters or digits)"));
    }
    ack->input_reference = t->value;
  }
  return absl::OkStatus();
}

// A service message 21 at the reader's position: {1:F21...}, {4:{tag:value}...}, and at most a
// trailer {5:...}, up to the message's "{1:" or the end.
absl::Status ParseAcknowledgement(Reader& r, MtAcknowledgement* ack) {
  for (int i = 0; i < 3; ++i) r.Advance();  // "{1:"
  std::string_view value;
  if (!r.Until('}', &value)) return r.Error("1 (ACK)", "the block is not closed with '}'");
  r.Advance();
  if (absl::Status s = ParseBasicHeader(value, r, &ack->basic); !s.ok()) return s;
  bool text = false, trailer = false;
  for (;;) {
    r.SkipLineEnds();
    if (r.done() || r.peek() != '{' || r.text().compare(r.pos(), 3, "{1:") == 0) break;
    r.Advance();
    std::string_view id;
    if (!r.Until(':', &id)) return r.Error("? (ACK)", "a block has no ':' after its number");
    r.Advance();
    const std::string block = absl::StrCat(ToAbsl(id), " (ACK)");
    if (id == "4" && !text) {
      ack->line = r.line();
      if (absl::Status s = ParseTagValues(r, block, &ack->text); !s.ok()) return s;
      text = true;
    } else if (id == "5" && text && !trailer) {
      if (absl::Status s = ParseTagValues(r, block, &ack->trailer); !s.ok()) return s;
      trailer = true;
    } else {
      return r.Error(block,
                     "an acknowledgement holds its basic header {1:}, its text "
                     "{4:{177:...}{451:...}} and at most a trailer {5:}, in this order");
    }
  }
  if (!text) {
    return r.Error("1 (ACK)",
                   "the acknowledgement (service 21) has no block 4 "
                   "{4:{177:...}{451:...}}");
  }
  return ReadAcknowledgementText(ack);
}

// An acknowledgement with no message after it.
absl::Status AcknowledgementAlone(const MtAcknowledgement& ack) {
  const std::string which =
      absl::StrCat("session ", ToAbsl(ack.basic.session), ", sequence ", ToAbsl(ack.basic.sequence),
                   " of ", ToAbsl(ack.basic.logical_terminal));
  if (!ack.accepted) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SWIFT MT block 4 (ACK), line ", ack.line, ": the network refused the message (",
        ack.NakReason(), ") of ", which, "; the message itself is not in the text"));
  }
  return absl::UnimplementedError(absl::StrCat(
      "unsupported message type: an acknowledgement (service message 21, ACK) of ", which,
      " without the message it acknowledges; vigil reads MT103, MT202 and MT202COV"));
}

std::string BicOf(std::string_view logical_terminal) {
  // BIC8, terminal code, branch: the BIC is the BIC8 and the branch.
  if (logical_terminal.size() != 12) return std::string(logical_terminal);
  std::string bic(logical_terminal.substr(0, 8));  // 11 characters: no allocation
  bic.append(logical_terminal.substr(9));
  return bic;
}

// The message's blocks, from the reader's position to the end.
absl::Status ParseBlocks(Reader& r, SwiftMtMessage& m) {
  unsigned seen = 0;  // bit b: block b (S is 6) was read
  bool seen_text = false;
  while (!r.done()) {
    if (r.peek() != '{') return r.Error("?", "expected '{' of a block");
    r.Advance();
    // A lone '{' ending the text after the text block: a trailer cut off before it began
    // (seen in exports); nothing is lost.
    if (r.done() && seen_text) break;
    std::string_view id;
    if (!r.Until(':', &id)) return r.Error("?", "a block has no ':' after its number");
    r.Advance();
    // 1 to 5, and S: the system trailer an interface (SWIFT Alliance) adds after block 5.
    const int block = id.size() != 1                 ? 0
                      : id[0] == 'S'                 ? 6
                      : id[0] >= '1' && id[0] <= '5' ? id[0] - '0'
                                                     : 0;
    if (block == 0) {
      return r.Error(id, "unknown block (SWIFT FIN has blocks 1 to 5 and S)");
    }
    // Each block once; the headers (1, 2, 3, in any order: some exports put 3 before 2)
    // before the text, the trailers (5, then S) after it.
    if ((seen & (1u << block)) != 0) {
      return r.Error(id, absl::StrCat("block ", ToAbsl(id), " comes twice"));
    }
    if ((block <= 3 && seen_text) || (block >= 5 && !seen_text) ||
        (block == 5 && (seen & (1u << 6)) != 0)) {
      return r.Error(id, absl::StrCat("block ", ToAbsl(id),
                                      " is out of place: the headers 1, 2 and 3 come before "
                                      "the text block 4, the trailers 5 and S after it"));
    }
    seen |= 1u << block;
    std::string_view value;
    switch (block) {
      case 1:
      case 2:
        if (!r.Until('}', &value)) return r.Error(id, "the block is not closed with '}'");
        r.Advance();
        if (absl::Status s = block == 1 ? ParseBasicHeader(value, r, &m.basic)
                                        : ParseApplicationHeader(value, r, &m.application);
            !s.ok()) {
          return s;
        }
        break;
      case 3:
        if (absl::Status s = ParseTagValues(r, "3", &m.user_header); !s.ok()) return s;
        break;
      case 4:
        if (absl::Status s = ParseText(r, &m.fields); !s.ok()) return s;
        seen_text = true;
        break;
      case 5:
        if (absl::Status s = ParseTagValues(r, "5", &m.trailer); !s.ok()) return s;
        break;
      case 6:
        if (absl::Status s = ParseTagValues(r, "S", &m.system_trailer); !s.ok()) return s;
        break;
    }
    r.SkipLineEnds();  // tolerated between blocks
    while (!r.done() && r.peek() == ' ') r.Advance();
    // Closing braces ending the text after the text block: exports that wrap the message in
    // one more pair of braces. Nothing else may follow the last block.
    if (seen_text && r.text().find_first_not_of("}\r\n ", r.pos()) == std::string_view::npos) {
      break;
    }
  }
  if ((seen & 0b110) != 0b110) {
    return absl::InvalidArgumentError(
        "SWIFT MT message: the basic header {1:} and application header {2:} are required");
  }
  if (!seen_text) {
    return absl::InvalidArgumentError("SWIFT MT message: no text block {4:}");
  }
  if (m.fields.empty()) {
    return absl::InvalidArgumentError("SWIFT MT message: the text block {4:} has no fields");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SwiftMtMessage> SwiftMtMessage::Parse(std::string_view text) {
  SwiftMtMessage m;
  if (absl::Status s = ParseInto(text, &m); !s.ok()) return s;
  return m;
}

absl::Status SwiftMtMessage::ParseInto(std::string_view text, SwiftMtMessage* out) {
  SwiftMtMessage& m = *out;
  m.acknowledgement.reset();
  m.basic = MtBasicHeader{};
  m.application = MtApplicationHeader{};
  m.user_header.clear();
  m.fields.clear();
  m.trailer.clear();
  m.system_trailer.clear();
  if (text.size() > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("SWIFT MT message of ", text.size(),
                                                   " bytes: the limit is ", kMaxMessageBytes));
  }
  // Surrounding whitespace is not part of the message.
  const std::string_view trimmed = ToStd(absl::StripTrailingAsciiWhitespace(ToAbsl(text)));
  Reader r(trimmed);
  m.fields.reserve(32);
  while (!r.done() && absl::ascii_isspace(static_cast<unsigned char>(r.peek()))) r.Advance();
  if (!IsAcknowledgementAt(trimmed, r.pos())) return ParseBlocks(r, m);
  MtAcknowledgement& ack = m.acknowledgement.emplace();
  if (absl::Status s = ParseAcknowledgement(r, &ack); !s.ok()) return s;
  r.SkipLineEnds();
  while (!r.done() && absl::ascii_isspace(static_cast<unsigned char>(r.peek()))) r.Advance();
  if (r.done()) return AcknowledgementAlone(ack);
  absl::Status s = ParseBlocks(r, m);
  if (s.ok() || ack.accepted) return s;
  // The refusal is the first thing to know about a refused message, whatever else is wrong.
  return absl::InvalidArgumentError(
      absl::StrCat("SWIFT MT block 4 (ACK), line ", ack.line, ": the network refused the message (",
                   ack.NakReason(), "), and the message does not split either: ", s.message()));
}

std::string MtAcknowledgement::Reference() const {
  if (!input_reference.empty()) return std::string(input_reference);
  if (date_time.size() < 6) return std::string();
  return absl::StrCat(ToAbsl(date_time.substr(0, 6)), ToAbsl(basic.logical_terminal),
                      ToAbsl(basic.session), ToAbsl(basic.sequence));
}

std::string MtAcknowledgement::NakReason() const {
  if (error_code.empty()) return "NAK {451:1}, no error code {405:}";
  return absl::StrCat("NAK {451:1}, error code \"", ToAbsl(error_code), "\" in {405:}");
}

std::string SwiftMtMessage::SenderBic() const {
  return BicOf(application.input ? basic.logical_terminal : application.counterparty_address);
}

std::string SwiftMtMessage::ReceiverBic() const {
  return BicOf(application.input ? application.counterparty_address : basic.logical_terminal);
}

const MtField* SwiftMtMessage::Find(std::string_view tag) const {
  for (const MtField& f : fields) {
    if (f.tag == tag || (tag.size() == 2 && f.tag.substr(0, 2) == tag)) return &f;
  }
  return nullptr;
}

std::optional<std::string_view> SwiftMtMessage::UserHeader(std::string_view tag) const {
  for (const MtTagValue& tv : user_header) {
    if (tv.tag == tag) return tv.value;
  }
  return std::nullopt;
}

namespace {

size_t Skip(std::string_view text, size_t p, std::string_view chars) {
  while (p < text.size() && chars.find(text[p]) != std::string_view::npos) ++p;
  return p;
}

// Where the acknowledgement (service message 21) starting at "pos" ends: after its last block,
// before the next "{1:" or text that is not a block; text.size() when a block is not closed.
// npos when no acknowledgement starts at "pos".
size_t AcknowledgementEnd(std::string_view text, size_t pos) {
  if (!IsAcknowledgementAt(text, pos)) return std::string_view::npos;
  size_t p = pos, end = pos;
  while (p < text.size() && text[p] == '{' && (p == pos || text.compare(p, 3, "{1:") != 0)) {
    int depth = 0;
    for (; p < text.size(); ++p) {
      if (text[p] == '{') ++depth;
      if (text[p] == '}' && --depth == 0) break;
    }
    if (p == text.size()) return p;
    end = ++p;
    p = Skip(text, p, "\r\n");
  }
  return end;
}

// The end of the first text block's "\n-}" at or after "pos", with the trailers {5:} and {S:}
// and the closing braces some exports add after it; npos when there is none.
size_t TextBlockEnd(std::string_view text, size_t pos) {
  const size_t text_end = text.find("\n-}", pos);
  if (text_end == std::string_view::npos) return text_end;
  size_t p = text_end + 3;
  for (;;) {
    p = Skip(text, p, " \t\r\n}");
    if (p + 2 >= text.size() || text[p] != '{' || (text[p + 1] != '5' && text[p + 1] != 'S') ||
        text[p + 2] != ':') {
      return p;
    }
    int depth = 0;
    for (; p < text.size(); ++p) {
      if (text[p] == '{') ++depth;
      if (text[p] == '}' && --depth == 0) {
        ++p;
        break;
      }
    }
  }
}

}  // namespace

std::vector<std::string_view> SplitSwiftMtMessages(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n", kBetween = " \t\r\n$";
  constexpr size_t kNone = std::string_view::npos;
  std::vector<std::string_view> out;
  // Pieces end at their last character that is not white space.
  const auto trim = [](std::string_view piece) {
    const size_t last = piece.find_last_not_of(kSpace);
    return piece.substr(0, last == kNone ? 0 : last + 1);
  };
  size_t start = Skip(text, 0, kBetween);
  while (start < text.size()) {
    // An acknowledgement goes with the message right after it; alone, it is a piece.
    size_t pos = start;
    size_t end = AcknowledgementEnd(text, start);
    if (end != kNone) {
      const size_t next = Skip(text, end, kSpace);
      if (next < text.size() && text[next] != '$' && !IsAcknowledgementAt(text, next)) {
        pos = end;
        end = kNone;
      }
    }
    // A message ends after a text block (and its trailers) that the next "{1:" follows.
    while (end == kNone) {
      const size_t p = TextBlockEnd(text, pos);
      if (p == kNone) break;
      if (text.compare(Skip(text, p, kBetween), 3, "{1:") == 0) {
        end = p;
      } else {
        pos = p;
      }
    }
    if (end == kNone) break;
    out.push_back(trim(text.substr(start, end - start)));
    start = Skip(text, end, kBetween);
  }
  if (start < text.size()) out.push_back(trim(text.substr(start)));
  return out;
}

bool IsSwiftMtAcknowledgementOnly(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  const size_t end = AcknowledgementEnd(text, start);
  return end != std::string_view::npos &&
         text.find_first_not_of(" \t\r\n", end) == std::string_view::npos;
}

std::vector<std::string_view> MtLines(std::string_view value) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i) {
    if (i == value.size() || value[i] == '\n') {
      size_t end = i;
      if (end > start && value[end - 1] == '\r') --end;
      lines.push_back(value.substr(start, end - start));
      start = i + 1;
    }
  }
  return lines;
}

}  // namespace vigil
