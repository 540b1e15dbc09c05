#include "vigil/ingest/swift_mt_transaction.h"

#include <array>
#include <chrono>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/ingest/party_key.h"
#include "vigil/ingest/swift_mt_types.h"
#include "vigil/ingest/swift_syntax.h"

namespace vigil {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsUpperAlnum(char c) { return IsDigit(c) || IsUpper(c); }

// The X character set plus the braces (see the header), and the line breaks.
constexpr std::array<bool, 256> FieldCharTable() {
  std::array<bool, 256> t{};
  for (char c = 'a'; c <= 'z'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c = 'A'; c <= 'Z'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c : std::string_view("/-?:().,'+ \r\n{}")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kFieldChars = FieldCharTable();

constexpr size_t kLineChars = 35;

// An error in a field: "SWIFT MT block 4, line L, field :TAG: what", L the field's line plus
// "line_offset" (the line of the value the error is in).
absl::Status FieldError(const MtField& f, int line_offset, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("SWIFT MT block 4, line ", f.line + line_offset,
                                                 ", field :", ToAbsl(f.tag), ": ", ToAbsl(what)));
}

absl::Status WithField(const MtField& f, int line_offset, const absl::Status& status) {
  return FieldError(f, line_offset, ToStd(status.message()));
}

// Iterates over the lines of a field value (line endings CrLf or Lf, dropped).
class LineCursor {
 public:
  explicit LineCursor(std::string_view value) : rest_(value) {}
  bool Next(std::string_view* line) {
    if (done_) return false;
    size_t lf = 0;  // a byte loop: field lines are a few dozen characters
    while (lf < rest_.size() && rest_[lf] != '\n') ++lf;
    std::string_view l = rest_.substr(0, lf);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    *line = l;
    if (lf == rest_.size()) {
      done_ = true;
    } else {
      rest_.remove_prefix(lf + 1);
    }
    ++index_;
    return true;
  }
  int index() const { return index_ - 1; }  // 0-based index of the last line returned

 private:
  std::string_view rest_;
  bool done_ = false;
  int index_ = 0;
};

absl::Status CheckCharset(const MtField& f) {
  bool clean = true;
  for (char c : f.value) clean &= kFieldChars[static_cast<unsigned char>(c)];
  if (clean) return absl::OkStatus();
  int line = 0;
  int column = 1;
  for (char c : f.value) {
    if (!kFieldChars[static_cast<unsigned char>(c)]) {
      const unsigned char u = static_cast<unsigned char>(c);
      const std::string shown = u >= 0x20 && u < 0x7f
                                    ? absl::StrCat("'", std::string(1, c), "'")
                                    : absl::StrCat("byte 0x", absl::Hex(u, absl::kZeroPad2));
      return FieldError(f, line,
                        absl::StrCat("character ", shown, " at column ", column,
                                     " is outside the SWIFT X character set"));
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::OkStatus();
}

// At most max_lines lines of at most kLineChars characters.
absl::Status CheckLines(const MtField& f, int max_lines, int first = 0) {
  LineCursor lines(f.value);
  std::string_view line;
  int n = 0;
  while (lines.Next(&line)) {
    if (lines.index() < first) continue;
    if (++n > max_lines) {
      return FieldError(f, lines.index(),
                        absl::StrCat("has more than ", max_lines, " lines of text"));
    }
    if (line.size() > kLineChars) {
      return FieldError(
          f, lines.index(),
          absl::StrCat("a line has ", line.size(), " characters, more than ", kLineChars));
    }
  }
  return absl::OkStatus();
}

// :20:, :21: (16x): one line, no leading or trailing '/', no "//".
absl::Status CheckReference(const MtField& f) {
  const std::string_view v = f.value;
  if (v.empty() || v.size() > 16 || v.find_first_of("\r\n") != std::string_view::npos) {
    return FieldError(f, 0, "a reference is 1 to 16 characters on one line");
  }
  if (v.front() == '/' || v.back() == '/' || v.find("//") != std::string_view::npos) {
    return FieldError(f, 0, "a reference must not start or end with '/' or contain \"//\"");
  }
  return absl::OkStatus();
}

absl::StatusOr<Currency> ReadCurrency(const MtField& f, std::string_view code) {
  absl::StatusOr<Currency> currency = Currency::FromCode(ToAbsl(code));
  if (!currency.ok()) {
    return FieldError(f, 0,
                      absl::StrCat("currency \"", ToAbsl(code), "\" is not an ISO 4217 code"));
  }
  return currency;
}

// "CCCamount" (33B, 71F, 71G).
absl::StatusOr<Money> ReadCurrencyAmount(const MtField& f, std::string_view text) {
  if (text.size() < 4 || text.find_first_of("\r\n") != std::string_view::npos) {
    return FieldError(f, 0, "expected a currency code and an amount (\"EUR1000,\") on one line");
  }
  absl::StatusOr<Currency> currency = ReadCurrency(f, text.substr(0, 3));
  if (!currency.ok()) return currency.status();
  absl::StatusOr<Money> amount = ParseMtAmount(text.substr(3), *currency);
  if (!amount.ok()) return WithField(f, 0, amount.status());
  return amount;
}

std::string_view BicCountry(std::string_view bic) {
  return bic.size() >= 6 ? bic.substr(4, 2) : std::string_view();
}

// The account of a party identifier line "/34x" or "/C/34x", "/D/34x" (debit/credit mark).
absl::StatusOr<std::string_view> ReadAccountLine(const MtField& f, int line_offset,
                                                 std::string_view line) {
  std::string_view account = line.substr(1);
  if (account.size() > 2 && (account[0] == 'C' || account[0] == 'D') && account[1] == '/') {
    account.remove_prefix(2);
  }
  if (account.empty()) return FieldError(f, line_offset, "the account after '/' is empty");
  if (account.size() > 34) {
    return FieldError(
        f, line_offset,
        absl::StrCat("the account has ", account.size(), " characters, more than 34"));
  }
  return account;
}

// What a party or agent field names: its account, its BIC, its name and address lines, and a
// country when an option F line gives one.
struct PartyFieldValue {
  std::string_view account;
  std::string_view bic;
  std::string_view country;
  std::string_view name;    // the first name line (options K, D, no letter)
  std::string name_joined;  // option F: the 1/ lines joined with a space
  std::array<std::string_view, 8> address{};
  int address_lines = 0;
};

void AddAddress(PartyFieldValue* p, std::string_view line) {
  if (p->address_lines < static_cast<int>(p->address.size())) p->address[p->address_lines++] = line;
}

// Option A: [/account] then the BIC.
absl::Status ReadOptionA(const MtField& f, PartyFieldValue* p) {
  LineCursor lines(f.value);
  std::string_view line;
  int bic_line = -1;
  while (lines.Next(&line)) {
    if (lines.index() == 0 && !line.empty() && line[0] == '/') {
      absl::StatusOr<std::string_view> account = ReadAccountLine(f, 0, line);
      if (!account.ok()) return account.status();
      p->account = *account;
      continue;
    }
    if (bic_line >= 0)
      return FieldError(f, lines.index(), "option A holds only an account and a BIC");
    bic_line = lines.index();
    if (absl::Status bic = CheckBic(line); !bic.ok()) return WithField(f, bic_line, bic);
    p->bic = line;
  }
  if (bic_line < 0) return FieldError(f, 0, "option A needs a BIC");
  return absl::OkStatus();
}

// Options B, C, D and a party without a letter (50K, 59): [/account] then name and address
// lines (B: a location; C: the account alone).
absl::Status ReadNameAndAddress(const MtField& f, char option, PartyFieldValue* p) {
  LineCursor lines(f.value);
  std::string_view line;
  int first_text = 0;
  while (lines.Next(&line)) {
    if (lines.index() == 0 && !line.empty() && line[0] == '/') {
      absl::StatusOr<std::string_view> account = ReadAccountLine(f, 0, line);
      if (!account.ok()) return account.status();
      p->account = *account;
      first_text = 1;
      continue;
    }
    if (option == 'C') return FieldError(f, lines.index(), "option C holds only an account");
    if (p->name.empty() && option != 'B') {
      p->name = line;
    } else {
      AddAddress(p, line);
    }
  }
  if (option == 'C' && p->account.empty()) return FieldError(f, 0, "option C needs \"/account\"");
  if (option != 'B' && option != 'C' && p->name.empty() && p->account.empty()) {
    return FieldError(f, 0, "names neither an account nor a name");
  }
  return CheckLines(f, 4, first_text);
}

// Option F's first line when it is not numbered: "/account", or "CODE/CC/identifier" (a
// passport, customer or national identity number), kept as the account.
absl::Status ReadPartyIdentifier(const MtField& f, std::string_view line, PartyFieldValue* p) {
  if (!line.empty() && line[0] == '/') {
    absl::StatusOr<std::string_view> account = ReadAccountLine(f, 0, line);
    if (!account.ok()) return account.status();
    p->account = *account;
    return absl::OkStatus();
  }
  if (line.size() < 9 || line[4] != '/' || line[7] != '/') {
    return FieldError(f, 0,
                      "the party identifier must be \"/account\" or "
                      "\"CODE/country/identifier\"");
  }
  p->account = line;
  return absl::OkStatus();
}

// Option F (50F, 59F): [party identifier] then numbered lines 1/ name, 2/ address,
// 3/ country/town, 4/ to 7/ identification details, 8/ continuation.
absl::Status ReadOptionF(const MtField& f, PartyFieldValue* p) {
  LineCursor lines(f.value);
  std::string_view line;
  char previous = 0;
  int first_numbered = 0;
  while (lines.Next(&line)) {
    const int i = lines.index();
    if (i == 0 && !(line.size() >= 2 && IsDigit(line[0]) && line[1] == '/')) {
      first_numbered = 1;
      if (absl::Status s = ReadPartyIdentifier(f, line, p); !s.ok()) return s;
      continue;
    }
    if (line.size() < 3 || line[0] < '1' || line[0] > '8' || line[1] != '/') {
      return FieldError(f, i, "option F lines start with 1/ to 8/ and hold text after it");
    }
    const std::string_view text = line.substr(2);
    switch (line[0]) {
      case '1':
        if (!p->name_joined.empty()) p->name_joined += ' ';
        p->name_joined.append(text);
        break;
      case '2':
        AddAddress(p, text);
        break;
      case '3':
        if (previous != '3') {
          if (text.size() < 2 || !IsUpper(text[0]) || !IsUpper(text[1]) ||
              (text.size() > 2 && text[2] != '/')) {
            return FieldError(f, i, "line 3/ must start with a country code (\"3/GB/London\")");
          }
          p->country = text.substr(0, 2);
          if (text.size() > 3) AddAddress(p, text.substr(3));
        } else {
          AddAddress(p, text);
        }
        break;
      case '8':
        if (previous == '1') {
          p->name_joined += ' ';
          p->name_joined.append(text);
        } else if (previous == '2' || previous == '3') {
          AddAddress(p, text);
        }
        break;
      default:  // 4/ to 7/: date and place of birth, customer and national identity numbers
        break;
    }
    if (line[0] != '8') previous = line[0];
  }
  // Trailing blanks of a name line are padding.
  while (!p->name_joined.empty() && p->name_joined.back() == ' ') p->name_joined.pop_back();
  if (p->name_joined.empty()) return FieldError(f, 0, "option F needs the name (line 1/)");
  return CheckLines(f, 4, first_numbered);
}

absl::Status ReadPartyField(const MtField& f, PartyFieldValue* p) {
  *p = PartyFieldValue{};
  const char option = f.tag.size() == 3 ? f.tag[2] : ' ';
  switch (option) {
    case 'A':
      return ReadOptionA(f, p);
    case 'F':
      return ReadOptionF(f, p);
    default:
      return ReadNameAndAddress(f, option, p);
  }
}

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// Fills a Party from a party field; bank_bic is the BIC of the party's bank. A bank party
// (MT202's 52a and 58a) is its own bank; a customer's bank is its bank even when the customer
// has a BIC of its own (50A, 59A: a corporate BIC), as in ISO 20022 (AnyBIC and DbtrAgt).
enum class PartyKind { kCustomer, kBank };
void FillParty(const PartyFieldValue& v, std::string_view bank_bic, PartyKind kind, Party* party) {
  const std::string_view name = v.name_joined.empty() ? Trimmed(v.name) : v.name_joined;
  party->name.assign(name);
  party->address.resize(v.address_lines);
  for (int i = 0; i < v.address_lines; ++i) party->address[i].assign(Trimmed(v.address[i]));
  party->bank_id.assign(kind == PartyKind::kBank ? v.bic : bank_bic);
  party->account_id = PartyAccountKey(v.account, v.bic, bank_bic, name);
  if (!v.country.empty()) {
    party->country.assign(v.country);
  } else if (IsValidIban(v.account)) {
    party->country.assign(v.account.substr(0, 2));
  } else if (!v.bic.empty()) {
    party->country.assign(BicCountry(v.bic));
  } else {
    party->country.assign(BicCountry(bank_bic));
  }
}

// The agent of an agent field (52a to 58a); *v receives what the field names (views into the
// message text).
absl::Status ReadAgent(const MtField& f, AgentRole role, PartyFieldValue* v, Agent* agent) {
  *v = PartyFieldValue{};
  const char option = f.tag.size() == 3 ? f.tag[2] : ' ';
  absl::Status read = option == 'A' ? ReadOptionA(f, v) : ReadNameAndAddress(f, option, v);
  if (!read.ok()) return read;
  agent->role = role;
  agent->bic.assign(v->bic);
  agent->account_id.assign(v->account);
  agent->name.assign(option == 'B' ? std::string_view() : Trimmed(v->name));
  agent->country.assign(BicCountry(v->bic));
  return absl::OkStatus();
}

AgentRole AgentRoleOf(int number) {
  switch (number) {
    case 52:
      return AgentRole::kOrderingInstitution;
    case 53:
      return AgentRole::kSendersCorrespondent;
    case 54:
      return AgentRole::kReceiversCorrespondent;
    case 55:
      return AgentRole::kReimbursement;
    case 56:
      return AgentRole::kIntermediary;
    case 57:
      return AgentRole::kAccountWithInstitution;
    default:
      return AgentRole::kBeneficiaryInstitution;  // 58a
  }
}

// Appends an agent, reusing the storage of agents a previous message left in "out".
Agent* NextAgent(Transaction* out, size_t* count) {
  if (*count == out->agents.size()) out->agents.emplace_back();
  return &out->agents[(*count)++];
}

// Which field numbers each type allows; a field outside its type's set is an error.
struct FieldSet {
  std::array<bool, 100> allowed{};
  constexpr FieldSet(std::initializer_list<int> numbers) {
    for (int n : numbers) allowed[n] = true;
  }
};
constexpr FieldSet kMt103Fields{13, 20, 23, 26, 32, 33, 36, 50, 51, 52,
                                53, 54, 55, 56, 57, 59, 70, 71, 72, 77};
constexpr FieldSet kMt202Fields{13, 20, 21, 32, 52, 53, 54, 56, 57, 58, 72};
constexpr FieldSet kMt202CovSequenceBFields{33, 50, 52, 56, 57, 59, 70, 72};

bool AllowedIn(MtType type, bool sequence_b, int number) {
  if (type == MtType::kMt103 || type == MtType::kMt103Stp) return kMt103Fields.allowed[number];
  return (sequence_b ? kMt202CovSequenceBFields : kMt202Fields).allowed[number];
}

// A tag as one integer: the number and the option letter.
constexpr int Key(int number, char option) { return number * 256 + option; }

UtcTime DayStart(int year, unsigned month, unsigned day) {
  const std::chrono::sys_days days{std::chrono::year{year} / std::chrono::month{month} /
                                   std::chrono::day{day}};
  return UtcTime(std::chrono::duration_cast<std::chrono::microseconds>(days.time_since_epoch()));
}

int Digits(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// The acknowledgement in front of the message: a NAK refuses it; an ACK's reference and time are
// kept.
absl::Status ReadAcknowledgement(const SwiftMtMessage& m, Transaction* out) {
  out->ack_reference.clear();
  out->ack_time.clear();
  if (!m.acknowledgement.has_value()) return absl::OkStatus();
  const MtAcknowledgement& ack = *m.acknowledgement;
  if (!ack.accepted) {
    const MtField* reference = m.Find("20");
    return absl::InvalidArgumentError(absl::StrCat(
        "SWIFT MT block 4 (ACK), line ", ack.line, ": the network refused this MT",
        ToAbsl(m.application.message_type),
        reference == nullptr ? "" : absl::StrCat(" \"", ToAbsl(reference->value), "\""), " (",
        ack.NakReason(), "); a refused message is not read as a payment"));
  }
  if (!ack.date_time.empty()) {
    const std::string_view t = ack.date_time;
    absl::StatusOr<std::string> date = ParseMtDate(t.substr(0, 6));
    const int hh = Digits(t.substr(6, 2));
    const int mm = Digits(t.substr(8, 2));
    if (!date.ok() || hh > 23 || mm > 59) {
      return absl::InvalidArgumentError(absl::StrCat("SWIFT MT block 4 (ACK), line ", ack.line,
                                                     ": {177:", ToAbsl(t),
                                                     "} is not a valid date and time YYMMDDHHMM"));
    }
    out->ack_time = FormatUtc(DayStart(Digits(date->substr(0, 4)), Digits(date->substr(5, 2)),
                                       Digits(date->substr(8, 2))) +
                              std::chrono::hours(hh) + std::chrono::minutes(mm));
  }
  out->ack_reference = ack.Reference();
  return absl::OkStatus();
}

// The headers' logical terminals carry the BICs the agents and countries come from: both must
// be BICs. "who" is "sender" or "receiver".
absl::Status CheckHeaderBic(const SwiftMtMessage& m, std::string_view who, const std::string& bic) {
  if (absl::Status s = CheckBic(bic); !s.ok()) {
    const bool in_block_1 = (who == "sender") == m.application.input;
    return absl::InvalidArgumentError(absl::StrCat("SWIFT MT block ", in_block_1 ? 1 : 2, ": the ",
                                                   ToAbsl(who), "'s ", s.message()));
  }
  return absl::OkStatus();
}

// Sets what the type and the application header say, and clears the fields a previous message
// may have left in "out" that only some messages set.
void StartTransaction(const SwiftMtMessage& m, MtType type, Transaction* out) {
  out->message_type.assign(MtTypeName(type));
  out->payment_format = PaymentFormat::kWire;
  out->channel.clear();
  out->priority = m.application.priority == 'U' ? Priority::kP0 : Priority::kP1;
  out->label.reset();
  out->remittance.clear();
  out->charges.clear();
  out->purpose.clear();
  out->settled_amount.reset();
  out->ultimate_originator.reset();
  out->ultimate_beneficiary.reset();
}

// Block 3 field 121 (the UETR), normalized; cleared without one.
absl::Status ReadUetr(const SwiftMtMessage& m, Transaction* out) {
  const std::optional<std::string_view> uetr = m.UserHeader("121");
  if (!uetr.has_value()) {
    out->uetr.clear();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> normalized = NormalizeUetr(*uetr);
  if (!normalized.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SWIFT MT block 3, field {121:}: ", normalized.status().message()));
  }
  out->uetr = *std::move(normalized);
  return absl::OkStatus();
}

// The first two agents: the sender (instructing) and the receiver (instructed).
void AddHeaderAgents(const std::string& sender, const std::string& receiver, Transaction* out,
                     size_t* agents) {
  Agent* a = NextAgent(out, agents);
  a->role = AgentRole::kInstructing;
  a->bic = sender;
  a->account_id.clear();
  a->name.clear();
  a->country.assign(BicCountry(sender));
  a = NextAgent(out, agents);
  a->role = AgentRole::kInstructed;
  a->bic = receiver;
  a->account_id.clear();
  a->name.clear();
  a->country.assign(BicCountry(receiver));
}

// What block 4's fields name beyond what they write into the transaction directly: amounts,
// parties and their banks, mapped once every field is read. Views point into the message text.
struct Block4Values {
  std::optional<Money> interbank;   // 32A
  std::optional<Money> instructed;  // 33B (of sequence A; of B for MT202COV)
  PartyFieldValue ordering, beneficiary, cover_ordering, cover_beneficiary;
  bool has_cover_ordering = false, has_cover_beneficiary = false;
  // The BICs of 52a and 57a (sequence A); empty for an option without one. Without the field,
  // the sender is the ordering institution and the receiver the account with institution.
  std::string_view ordering_bank, beneficiary_bank;
  bool has_ordering_bank = false, has_beneficiary_bank = false;
  std::string_view cover_ordering_bank, cover_beneficiary_bank;  // 52A, 57A (sequence B)
  PartyFieldValue fi_originator, fi_beneficiary;                 // MT202: 52a, 58a
  bool has_fi_originator = false;
};

// :23B: (4!c) and :26T: (3!c, kept as the purpose).
absl::Status ReadCodeField(const MtField& f, int key, Transaction* out) {
  if (key == Key(23, 'B')) {
    if (f.value.size() != 4 || !IsUpperAlnum(f.value[0]) || !IsUpperAlnum(f.value[1]) ||
        !IsUpperAlnum(f.value[2]) || !IsUpperAlnum(f.value[3])) {
      return FieldError(f, 0, "the bank operation code is 4 letters or digits (CRED, SPAY, ...)");
    }
    return absl::OkStatus();
  }
  if (f.value.size() != 3 || !IsUpperAlnum(f.value[0]) || !IsUpperAlnum(f.value[1]) ||
      !IsUpperAlnum(f.value[2])) {
    return FieldError(f, 0, "the transaction type code is 3 letters or digits");
  }
  out->purpose.assign(f.value);
  return absl::OkStatus();
}

// :32A: the value date, then the interbank settlement amount.
absl::Status ReadValueDateAmount(const MtField& f, Transaction* out, Block4Values* v) {
  if (f.value.size() < 10 || f.value.find_first_of("\r\n") != std::string_view::npos) {
    return FieldError(f, 0, "expected date, currency and amount (\"250827USD7138,40\")");
  }
  absl::StatusOr<std::string> date = ParseMtDate(f.value.substr(0, 6));
  if (!date.ok()) return WithField(f, 0, date.status());
  out->value_date = *std::move(date);
  absl::StatusOr<Money> amount = ReadCurrencyAmount(f, f.value.substr(6));
  if (!amount.ok()) return amount.status();
  v->interbank = *amount;
  return absl::OkStatus();
}

// :36: digits with one decimal comma, not first, 12 characters at most.
absl::Status CheckExchangeRate(const MtField& f) {
  const size_t comma = f.value.find(',');
  bool ok = comma != std::string_view::npos && comma > 0 && f.value.size() <= 12;
  for (size_t i = 0; ok && i < f.value.size(); ++i) ok = i == comma || IsDigit(f.value[i]);
  if (!ok) return FieldError(f, 0, "the exchange rate is digits with a decimal comma, 12 at most");
  return absl::OkStatus();
}

// :70: 4 lines, joined with a space: the text reads on across line breaks (as RmtInf/Ustrd).
absl::Status ReadRemittance(const MtField& f, Transaction* out) {
  if (absl::Status s = CheckLines(f, 4); !s.ok()) return s;
  out->remittance.clear();
  LineCursor lines(f.value);
  std::string_view line;
  while (lines.Next(&line)) {
    if (!out->remittance.empty()) out->remittance += ' ';
    out->remittance.append(line);
  }
  return absl::OkStatus();
}

// An agent field, 52a to 58a. In sequence A it is the next agent of the chain; in sequence B
// (MT202COV) it names the underlying customer's banks, which locate its parties only.
absl::Status ReadAgentField(const MtField& f, int number, bool sequence_b, Transaction* out,
                            size_t* agents, Block4Values* values) {
  PartyFieldValue v;
  if (sequence_b) {
    Agent cover_agent;
    if (absl::Status s = ReadAgent(f, AgentRoleOf(number), &v, &cover_agent); !s.ok()) return s;
    if (number == 52) values->cover_ordering_bank = v.bic;
    if (number == 57) values->cover_beneficiary_bank = v.bic;
    return absl::OkStatus();
  }
  if (absl::Status s = ReadAgent(f, AgentRoleOf(number), &v, NextAgent(out, agents)); !s.ok()) {
    return s;
  }
  if (number == 52) {
    values->ordering_bank = v.bic;
    values->has_ordering_bank = true;
    values->fi_originator = v;
    values->has_fi_originator = true;
  } else if (number == 57) {
    values->beneficiary_bank = v.bic;
    values->has_beneficiary_bank = true;
  } else if (number == 58) {
    values->fi_beneficiary = v;
  }
  return absl::OkStatus();
}

// Checks and maps one field of block 4 that its type allows; fields vigil does not map (:13C:,
// :51A:) pass.
absl::Status ReadBlock4Field(const MtField& f, bool sequence_b, Transaction* out, size_t* agents,
                             Block4Values* values) {
  const int number = f.number();
  const int key = Key(number, f.option());
  if (key == Key(20, ' ')) {
    if (absl::Status s = CheckReference(f); !s.ok()) return s;
    out->reference.assign(f.value);
  } else if (key == Key(21, ' ')) {
    return CheckReference(f);
  } else if (key == Key(23, 'B') || key == Key(26, 'T')) {
    return ReadCodeField(f, key, out);
  } else if (key == Key(32, 'A')) {
    return ReadValueDateAmount(f, out, values);
  } else if (key == Key(33, 'B') || key == Key(71, 'F') || key == Key(71, 'G')) {
    absl::StatusOr<Money> amount = ReadCurrencyAmount(f, f.value);
    if (!amount.ok()) return amount.status();
    if (key == Key(33, 'B')) values->instructed = *amount;
  } else if (key == Key(36, ' ')) {
    return CheckExchangeRate(f);
  } else if (key == Key(71, 'A')) {
    if (f.value != "OUR" && f.value != "BEN" && f.value != "SHA") {
      return FieldError(f, 0, "details of charges must be OUR, BEN or SHA");
    }
    out->charges.assign(f.value);
  } else if (key == Key(70, ' ')) {
    return ReadRemittance(f, out);
  } else if (key == Key(72, ' ')) {
    return CheckLines(f, 6);
  } else if (key == Key(77, 'B')) {
    return CheckLines(f, 3);
  } else if (number == 50) {  // the ordering customer, 50a
    if (absl::Status s =
            ReadPartyField(f, sequence_b ? &values->cover_ordering : &values->ordering);
        !s.ok()) {
      return s;
    }
    if (sequence_b) values->has_cover_ordering = true;
  } else if (number == 59) {  // the beneficiary customer, 59a
    if (absl::Status s =
            ReadPartyField(f, sequence_b ? &values->cover_beneficiary : &values->beneficiary);
        !s.ok()) {
      return s;
    }
    if (sequence_b) values->has_cover_beneficiary = true;
  } else if (number >= 52 && number <= 58) {
    return ReadAgentField(f, number, sequence_b, out, agents, values);
  }
  return absl::OkStatus();
}

// Every field of block 4, in order: its character set, whether its type (and, for MT202COV,
// its sequence: B starts at field 50) allows it, then its content. Agents are appended after
// the "*agents" already in out->agents.
absl::Status ReadBlock4(const SwiftMtMessage& m, MtType type, Transaction* out, size_t* agents,
                        Block4Values* values) {
  bool sequence_b = false;
  for (const MtField& f : m.fields) {
    if (absl::Status chars = CheckCharset(f); !chars.ok()) return chars;
    const int number = f.number();
    if (type == MtType::kMt202Cov && !sequence_b && number == 50) sequence_b = true;
    if (!AllowedIn(type, sequence_b, number)) {
      return FieldError(f, 0,
                        absl::StrCat("is not a field of ", ToAbsl(MtTypeName(type)),
                                     sequence_b ? " sequence B" : ""));
    }
    if (absl::Status s = ReadBlock4Field(f, sequence_b, out, agents, values); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The instructed amount when the message has one, else the interbank amount; the interbank
// amount is the settled amount when it differs. REQUIRES: values.interbank (32A is mandatory).
void MapAmounts(const Block4Values& values, Transaction* out) {
  const std::optional<Money>& instructed = values.instructed;
  const std::optional<Money>& interbank = values.interbank;
  out->amount = instructed.has_value() ? *instructed : *interbank;
  if (instructed.has_value() &&
      (instructed->currency() != interbank->currency() || *instructed != *interbank)) {
    out->settled_amount = *interbank;
  }
}

// The originator and beneficiary: customers for MT103, banks for MT202 (with MT202COV's
// underlying customers as the ultimate parties). Errors: a party that names no account.
absl::Status MapParties(MtType type, const Block4Values& v, const std::string& sender,
                        const std::string& receiver, Transaction* out) {
  if (type == MtType::kMt103 || type == MtType::kMt103Stp) {
    FillParty(v.ordering, v.has_ordering_bank ? v.ordering_bank : std::string_view(sender),
              PartyKind::kCustomer, &out->originator);
    FillParty(v.beneficiary,
              v.has_beneficiary_bank ? v.beneficiary_bank : std::string_view(receiver),
              PartyKind::kCustomer, &out->beneficiary);
  } else {
    // A bank-to-bank transfer: the ordering institution (52a, else the sender) pays the
    // beneficiary institution (58a).
    if (v.has_fi_originator) {
      FillParty(v.fi_originator, std::string_view(), PartyKind::kBank, &out->originator);
    } else {
      PartyFieldValue s;
      s.bic = sender;
      FillParty(s, std::string_view(), PartyKind::kBank, &out->originator);
    }
    FillParty(v.fi_beneficiary, std::string_view(), PartyKind::kBank, &out->beneficiary);
    if (v.has_cover_ordering) {
      out->ultimate_originator.emplace();
      FillParty(v.cover_ordering, v.cover_ordering_bank, PartyKind::kCustomer,
                &*out->ultimate_originator);
    }
    if (v.has_cover_beneficiary) {
      out->ultimate_beneficiary.emplace();
      FillParty(v.cover_beneficiary, v.cover_beneficiary_bank, PartyKind::kCustomer,
                &*out->ultimate_beneficiary);
    }
  }
  if (out->originator.account_id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SWIFT MT block 4: ", ToAbsl(MtTypeName(type)),
                     ": the ordering party names neither an account, a BIC nor a name"));
  }
  if (out->beneficiary.account_id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SWIFT MT block 4: ", ToAbsl(MtTypeName(type)),
                     ": the beneficiary names neither an account, a BIC nor a name"));
  }
  return absl::OkStatus();
}

// The id: the UETR, stable across the chain; else the sender's reference under its BIC.
void AssignId(const std::string& sender, Transaction* out) {
  if (!out->uetr.empty()) {
    out->id = out->uetr;
  } else {
    out->id.assign(sender);
    out->id += '/';
    out->id += out->reference;
  }
}

// Event time: when the sender input the message (output messages carry it, in the sender's
// local time, read as UTC), else the value date at midnight UTC. REQUIRES: out->value_date set.
absl::Status ReadEventTime(const SwiftMtMessage& m, Transaction* out) {
  if (!m.application.input && m.application.input_reference.size() >= 6 &&
      m.application.input_time.size() == 4) {
    const std::string_view d = m.application.input_reference.substr(0, 6);
    absl::StatusOr<std::string> date = ParseMtDate(d);
    const int hh = Digits(m.application.input_time.substr(0, 2));
    const int mm = Digits(m.application.input_time.substr(2, 2));
    if (!date.ok() || hh > 23 || mm > 59) {
      return absl::InvalidArgumentError(
          absl::StrCat("SWIFT MT block 2: the input date and time \"", ToAbsl(d), " ",
                       ToAbsl(m.application.input_time), "\" are not a valid YYMMDD HHMM"));
    }
    out->event_time = DayStart(Digits(date->substr(0, 4)), Digits(date->substr(5, 2)),
                               Digits(date->substr(8, 2))) +
                      std::chrono::hours(hh) + std::chrono::minutes(mm);
  } else {
    out->event_time =
        DayStart(Digits(out->value_date.substr(0, 4)), Digits(out->value_date.substr(5, 2)),
                 Digits(out->value_date.substr(8, 2)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SwiftMtToTransaction(const SwiftMtMessage& m, Transaction* out) {
  if (absl::Status s = ReadAcknowledgement(m, out); !s.ok()) return s;
  absl::StatusOr<MtType> type = SupportedMtType(m);
  if (!type.ok()) return type.status();
  if (absl::Status fields = CheckMtFields(m, *type); !fields.ok()) return fields;

  const std::string sender = m.SenderBic();
  const std::string receiver = m.ReceiverBic();
  if (absl::Status s = CheckHeaderBic(m, "sender", sender); !s.ok()) return s;
  if (absl::Status s = CheckHeaderBic(m, "receiver", receiver); !s.ok()) return s;
  StartTransaction(m, *type, out);
  if (absl::Status s = ReadUetr(m, out); !s.ok()) return s;

  // The agents: sender and receiver first, then the agent fields of sequence A in order.
  size_t agents = 0;
  AddHeaderAgents(sender, receiver, out, &agents);
  Block4Values values;
  if (absl::Status s = ReadBlock4(m, *type, out, &agents, &values); !s.ok()) return s;
  out->agents.resize(agents);

  MapAmounts(values, out);
  if (absl::Status s = MapParties(*type, values, sender, receiver, out); !s.ok()) return s;
  AssignId(sender, out);
  return ReadEventTime(m, out);
}

absl::StatusOr<Transaction> ParseSwiftMt(std::string_view text) {
  absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(text);
  if (!m.ok()) return m.status();
  Transaction tx;
  if (absl::Status s = SwiftMtToTransaction(*m, &tx); !s.ok()) return s;
  return tx;
}

bool LooksLikeSwiftMt(std::string_view text) {
  size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) {
    ++i;
  }
  return text.substr(i, 3) == "{1:";
}

}  // namespace vigil
