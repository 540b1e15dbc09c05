#include "vigil/ingest/json_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/ingest/internal/json_scanner.h"
#include "vigil/ingest/internal/string_view.h"

namespace vigil {
namespace {

namespace dom = simdjson::dom;
using ingest_internal::ToAbsl;

// Ids are idempotency keys and end up in logs and audit records: bounded and printable.
constexpr size_t kMaxIdBytes = 256;

std::string_view TypeName(dom::element_type t) {
  switch (t) {
    case dom::element_type::ARRAY:
      return "an array";
    case dom::element_type::OBJECT:
      return "an object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      return "a number";
    case dom::element_type::STRING:
      return "a string";
    case dom::element_type::BOOL:
      return "a boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

bool IsNumber(dom::element_type t) {
  return t == dom::element_type::INT64 || t == dom::element_type::UINT64 ||
         t == dom::element_type::DOUBLE;
}

// Top-level members, in the order TransactionToJson writes them.
enum TopField : int {
  kId,
  kTimestamp,
  kOriginator,
  kBeneficiary,
  kAmount,
  kSettledAmount,
  kPaymentFormat,
  kChannel,
  kRemittance,
  kPriority,
  kLabel,
  kMessageType,
  kReference,
  kUetr,
  kValueDate,
  kCharges,
  kPurpose,
  kAgents,
  kUltimateOriginator,
  kUltimateBeneficiary,
  kAckTime,
  kAckReference,
  kNumTopFields,
};
constexpr std::string_view kTopNames[kNumTopFields] = {
    "id",           "timestamp",           "originator",          "beneficiary",
    "amount",       "settled_amount",      "payment_format",      "channel",
    "remittance",   "priority",            "label",               "message_type",
    "reference",    "uetr",                "value_date",          "charges",
    "purpose",      "agents",              "ultimate_originator", "ultimate_beneficiary",
    "ack_time",     "ack_reference"};
constexpr std::string_view kTopPaths[kNumTopFields] = {
    "$.id",           "$.timestamp",           "$.originator",          "$.beneficiary",
    "$.amount",       "$.settled_amount",      "$.payment_format",      "$.channel",
    "$.remittance",   "$.priority",            "$.label",               "$.message_type",
    "$.reference",    "$.uetr",                "$.value_date",          "$.charges",
    "$.purpose",      "$.agents",              "$.ultimate_originator", "$.ultimate_beneficiary",
    "$.ack_time",     "$.ack_reference"};

// Member names are matched by length first, then one fixed-size compare (inlined): key lookup
// is a large share of the per-document cost after simdjson itself.
template <size_t N>
bool Is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

int TopFieldOf(std::string_view key) {
  switch (key.size()) {
    case 2:
      return Is(key, "id") ? kId : -1;
    case 4:
      return Is(key, "uetr") ? kUetr : -1;
    case 5:
      return Is(key, "label") ? kLabel : -1;
    case 6:
      return Is(key, "amount") ? kAmount : Is(key, "agents") ? kAgents : -1;
    case 7:
      return Is(key, "channel")   ? kChannel
             : Is(key, "charges") ? kCharges
             : Is(key, "purpose") ? kPurpose
                                  : -1;
    case 8:
      return Is(key, "priority") ? kPriority : Is(key, "ack_time") ? kAckTime : -1;
    case 9:
      return Is(key, "timestamp") ? kTimestamp : Is(key, "reference") ? kReference : -1;
    case 10:
      return Is(key, "originator")   ? kOriginator
             : Is(key, "remittance") ? kRemittance
             : Is(key, "value_date") ? kValueDate
                                     : -1;
    case 11:
      return Is(key, "beneficiary") ? kBeneficiary : -1;
    case 12:
      return Is(key, "message_type") ? kMessageType : -1;
    case 13:
      return Is(key, "ack_reference") ? kAckReference : -1;
    case 14:
      return Is(key, "settled_amount")   ? kSettledAmount
             : Is(key, "payment_format") ? kPaymentFormat
                                         : -1;
    case 19:
      return Is(key, "ultimate_originator") ? kUltimateOriginator : -1;
    case 20:
      return Is(key, "ultimate_beneficiary") ? kUltimateBeneficiary : -1;
    default:
      return -1;
  }
}

enum PartyField : int { kAccountId, kName, kBankId, kCountry, kAddress };
int PartyFieldOf(std::string_view key) {
  if (Is(key, "account_id")) return kAccountId;
  if (Is(key, "name")) return kName;
  if (Is(key, "bank_id")) return kBankId;
  if (Is(key, "country")) return kCountry;
  if (Is(key, "address")) return kAddress;
  return -1;
}

enum AgentField : int { kAgentRole, kAgentBic, kAgentAccount, kAgentName, kAgentCountry };
int AgentFieldOf(std::string_view key) {
  if (Is(key, "role")) return kAgentRole;
  if (Is(key, "bic")) return kAgentBic;
  if (Is(key, "account_id")) return kAgentAccount;
  if (Is(key, "name")) return kAgentName;
  if (Is(key, "country")) return kAgentCountry;
  return -1;
}

bool IsCountryCode(std::string_view s) {
  return s.size() == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z';
}

enum MoneyField : int { kValue, kCurrency };
int MoneyFieldOf(std::string_view key) {
  if (Is(key, "value")) return kValue;
  if (Is(key, "currency")) return kCurrency;
  return -1;
}

enum LabelField : int { kIsLaundering, kTypology };
int LabelFieldOf(std::string_view key) {
  if (Is(key, "is_laundering")) return kIsLaundering;
  if (Is(key, "typology")) return kTypology;
  return -1;
}

// The snake-case names of PaymentFormatJsonName() (a test checks the two agree).
std::optional<PaymentFormat> JsonPaymentFormat(std::string_view s) {
  switch (s.size()) {
    case 3:
      if (Is(s, "ach")) return PaymentFormat::kAch;
      break;
    case 4:
      if (Is(s, "cash")) return PaymentFormat::kCash;
      if (Is(s, "wire")) return PaymentFormat::kWire;
      break;
    case 6:
      if (Is(s, "cheque")) return PaymentFormat::kCheque;
      break;
    case 7:
      if (Is(s, "bitcoin")) return PaymentFormat::kBitcoin;
      if (Is(s, "unknown")) return PaymentFormat::kUnknown;
      break;
    case 11:
      if (Is(s, "credit_card")) return PaymentFormat::kCreditCard;
      break;
    case 12:
      if (Is(s, "reinvestment")) return PaymentFormat::kReinvestment;
      break;
    default:
      break;
  }
  return std::nullopt;
}

// "P0", "P1", "P2" (lower case accepted, as ParsePriority does).
std::optional<Priority> JsonPriority(std::string_view s) {
  if (s.size() != 2 || (s[0] != 'P' && s[0] != 'p') || s[1] < '0' || s[1] > '2') {
    return std::nullopt;
  }
  return static_cast<Priority>(s[1] - '0');
}

}  // namespace

class JsonTransactionParser::Impl {
 public:
  explicit Impl(JsonParserOptions options) : options_(std::move(options)) {}

  const JsonParserOptions& options() const { return options_; }

  bool Parse(std::string_view json, Transaction* tx, RecordError* error) {
    error_ = error;
    json_ = json;
    // simdjson reads up to SIMDJSON_PADDING bytes past the end: parse a padded copy.
    const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
    if (needed > capacity_) {
      capacity_ = std::max(needed, capacity_ * 2);
      buffer_ = std::make_unique<char[]>(capacity_);
    }
    if (!json.empty()) std::memcpy(buffer_.get(), json.data(), json.size());
    std::memset(buffer_.get() + json.size(), ' ', simdjson::SIMDJSON_PADDING);

    dom::element root;
    if (const simdjson::error_code ec =
            parser_.parse(buffer_.get(), json.size(), /*realloc_if_needed=*/false).get(root);
        ec != simdjson::SUCCESS) {
      return SyntaxError(ec);
    }
    dom::object object;
    if (root.get_object().get(object) != simdjson::SUCCESS) {
      return Fail("$", "invalid_type",
                  absl::StrCat("expected a JSON object, got ", ToAbsl(TypeName(root.type()))));
    }
    return ParseTop(object, tx);
  }

 private:
  // Always returns false.
  bool Fail(std::string_view path, std::string_view reason, std::string message) {
    error_->source = options_.source_name;
    error_->line = 0;
    error_->field.assign(path);
    error_->reason.assign(reason);
    error_->message = std::move(message);
    error_->byte_offset = -1;
    return false;
  }

  bool SyntaxError(simdjson::error_code ec) {
    if (std::optional<ingest_internal::JsonSyntaxError> e =
            ingest_internal::FindJsonSyntaxError(json_)) {
      Fail(e->path, "invalid_json",
           absl::StrCat("JSON syntax error at byte ", e->offset, ": ", e->message));
      error_->byte_offset = static_cast<int64_t>(e->offset);
      return false;
    }
    // Valid JSON that simdjson still refuses: a number out of its range, or nesting too deep.
    // A number too large for the DOM (beyond 2^64, or a double) is an amount's overflow when an
    // amount is written so: said on that amount, as any other amount vigil cannot hold.
    if (ec == simdjson::NUMBER_ERROR) {
      for (const std::string_view key :
           {std::string_view("amount"), std::string_view("settled_amount")}) {
        const std::optional<std::string_view> raw =
            ingest_internal::FindRawScalar(json_, {key, "value"});
        if (!raw.has_value() || raw->empty() || raw->front() == '"') continue;
        absl::StatusOr<Money> money = Money::Parse(ToAbsl(*raw), Currency());
        if (money.ok()) continue;
        return Fail(Child(Child("$", key), "value"), "invalid_amount",
                    std::string(money.status().message()));
      }
    }
    return Fail("$", "invalid_json",
                absl::StrCat("JSON not accepted: ", simdjson::error_message(ec)));
  }

  static std::string Child(std::string_view parent, std::string_view key) {
    std::string path;
    ingest_internal::AppendJsonPath(parent, key, &path);
    return path;
  }

  bool UnknownField(std::string_view parent, std::string_view key) {
    return Fail(
        Child(parent, key), "unknown_field",
        absl::StrCat("unknown field '", ToAbsl(key), "' (see docs/ingest.md for the schema)"));
  }
  bool DuplicateField(std::string_view parent, std::string_view key) {
    return Fail(Child(parent, key), "duplicate_field",
                absl::StrCat("field '", ToAbsl(key), "' appears more than once"));
  }
  bool WrongType(std::string_view path, std::string_view expected, dom::element v) {
    return Fail(path, "invalid_type",
                absl::StrCat("expected ", ToAbsl(expected), ", got ", ToAbsl(TypeName(v.type()))));
  }

  // Reads a string value; false (with the error set) when "v" is not a string.
  bool GetString(dom::element v, std::string_view path, std::string_view* out) {
    if (v.get_string().get(*out) != simdjson::SUCCESS) return WrongType(path, "a string", v);
    return true;
  }
  // Same for member "key" of the object at "parent"; the path is built only on error.
  bool GetString(dom::element v, std::string_view parent, std::string_view key,
                 std::string_view* out) {
    if (v.get_string().get(*out) != simdjson::SUCCESS) {
      return WrongType(Child(parent, key), "a string", v);
    }
    return true;
  }

  bool ParseTop(dom::object object, Transaction* tx) {
    uint32_t seen = 0;
    uint32_t present = 0;
    bool has_settled = false;
    Money settled;
    for (dom::key_value_pair member : object) {
      const int field = TopFieldOf(member.key);
      if (field < 0) return UnknownField("$", member.key);
      const uint32_t bit = uint32_t{1} << field;
      if (seen & bit) return DuplicateField("$", member.key);
      seen |= bit;
      const dom::element v = member.value;
      if (v.is_null()) continue;  // null is absent
      present |= bit;
      const std::string_view path = kTopPaths[field];
      std::string_view s;
      switch (static_cast<TopField>(field)) {
        case kId:
          if (!GetString(v, path, &s) || !CheckId(s)) return false;
          tx->id.assign(s);
          break;
        case kTimestamp: {
          if (!GetString(v, path, &s)) return false;
          absl::StatusOr<UtcTime> t = ParseRfc3339(ToAbsl(s));
          if (!t.ok()) return Fail(path, "invalid_timestamp", std::string(t.status().message()));
          tx->event_time = *t;
          break;
        }
        case kOriginator:
          if (!ParseParty(v, path, &tx->originator)) return false;
          break;
        case kBeneficiary:
          if (!ParseParty(v, path, &tx->beneficiary)) return false;
          break;
        case kAmount:
          if (!ParseMoney(v, path, "amount", &tx->amount)) return false;
          break;
        case kSettledAmount:
          if (!ParseMoney(v, path, "settled_amount", &settled)) return false;
          has_settled = true;
          break;
        case kPaymentFormat: {
          if (!GetString(v, path, &s)) return false;
          // The AMLworld spellings ("Credit Card") are not part of the JSON schema.
          const std::optional<PaymentFormat> f = JsonPaymentFormat(s);
          if (!f) {
            return Fail(path, "unknown_payment_format",
                        absl::StrCat("unknown payment format '", ToAbsl(s),
                                     "' (expected ach, bitcoin, cash, cheque, credit_card, "
                                     "reinvestment, wire or unknown)"));
          }
          tx->payment_format = *f;
          break;
        }
        case kChannel:
          if (!GetString(v, path, &s)) return false;
          tx->channel.assign(s);
          break;
        case kRemittance:
          if (!GetString(v, path, &s)) return false;
          tx->remittance.assign(s);
          break;
        case kPriority: {
          if (!GetString(v, path, &s)) return false;
          const std::optional<Priority> p = JsonPriority(s);
          if (!p) {
            return Fail(path, "invalid_value",
                        absl::StrCat("unknown priority '", ToAbsl(s), "' (expected P0, P1 or P2)"));
          }
          tx->priority = *p;
          break;
        }
        case kLabel:
          if (!ParseLabel(v, path, tx)) return false;
          break;
        case kMessageType:
        case kReference:
        case kUetr:
        case kValueDate:
        case kCharges:
        case kPurpose:
        case kAckReference:
        case kAckTime: {
          if (!GetString(v, path, &s)) return false;
          std::string* target = field == kMessageType    ? &tx->message_type
                                : field == kReference    ? &tx->reference
                                : field == kUetr         ? &tx->uetr
                                : field == kValueDate    ? &tx->value_date
                                : field == kCharges      ? &tx->charges
                                : field == kAckReference ? &tx->ack_reference
                                : field == kAckTime      ? &tx->ack_time
                                                         : &tx->purpose;
          target->assign(s);
          break;
        }
        case kAgents:
          if (!ParseAgents(v, path, &tx->agents)) return false;
          break;
        case kUltimateOriginator:
          if (!ParseParty(v, path, &tx->ultimate_originator.emplace(), false)) return false;
          break;
        case kUltimateBeneficiary:
          if (!ParseParty(v, path, &tx->ultimate_beneficiary.emplace(), false)) return false;
          break;
        case kNumTopFields:
          break;
      }
    }
    for (const TopField required : {kId, kTimestamp, kOriginator, kBeneficiary, kAmount}) {
      if (!(present & (uint32_t{1} << required))) {
        return Fail(kTopPaths[required], "missing_field",
                    absl::StrCat("required field '", ToAbsl(kTopNames[required]), "' is missing"));
      }
    }
    // Optional members that were absent get their defaults (the Transaction is reused).
    if (!(present & (1u << kPaymentFormat))) tx->payment_format = PaymentFormat::kUnknown;
    if (!(present & (1u << kChannel))) tx->channel.clear();
    if (!(present & (1u << kRemittance))) tx->remittance.clear();
    if (!(present & (1u << kPriority))) tx->priority = options_.default_priority;
    if (!(present & (1u << kLabel))) tx->label.reset();
    if (!(present & (1u << kMessageType))) tx->message_type.clear();
    if (!(present & (1u << kReference))) tx->reference.clear();
    if (!(present & (1u << kUetr))) tx->uetr.clear();
    if (!(present & (1u << kValueDate))) tx->value_date.clear();
    if (!(present & (1u << kCharges))) tx->charges.clear();
    if (!(present & (1u << kPurpose))) tx->purpose.clear();
    if (!(present & (1u << kAgents))) tx->agents.clear();
    if (!(present & (1u << kUltimateOriginator))) tx->ultimate_originator.reset();
    if (!(present & (1u << kUltimateBeneficiary))) tx->ultimate_beneficiary.reset();
    if (!(present & (1u << kAckReference))) tx->ack_reference.clear();
    if (!(present & (1u << kAckTime))) tx->ack_time.clear();
    // The Transaction carries a settled amount only when it differs from the instructed one.
    if (has_settled && !(settled == tx->amount)) {
      tx->settled_amount = settled;
    } else {
      tx->settled_amount.reset();
    }
    return true;
  }

  bool CheckId(std::string_view id) {
    if (id.empty()) return Fail("$.id", "invalid_value", "id is empty");
    if (id.size() > kMaxIdBytes) {
      return Fail("$.id", "invalid_value",
                  absl::StrCat("id is ", id.size(), " bytes, more than ", kMaxIdBytes));
    }
    for (const char c : id) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return Fail("$.id", "invalid_value", "id contains a control character");
      }
    }
    return true;
  }

  // A party; "require_account": the originator and beneficiary need an account_id, the
  // ultimate parties (often a name alone) do not.
  bool ParseParty(dom::element v, std::string_view path, Party* party,
                  bool require_account = true) {
    dom::object object;
    if (v.get_object().get(object) != simdjson::SUCCESS) return WrongType(path, "an object", v);
    uint32_t seen = 0;
    uint32_t present = 0;
    for (dom::key_value_pair member : object) {
      const int field = PartyFieldOf(member.key);
      if (field < 0) return UnknownField(path, member.key);
      if (seen & (1u << field)) return DuplicateField(path, member.key);
      seen |= 1u << field;
      if (member.value.is_null()) continue;
      present |= 1u << field;
      if (field == kAddress) {
        if (!ParseLines(member.value, Child(path, "address"), &party->address)) return false;
        continue;
      }
      std::string_view s;
      if (!GetString(member.value, path, member.key, &s)) return false;
      switch (field) {
        case kAccountId:
          if (s.empty()) {
            return Fail(Child(path, "account_id"), "empty_account", "account_id is empty");
          }
          party->account_id.assign(s);
          break;
        case kName:
          party->name.assign(s);
          break;
        case kBankId:
          party->bank_id.assign(s);
          break;
        case kCountry:
          if (!IsCountryCode(s)) {
            return Fail(Child(path, "country"), "invalid_value",
                        absl::StrCat("country '", ToAbsl(s),
                                     "' is not an ISO 3166-1 alpha-2 code (2 upper-case letters)"));
          }
          party->country.assign(s);
          break;
      }
    }
    if (require_account && !(present & 1u)) {
      return Fail(Child(path, "account_id"), "missing_field",
                  "required field 'account_id' is missing");
    }
    if (!(present & 1u)) party->account_id.clear();
    if (!(present & 2u)) party->name.clear();
    if (!(present & 4u)) party->bank_id.clear();
    if (!(present & 8u)) party->country.clear();
    if (!(present & 16u)) party->address.clear();
    return true;
  }

  // An array of strings (address lines).
  bool ParseLines(dom::element v, const std::string& path, std::vector<std::string>* lines) {
    dom::array array;
    if (v.get_array().get(array) != simdjson::SUCCESS) {
      return WrongType(path, "an array of strings", v);
    }
    lines->clear();
    size_t i = 0;
    for (dom::element e : array) {
      std::string_view s;
      if (!GetString(e, absl::StrCat(path, "[", i, "]"), &s)) return false;
      lines->emplace_back(s);
      ++i;
    }
    return true;
  }

  bool ParseAgents(dom::element v, std::string_view path, std::vector<Agent>* agents) {
    dom::array array;
    if (v.get_array().get(array) != simdjson::SUCCESS) {
      return WrongType(path, "an array of objects", v);
    }
    agents->clear();
    for (dom::element e : array) {
      const std::string at = absl::StrCat(ToAbsl(path), "[", agents->size(), "]");
      dom::object object;
      if (e.get_object().get(object) != simdjson::SUCCESS) return WrongType(at, "an object", e);
      Agent& agent = agents->emplace_back();
      uint32_t seen = 0;
      for (dom::key_value_pair member : object) {
        const int field = AgentFieldOf(member.key);
        if (field < 0) return UnknownField(at, member.key);
        if (seen & (1u << field)) return DuplicateField(at, member.key);
        seen |= 1u << field;
        if (member.value.is_null()) continue;
        std::string_view s;
        if (!GetString(member.value, at, member.key, &s)) return false;
        switch (field) {
          case kAgentRole: {
            absl::StatusOr<AgentRole> role = ParseAgentRole(ToAbsl(s));
            if (!role.ok()) {
              return Fail(Child(at, "role"), "invalid_value", std::string(role.status().message()));
            }
            agent.role = *role;
            seen |= 1u << 31;  // the role was given
            break;
          }
          case kAgentBic: agent.bic.assign(s); break;
          case kAgentAccount: agent.account_id.assign(s); break;
          case kAgentName: agent.name.assign(s); break;
          case kAgentCountry:
            if (!IsCountryCode(s)) {
              return Fail(Child(at, "country"), "invalid_value",
                          absl::StrCat("country '", ToAbsl(s),
                                       "' is not an ISO 3166-1 alpha-2 code"));
            }
            agent.country.assign(s);
            break;
        }
      }
      if (!(seen & (1u << 31))) {
        return Fail(Child(at, "role"), "missing_field", "required field 'role' is missing");
      }
    }
    return true;
  }

  // "top_key" is the member name of this amount at the top level, used to find the digits of a
  // numeric value in the source text.
  bool ParseMoney(dom::element v, std::string_view path, std::string_view top_key, Money* out) {
    dom::object object;
    if (v.get_object().get(object) != simdjson::SUCCESS) return WrongType(path, "an object", v);
    uint32_t seen = 0;
    std::string_view value_text;
    std::string_view currency_text;
    bool has_value = false, has_currency = false;
    for (dom::key_value_pair member : object) {
      const int field = MoneyFieldOf(member.key);
      if (field < 0) return UnknownField(path, member.key);
      if (seen & (1u << field)) return DuplicateField(path, member.key);
      seen |= 1u << field;
      const dom::element m = member.value;
      if (m.is_null()) continue;
      if (field == kValue) {
        has_value = true;
        if (IsNumber(m.type())) {
          // The DOM holds numbers as binary doubles; amounts are read from the digits sent.
          std::optional<std::string_view> raw =
              ingest_internal::FindRawScalar(json_, {top_key, "value"});
          if (!raw) {
            return Fail(Child(path, "value"), "invalid_amount",
                        "cannot locate the digits of the amount (was the key escaped?)");
          }
          value_text = *raw;
        } else if (!GetString(m, path, "value", &value_text)) {
          return false;
        }
      } else {
        has_currency = true;
        if (!GetString(m, path, "currency", &currency_text)) return false;
      }
    }
    if (!has_value) {
      return Fail(Child(path, "value"), "missing_field", "required field 'value' is missing");
    }
    if (!has_currency) {
      return Fail(Child(path, "currency"), "missing_field", "required field 'currency' is missing");
    }
    Currency currency;
    if (!LookupCurrency(currency_text, &currency)) {
      return Fail(Child(path, "currency"), "unknown_currency",
                  std::string(Currency::FromCode(ToAbsl(currency_text)).status().message()));
    }
    absl::StatusOr<Money> money = Money::Parse(ToAbsl(value_text), currency);
    if (!money.ok()) {
      return Fail(Child(path, "value"), "invalid_amount", std::string(money.status().message()));
    }
    if (money->is_negative()) {
      return Fail(Child(path, "value"), "negative_amount",
                  absl::StrCat("amount '", ToAbsl(value_text), "' is negative"));
    }
    if (options_.enforce_iso_minor_units) {
      if (absl::Status s = money->CheckIsoExponent(); !s.ok()) {
        return Fail(Child(path, "value"), "invalid_amount", std::string(s.message()));
      }
    }
    *out = *money;
    return true;
  }

  // Currency::FromCode binary-searches the ISO table; a payment stream uses a handful of
  // currencies, so the codes already seen are remembered (first kCachedCurrencies of them).
  bool LookupCurrency(std::string_view code, Currency* out) {
    if (code.size() == 3) {
      for (int i = 0; i < num_cached_; ++i) {
        if (std::memcmp(cached_[i].code, code.data(), 3) == 0) {
          *out = cached_[i].currency;
          return true;
        }
      }
    }
    absl::StatusOr<Currency> currency = Currency::FromCode(ToAbsl(code));
    if (!currency.ok()) return false;
    if (num_cached_ < kCachedCurrencies) {
      std::memcpy(cached_[num_cached_].code, code.data(), 3);
      cached_[num_cached_].currency = *currency;
      ++num_cached_;
    }
    *out = *currency;
    return true;
  }

  bool ParseLabel(dom::element v, std::string_view path, Transaction* tx) {
    dom::object object;
    if (v.get_object().get(object) != simdjson::SUCCESS) return WrongType(path, "an object", v);
    Label& label = tx->label ? *tx->label : tx->label.emplace();
    uint32_t seen = 0;
    bool has_flag = false, has_typology = false;
    for (dom::key_value_pair member : object) {
      const int field = LabelFieldOf(member.key);
      if (field < 0) return UnknownField(path, member.key);
      if (seen & (1u << field)) return DuplicateField(path, member.key);
      seen |= 1u << field;
      if (member.value.is_null()) continue;
      if (field == kIsLaundering) {
        if (member.value.get_bool().get(label.is_laundering) != simdjson::SUCCESS) {
          return WrongType(Child(path, "is_laundering"), "a boolean", member.value);
        }
        has_flag = true;
      } else {
        std::string_view s;
        if (!GetString(member.value, path, "typology", &s)) return false;
        label.typology.assign(s);
        has_typology = true;
      }
    }
    if (!has_flag) {
      return Fail(Child(path, "is_laundering"), "missing_field",
                  "required field 'is_laundering' is missing");
    }
    if (!has_typology) label.typology.clear();
    return true;
  }

  struct CachedCurrency {
    char code[3];
    Currency currency;
  };
  static constexpr int kCachedCurrencies = 16;

  JsonParserOptions options_;
  dom::parser parser_;
  CachedCurrency cached_[kCachedCurrencies];
  int num_cached_ = 0;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  // Per call.
  std::string_view json_;
  RecordError* error_ = nullptr;
};

JsonTransactionParser::JsonTransactionParser(JsonParserOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
JsonTransactionParser::~JsonTransactionParser() = default;
JsonTransactionParser::JsonTransactionParser(JsonTransactionParser&&) noexcept = default;
JsonTransactionParser& JsonTransactionParser::operator=(JsonTransactionParser&&) noexcept = default;

bool JsonTransactionParser::Parse(std::string_view json, Transaction* tx, RecordError* error) {
  return impl_->Parse(json, tx, error);
}

absl::StatusOr<Transaction> JsonTransactionParser::Parse(std::string_view json) {
  Transaction tx;
  RecordError error;
  if (!Parse(json, &tx, &error)) return error.ToStatus();
  return tx;
}

const JsonParserOptions& JsonTransactionParser::options() const { return impl_->options(); }

}  // namespace vigil
