#include "vigil/audit/audit_record.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/common/check.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/crypto/primitives.h"

namespace vigil::audit {
namespace {

constexpr char kMagic[] = {'V', 'A', 'R'};
constexpr size_t kHeaderSize = sizeof(kMagic) + 1;

enum Wire : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kSealed = 6 };

constexpr uint64_t kCanonicalNan = 0x7ff8000000000000;

// Field numbers (docs/audit.md, "Record encoding"). Stable forever: a number is never reused.
namespace record_field {
enum : uint32_t {
  kSequence = 1,
  kPrevious = 2,
  kReceived = 3,
  kDecided = 4,
  kActor = 5,
  kSource = 6,
  kInputFormat = 7,
  kInputSha256 = 8,
  kTransaction = 9,
  kFeatures = 10,
  kDecision = 11,
  kDataKeyId = 12,
  kPaymentFingerprint = 13,
  kEvent = 14,
};
}  // namespace record_field

namespace tx_field {
enum : uint32_t {
  kId = 1,
  kEventTime = 2,
  kOriginator = 3,
  kBeneficiary = 4,
  kAmount = 5,
  kSettled = 6,
  kFormat = 7,
  kChannel = 8,
  kRemittance = 9,
  kPriority = 10,
  kLabel = 11,
  kMessageType = 12,
  kReference = 13,
  kUetr = 14,
  kValueDate = 15,
  kCharges = 16,
  kPurpose = 17,
  kAgents = 18,
  kUltimateOriginator = 19,
  kUltimateBeneficiary = 20,
  kAckReference = 21,
  kAckTime = 22,
};
}  // namespace tx_field

namespace decision_field {
enum : uint32_t {
  kTransactionId = 1,
  kTraceId = 2,
  kTraceparent = 3,
  kAction = 4,
  kScore = 5,
  kReasons = 6,
  kSchema = 7,
  kPolicy = 8,
  kModel = 9,
  kRole = 10,
  kShadowModel = 11,
  kShadowScore = 12,
  kDegraded = 13,
  kDegradedReason = 14,
  kTimings = 15,
  kScreeningScore = 16,
  kScreeningLists = 17,
  kBackend = 18,
  kAccounts = 19,
};
}  // namespace decision_field

// ---------------------------------------------------------------------------------------------
// Writing

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<char>(v));
  }
  void Key(uint32_t number, Wire wire) { Varint(uint64_t{number} << 3 | wire); }

  void UInt(uint32_t number, uint64_t v) {
    if (v == 0) return;
    Key(number, kVarint);
    Varint(v);
  }
  void SInt(uint32_t number, int64_t v) {
    UInt(number, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void Bool(uint32_t number, bool v) { UInt(number, v ? 1 : 0); }
  // An element of a repeated field: written even when empty (its place in the list counts).
  void RepeatedBytes(uint32_t number, std::string_view v) {
    Key(number, kBytes);
    Varint(v.size());
    out_->append(v);
  }
  void Bytes(uint32_t number, std::string_view v) {
    if (v.empty()) return;
    Key(number, kBytes);
    Varint(v.size());
    out_->append(v);
  }
  void Sealed(uint32_t number, std::string_view sealed) {
    Key(number, kSealed);
    Varint(sealed.size());
    out_->append(sealed);
  }
  void Hash32(uint32_t number, const Hash& h) {
    Bytes(number, std::string_view(reinterpret_cast<const char*>(h.data()), h.size()));
  }
  // A double present iff not NaN (a score that was not computed is absent, 0 is a score).
  void OptionalDouble(uint32_t number, double v) {
    if (std::isnan(v)) return;
    Key(number, kFixed64);
    Fixed64(std::bit_cast<uint64_t>(v));
  }
  // A double left out iff +0.0.
  void Double(uint32_t number, double v) {
    const uint64_t bits = Bits(v);
    if (bits == 0) return;
    Key(number, kFixed64);
    Fixed64(bits);
  }
  void PackedDoubles(uint32_t number, absl::Span<const double> v) {
    if (v.empty()) return;
    Key(number, kBytes);
    Varint(8 * v.size());
    for (double d : v) Fixed64(Bits(d));
  }
  // A nested message built by "fill"; left out when empty unless "always" (a present optional).
  template <typename Fill>
  void Message(uint32_t number, Fill fill, bool always = false) {
    std::string inner;
    Writer w(&inner);
    fill(w);
    if (inner.empty() && !always) return;
    Key(number, kBytes);
    Varint(inner.size());
    out_->append(inner);
  }

 private:
  static uint64_t Bits(double d) { return std::isnan(d) ? kCanonicalNan : std::bit_cast<uint64_t>(d); }
  void Fixed64(uint64_t bits) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(bits >> (8 * i));
    out_->append(b, 8);
  }

  std::string* out_;
};

// How the transaction's personal fields are written when they may be sealed: sealed by a
// RecordSealer, or as the sealed bytes a decoded record holds (so that it re-encodes to its
// stored bytes). Without either, the writers below are given no Sealing and write in the clear.
struct Sealing {
  const RecordSealer* sealer = nullptr;
  absl::Span<const SealedField> presealed;
  std::string_view transaction_id;
  absl::Status status;  // the first sealing failure
  bool any = false;     // a field was written sealed

  const std::string* Presealed(std::string_view path) const {
    for (const SealedField& f : presealed) {
      if (f.path == path) return &f.bytes;
    }
    return nullptr;
  }
  void Seal(Writer& w, uint32_t number, std::string_view path, std::string_view payload) {
    absl::StatusOr<std::string> sealed = sealer->Seal(transaction_id, path, payload);
    if (!sealed.ok()) {
      if (status.ok()) status = sealed.status();
      return;
    }
    w.Sealed(number, *sealed);
    any = true;
  }
  // A personal string field, "<prefix>.<leaf>": sealed, or in the clear when nothing seals.
  void Field(Writer& w, uint32_t number, std::string_view prefix, std::string_view leaf,
             std::string_view value) {
    const std::string path = absl::StrCat(ToAbsl(prefix), ".", ToAbsl(leaf));
    if (const std::string* bytes = Presealed(path)) {
      w.Sealed(number, *bytes);
      any = true;
    } else if (sealer == nullptr) {
      w.Bytes(number, value);
    } else if (!value.empty()) {
      Seal(w, number, path, value);
    }
  }
  // An address (repeated): all its lines sealed as one field, whose payload is each line as
  // varint length ‖ bytes; in the clear one element per line.
  void Address(Writer& w, uint32_t number, std::string_view prefix,
               const std::vector<std::string>& lines) {
    const std::string path = absl::StrCat(ToAbsl(prefix), ".address");
    if (const std::string* bytes = Presealed(path)) {
      w.Sealed(number, *bytes);
      any = true;
    } else if (sealer == nullptr) {
      for (const std::string& line : lines) w.RepeatedBytes(number, line);
    } else if (!lines.empty()) {
      std::string payload;
      Writer run(&payload);
      for (const std::string& line : lines) {
        run.Varint(line.size());
        payload += line;
      }
      Seal(w, number, path, payload);
    }
  }
};

// "path": where the party is ("transaction.originator"), for sealing.
void WriteParty(Writer& w, const Party& p, std::string_view path, Sealing* s) {
  if (s == nullptr) {
    w.Bytes(1, p.account_id);
    w.Bytes(2, p.name);
  } else {
    s->Field(w, 1, path, "account_id", p.account_id);
    s->Field(w, 2, path, "name", p.name);
  }
  w.Bytes(3, p.bank_id);
  w.Bytes(4, p.country);
  if (s == nullptr) {
    for (const std::string& line : p.address) w.RepeatedBytes(5, line);
  } else {
    s->Address(w, 5, path, p.address);
  }
}

void WriteAgent(Writer& w, const Agent& a, size_t index, Sealing* s) {
  w.UInt(1, static_cast<uint64_t>(a.role));
  w.Bytes(2, a.bic);
  if (s == nullptr) {
    w.Bytes(3, a.account_id);
  } else {
    s->Field(w, 3, absl::StrCat("transaction.agents[", index, "]"), "account_id", a.account_id);
  }
  w.Bytes(4, a.name);
  w.Bytes(5, a.country);
}

void WriteMoney(Writer& w, const Money& m) {
  w.SInt(1, m.units());
  w.UInt(2, static_cast<uint64_t>(m.scale()));
  w.Bytes(3, m.currency().code());
}

void WriteTransaction(Writer& w, const Transaction& tx, Sealing* s) {
  using namespace tx_field;
  w.Bytes(kId, tx.id);
  w.SInt(kEventTime, ToUnixMicros(tx.event_time));
  w.Message(kOriginator, [&](Writer& m) { WriteParty(m, tx.originator, "transaction.originator", s); });
  w.Message(kBeneficiary,
            [&](Writer& m) { WriteParty(m, tx.beneficiary, "transaction.beneficiary", s); });
  w.Message(kAmount, [&](Writer& m) { WriteMoney(m, tx.amount); });
  if (tx.settled_amount.has_value()) {
    w.Message(kSettled, [&](Writer& m) { WriteMoney(m, *tx.settled_amount); }, true);
  }
  w.UInt(kFormat, static_cast<uint64_t>(tx.payment_format));
  w.Bytes(kChannel, tx.channel);
  if (s == nullptr) {
    w.Bytes(kRemittance, tx.remittance);
  } else {
    s->Field(w, kRemittance, "transaction", "remittance", tx.remittance);
  }
  w.UInt(kPriority, static_cast<uint64_t>(tx.priority));
  if (tx.label.has_value()) {
    w.Message(kLabel, [&](Writer& m) {
      m.Bool(1, tx.label->is_laundering);
      m.Bytes(2, tx.label->typology);
    }, true);
  }
  w.Bytes(kMessageType, tx.message_type);
  w.Bytes(kReference, tx.reference);
  w.Bytes(kUetr, tx.uetr);
  w.Bytes(kValueDate, tx.value_date);
  w.Bytes(kCharges, tx.charges);
  w.Bytes(kPurpose, tx.purpose);
  for (size_t i = 0; i < tx.agents.size(); ++i) {
    w.Message(kAgents, [&](Writer& m) { WriteAgent(m, tx.agents[i], i, s); }, true);
  }
  if (tx.ultimate_originator.has_value()) {
    w.Message(kUltimateOriginator, [&](Writer& m) {
      WriteParty(m, *tx.ultimate_originator, "transaction.ultimate_originator", s);
    }, true);
  }
  if (tx.ultimate_beneficiary.has_value()) {
    w.Message(kUltimateBeneficiary, [&](Writer& m) {
      WriteParty(m, *tx.ultimate_beneficiary, "transaction.ultimate_beneficiary", s);
    }, true);
  }
  w.Bytes(kAckReference, tx.ack_reference);
  w.Bytes(kAckTime, tx.ack_time);
}

void WriteDecision(Writer& w, const Decision& d) {
  using namespace decision_field;
  w.Bytes(kTransactionId, d.transaction_id);
  if (d.trace_id != Uuid{}) {
    w.Bytes(kTraceId, std::string_view(reinterpret_cast<const char*>(d.trace_id.bytes.data()),
                                       d.trace_id.bytes.size()));
  }
  w.Bytes(kTraceparent, d.traceparent);
  w.UInt(kAction, static_cast<uint64_t>(d.action));
  w.OptionalDouble(kScore, d.score);
  for (const Reason& r : d.reasons) {
    w.Message(kReasons, [&](Writer& m) {
      m.UInt(1, static_cast<uint64_t>(r.kind));
      m.Bytes(2, r.code);
      m.Bytes(3, r.text);
      m.Double(4, r.contribution);
      m.Bool(5, r.shadow);
    }, true);
  }
  w.Bytes(kSchema, d.feature_schema_version);
  w.Bytes(kPolicy, d.policy_version);
  w.Bytes(kModel, d.model_version);
  w.Bytes(kRole, d.model_role);
  w.Bytes(kShadowModel, d.shadow_model_version);
  w.OptionalDouble(kShadowScore, d.shadow_score);
  w.Bool(kDegraded, d.degraded);
  w.Bytes(kDegradedReason, d.degraded_reason);
  for (const StageTiming& t : d.timings) {
    w.Message(kTimings, [&](Writer& m) {
      m.Bytes(1, t.stage);
      m.UInt(2, static_cast<uint64_t>(std::max<int64_t>(0, t.elapsed.count())));
    }, true);
  }
  w.OptionalDouble(kScreeningScore, d.screening_score);
  for (const std::string& list : d.screening_lists) w.RepeatedBytes(kScreeningLists, list);
  w.Bytes(kBackend, d.model_backend);  // fields in number order: the encoding is canonical
  if (d.accounts_scored) {
    const auto standing = [](Writer& m, const AccountStanding& s) {
      m.OptionalDouble(1, s.score);
      m.UInt(2, s.rule_hits);
      m.Bool(3, s.alert);
      m.UInt(4, static_cast<uint64_t>(s.cause));
    };
    w.Message(kAccounts, [&](Writer& m) {
      m.Message(1, [&](Writer& o) { standing(o, d.originator_account); }, true);
      m.Message(2, [&](Writer& b) { standing(b, d.beneficiary_account); }, true);
    }, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

// Reads one message's fields in order, enforcing the canonical rules. Errors name the path of
// the field ("decision.reasons[1].kind") and its byte offset in the record.
class Reader {
 public:
  Reader(std::string_view bytes, size_t base, std::string path)
      : bytes_(bytes), base_(base), path_(std::move(path)) {}

  // Moves to the next field; false at the end of the message or on error (see ok()).
  bool Next() {
    if (!status_.ok() || pos_ >= bytes_.size()) return false;
    field_offset_ = pos_;
    uint64_t key = 0;
    if (!ReadVarint(&key)) return false;
    const uint64_t number = key >> 3;
    wire_ = static_cast<uint8_t>(key & 7);
    if (number == 0 || number > 0xffffffff) return Fail(absl::StrCat("bad field number ", number));
    number_ = static_cast<uint32_t>(number);
    if (number_ < last_ || (number_ == last_ && !repeated_ok_)) {
      return Fail(absl::StrCat("field ", number_, " out of order (after field ", last_, ")"));
    }
    last_ = number_;
    repeated_ok_ = false;
    if (wire_ == kSealed && (number_ >= 32 || (sealable_ >> number_ & 1) == 0)) {
      return Fail(absl::StrCat("field ", number_,
                               " is sealed (wire type 6), but only the transaction's personal "
                               "fields may be sealed"));
    }
    return true;
  }

  // Fields of this message that may be sealed (wire type 6): bit n for field n.
  void AllowSealed(uint32_t fields) { sealable_ = fields; }
  // The current field is sealed.
  bool sealed() const { return wire_ == kSealed; }

  uint32_t number() const { return number_; }
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  // The current field's value; each fails (and returns a zero value) on a wire type mismatch,
  // a non-canonical value, or truncation.
  uint64_t UInt(std::string_view name) {
    uint64_t v = 0;
    if (!Expect(name, kVarint) || !ReadVarint(&v)) return 0;
    if (v == 0) Fail(name, "zero value written (it must be left out)");
    return v;
  }
  // A non-negative count of microseconds.
  int64_t Micros(std::string_view name) {
    const uint64_t v = UInt(name);
    if (v > static_cast<uint64_t>(INT64_MAX)) Fail(name, "out of range");
    return static_cast<int64_t>(v);
  }
  int64_t SInt(std::string_view name) {
    const uint64_t z = UInt(name);
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  bool Bool(std::string_view name) {
    const uint64_t v = UInt(name);
    if (ok() && v != 1) Fail(name, absl::StrCat(v, " is not a boolean"));
    return v == 1;
  }
  // A value of an enumeration with "count" members (0 is left out, so 1 .. count-1).
  uint64_t Enum(std::string_view name, uint64_t count) {
    const uint64_t v = UInt(name);
    if (ok() && v >= count) Fail(name, absl::StrCat(v, " is out of range"));
    return v;
  }
  std::string_view Bytes(std::string_view name) {
    std::string_view v;
    if (!Expect(name, kBytes) || !ReadLength(&v)) return {};
    if (v.empty()) Fail(name, "empty value written (it must be left out)");
    return v;
  }
  std::string String(std::string_view name) { return std::string(Bytes(name)); }
  // An element of a repeated field (may be empty).
  std::string RepeatedString(std::string_view name) {
    std::string_view v;
    if (!Expect(name, kBytes) || !ReadLength(&v)) return {};
    return std::string(v);
  }
  Hash Hash32(std::string_view name) {
    Hash h{};
    const std::string_view v = Bytes(name);
    if (!ok()) return h;
    if (v.size() != h.size()) {
      Fail(name, absl::StrCat("a hash is 32 bytes, got ", v.size()));
      return h;
    }
    std::memcpy(h.data(), v.data(), h.size());
    return h;
  }
  double OptionalDouble(std::string_view name) {
    uint64_t bits = 0;
    if (!Expect(name, kFixed64) || !ReadFixed64(&bits)) return 0;
    const double d = std::bit_cast<double>(bits);
    if (std::isnan(d)) Fail(name, "NaN written (an absent value must be left out)");
    return d;
  }
  double Double(std::string_view name) {
    uint64_t bits = 0;
    if (!Expect(name, kFixed64) || !ReadFixed64(&bits)) return 0;
    if (bits == 0) Fail(name, "zero value written (it must be left out)");
    if (std::isnan(std::bit_cast<double>(bits)) && bits != kCanonicalNan) {
      Fail(name, "NaN other than the canonical quiet NaN");
    }
    return std::bit_cast<double>(bits);
  }
  std::vector<double> PackedDoubles(std::string_view name) {
    std::vector<double> out;
    const std::string_view v = Bytes(name);
    if (!ok()) return out;
    if (v.size() % 8 != 0) {
      Fail(name, absl::StrCat(v.size(), " bytes is not a whole number of doubles"));
      return out;
    }
    out.resize(v.size() / 8);
    for (size_t i = 0; i < out.size(); ++i) {
      uint64_t bits = 0;
      for (int b = 7; b >= 0; --b) bits = bits << 8 | static_cast<uint8_t>(v[8 * i + b]);
      const double d = std::bit_cast<double>(bits);
      if (std::isnan(d) && bits != kCanonicalNan) {
        Fail(absl::StrCat(ToAbsl(name), "[", i, "]"), "NaN other than the canonical quiet NaN");
        return out;
      }
      out[i] = d;
    }
    return out;
  }
  // A sealed field (wire type 6), appended to *out with its path. Its bytes must be a sealed
  // value of a known suite: suite byte, nonce, at least one byte of ciphertext, tag.
  void Sealed(std::string_view name, std::vector<SealedField>* out) {
    std::string_view v;
    if (!Expect(name, kSealed) || !ReadLength(&v)) return;
    const uint8_t suite = v.empty() ? 0 : static_cast<uint8_t>(v[0]);
    size_t min_size = 0;
    if (suite == static_cast<uint8_t>(crypto::CipherSuite::kAes256Gcm)) {
      min_size = 1 + crypto::kGcmNonceBytes + 1 + crypto::kGcmTagBytes;
    } else if (suite == static_cast<uint8_t>(crypto::CipherSuite::kSm4CtrHmacSm3)) {
      min_size = 1 + crypto::kSm4BlockBytes + 1 + crypto::kSm3Bytes;
    } else {
      Fail(name, absl::StrCat("sealed with unknown cipher suite ", int{suite}));
      return;
    }
    if (v.size() < min_size) {
      Fail(name, absl::StrCat("sealed value of ", v.size(), " bytes is shorter than its suite's ",
                              min_size));
      return;
    }
    out->push_back({Join(name), std::string(v)});
  }
  // A nested message: a reader over its bytes. "name" is the path element ("reasons[2]").
  // "may_be_empty": a present optional or a repeated element.
  Reader Message(std::string_view name, bool may_be_empty = false) {
    std::string_view v;
    if (Expect(name, kBytes) && ReadLength(&v) && v.empty() && !may_be_empty) {
      Fail(name, "empty message written (it must be left out)");
    }
    const size_t inner_base =
        v.data() == nullptr ? base_ : base_ + static_cast<size_t>(v.data() - bytes_.data());
    return Reader(v, inner_base, Join(name));
  }
  // Allows the field just read to appear again next (a repeated field).
  void AllowRepeat() { repeated_ok_ = true; }
  // Takes a nested reader's error.
  void Absorb(const Reader& inner) {
    if (status_.ok() && !inner.ok()) status_ = inner.status();
  }
  void Skip() {
    uint64_t ignored = 0;
    std::string_view ignored_view;
    switch (wire_) {
      case kVarint: ReadVarint(&ignored); break;
      case kFixed64: ReadFixed64(&ignored); break;
      case kBytes:
      case kSealed: ReadLength(&ignored_view); break;
      default: Fail(absl::StrCat("field ", number_, " has unknown wire type ", int{wire_}));
    }
  }
  void Unknown() {
    Fail(absl::StrCat("unknown field ", number_, " (not in record format version ",
                      int{kRecordFormatVersion}, ")"));
  }
  bool Fail(std::string_view name, std::string_view reason) {
    if (status_.ok()) {
      status_ = absl::DataLossError(absl::StrCat("audit record: ", Join(name), " at byte ",
                                                 base_ + field_offset_, ": ", ToAbsl(reason)));
    }
    return false;
  }
  bool Fail(std::string_view reason) {
    if (status_.ok()) {
      status_ = absl::DataLossError(absl::StrCat("audit record: ", path_.empty() ? "" : path_,
                                                 path_.empty() ? "" : " ", "at byte ",
                                                 base_ + field_offset_, ": ", ToAbsl(reason)));
    }
    return false;
  }
  // The path of field "name" of this message ("transaction.originator.name").
  std::string Path(std::string_view name) const { return Join(name); }

 private:
  std::string Join(std::string_view name) const {
    return path_.empty() ? std::string(name) : absl::StrCat(path_, ".", ToAbsl(name));
  }
  bool Expect(std::string_view name, Wire wire) {
    if (!ok()) return false;
    if (wire_ == kSealed && wire != kSealed) {
      return Fail(name, "sealed (wire type 6): a reader that opens it is needed");
    }
    if (wire_ != wire) {
      return Fail(name, absl::StrCat("wire type ", int{wire_}, ", expected ", int{wire}));
    }
    return true;
  }
  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return Fail("truncated varint");
      const uint8_t b = static_cast<uint8_t>(bytes_[pos_++]);
      if (shift == 63 && b > 1) return Fail("varint overflows 64 bits");
      result |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return Fail("varint not in its shortest form");
        *v = result;
        return true;
      }
    }
    return Fail("varint longer than 10 bytes");
  }
  bool ReadFixed64(uint64_t* v) {
    if (bytes_.size() - pos_ < 8) return Fail("truncated double");
    uint64_t bits = 0;
    for (int b = 7; b >= 0; --b) bits = bits << 8 | static_cast<uint8_t>(bytes_[pos_ + b]);
    pos_ += 8;
    *v = bits;
    return true;
  }
  bool ReadLength(std::string_view* v) {
    uint64_t length = 0;
    if (!ReadVarint(&length)) return false;
    if (length > bytes_.size() - pos_) {
      return Fail(absl::StrCat("length ", length, " runs past the end (", bytes_.size() - pos_,
                               " bytes left)"));
    }
    *v = bytes_.substr(pos_, length);
    pos_ += length;
    return true;
  }

  std::string_view bytes_;
  size_t base_;  // offset of bytes_ in the record, for messages
  std::string path_;
  size_t pos_ = 0;
  size_t field_offset_ = 0;
  uint32_t number_ = 0;
  uint8_t wire_ = 0;
  uint32_t last_ = 0;
  bool repeated_ok_ = false;
  uint32_t sealable_ = 0;
  absl::Status status_;
};

// What decoding a transaction collects about its personal fields.
struct PersonalFields {
  std::vector<SealedField>* sealed = nullptr;  // the sealed ones, in order
  std::string first_clear;                     // the first one written in the clear
  void Clear(const Reader& r, std::string_view name) {
    if (first_clear.empty()) first_clear = r.Path(name);
  }
};

constexpr uint32_t Bit(uint32_t n) { return uint32_t{1} << n; }

// A personal string field: sealed (listed in "personal") or in the clear.
void ReadPersonal(Reader& r, std::string_view name, std::string& value, PersonalFields& personal) {
  if (r.sealed()) {
    r.Sealed(name, personal.sealed);
  } else {
    value = r.String(name);
    personal.Clear(r, name);
  }
}

void ReadParty(Reader& r, Party& p, PersonalFields& personal) {
  r.AllowSealed(Bit(1) | Bit(2) | Bit(5));
  while (r.Next()) {
    switch (r.number()) {
      case 1: ReadPersonal(r, "account_id", p.account_id, personal); break;
      case 2: ReadPersonal(r, "name", p.name, personal); break;
      case 3: p.bank_id = r.String("bank_id"); break;
      case 4: p.country = r.String("country"); break;
      case 5:
        if (r.sealed()) {
          // All the lines as one field: no line in the clear before it, none after it.
          if (!p.address.empty()) r.Fail("address", "sealed after lines in the clear");
          r.Sealed("address", personal.sealed);
          break;
        }
        personal.Clear(r, "address");
        p.address.push_back(r.RepeatedString(absl::StrCat("address[", p.address.size(), "]")));
        r.AllowRepeat();
        break;
      default: r.Unknown();
    }
  }
}

void ReadAgent(Reader& r, Agent& a, PersonalFields& personal) {
  r.AllowSealed(Bit(3));
  while (r.Next()) {
    switch (r.number()) {
      case 1: a.role = static_cast<AgentRole>(r.Enum("role", kNumAgentRoles)); break;
      case 2: a.bic = r.String("bic"); break;
      case 3: ReadPersonal(r, "account_id", a.account_id, personal); break;
      case 4: a.name = r.String("name"); break;
      case 5: a.country = r.String("country"); break;
      default: r.Unknown();
    }
  }
}

void ReadMoney(Reader& r, Money& m) {
  int64_t units = 0;
  uint64_t scale = 0;
  Currency currency;
  while (r.Next()) {
    switch (r.number()) {
      case 1: units = r.SInt("units"); break;
      case 2:
        scale = r.UInt("scale");
        if (scale > static_cast<uint64_t>(Money::kMaxScale)) r.Fail("scale", "out of range");
        break;
      case 3: {
        const std::string code = r.String("currency");
        if (!r.ok()) break;
        absl::StatusOr<Currency> c = Currency::FromCode(code);
        if (!c.ok()) {
          r.Fail("currency", absl::StrCat("\"", code, "\" is not a known currency"));
        } else {
          currency = *c;
        }
        break;
      }
      default: r.Unknown();
    }
  }
  if (r.ok() && currency.empty()) r.Fail("currency", "missing");
  if (r.ok()) m = Money(units, static_cast<int>(scale), currency);
}

void ReadTransaction(Reader& r, Transaction& tx, PersonalFields& personal) {
  using namespace tx_field;
  r.AllowSealed(Bit(kRemittance));
  // An absent priority is the zero value, P0 (left out when written), not Transaction's default.
  tx.priority = Priority::kP0;
  while (r.Next()) {
    switch (r.number()) {
      case kId: tx.id = r.String("id"); break;
      case kEventTime: tx.event_time = FromUnixMicros(r.SInt("event_time")); break;
      case kOriginator: {
        Reader m = r.Message("originator");
        ReadParty(m, tx.originator, personal);
        r.Absorb(m);
        break;
      }
      case kBeneficiary: {
        Reader m = r.Message("beneficiary");
        ReadParty(m, tx.beneficiary, personal);
        r.Absorb(m);
        break;
      }
      case kAmount: {
        Reader m = r.Message("amount");
        ReadMoney(m, tx.amount);
        r.Absorb(m);
        break;
      }
      case kSettled: {
        Reader m = r.Message("settled_amount", true);
        tx.settled_amount.emplace();
        ReadMoney(m, *tx.settled_amount);
        r.Absorb(m);
        break;
      }
      case kFormat:
        tx.payment_format =
            static_cast<PaymentFormat>(r.Enum("payment_format", kNumPaymentFormats));
        break;
      case kChannel: tx.channel = r.String("channel"); break;
      case kRemittance: ReadPersonal(r, "remittance", tx.remittance, personal); break;
      case kPriority: tx.priority = static_cast<Priority>(r.Enum("priority", 3)); break;
      case kLabel: {
        Reader m = r.Message("label", true);
        tx.label.emplace();
        while (m.Next()) {
          switch (m.number()) {
            case 1: tx.label->is_laundering = m.Bool("is_laundering"); break;
            case 2: tx.label->typology = m.String("typology"); break;
            default: m.Unknown();
          }
        }
        r.Absorb(m);
        break;
      }
      case kMessageType: tx.message_type = r.String("message_type"); break;
      case kReference: tx.reference = r.String("reference"); break;
      case kUetr: tx.uetr = r.String("uetr"); break;
      case kValueDate: tx.value_date = r.String("value_date"); break;
      case kCharges: tx.charges = r.String("charges"); break;
      case kPurpose: tx.purpose = r.String("purpose"); break;
      case kAgents: {
        Reader m = r.Message(absl::StrCat("agents[", tx.agents.size(), "]"), true);
        ReadAgent(m, tx.agents.emplace_back(), personal);
        r.Absorb(m);
        r.AllowRepeat();
        break;
      }
      case kUltimateOriginator: {
        Reader m = r.Message("ultimate_originator", true);
        ReadParty(m, tx.ultimate_originator.emplace(), personal);
        r.Absorb(m);
        break;
      }
      case kUltimateBeneficiary: {
        Reader m = r.Message("ultimate_beneficiary", true);
        ReadParty(m, tx.ultimate_beneficiary.emplace(), personal);
        r.Absorb(m);
        break;
      }
      case kAckReference: tx.ack_reference = r.String("ack_reference"); break;
      case kAckTime: tx.ack_time = r.String("ack_time"); break;
      default: r.Unknown();
    }
  }
}

void ReadDecision(Reader& r, Decision& d) {
  using namespace decision_field;
  while (r.Next()) {
    switch (r.number()) {
      case kTransactionId: d.transaction_id = r.String("transaction_id"); break;
      case kTraceId: {
        const std::string_view v = r.Bytes("trace_id");
        if (r.ok() && v.size() != d.trace_id.bytes.size()) {
          r.Fail("trace_id", absl::StrCat("a trace id is 16 bytes, got ", v.size()));
        } else if (r.ok()) {
          std::memcpy(d.trace_id.bytes.data(), v.data(), v.size());
        }
        break;
      }
      case kTraceparent: d.traceparent = r.String("traceparent"); break;
      case kAction: d.action = static_cast<Action>(r.Enum("action", 3)); break;
      case kScore: d.score = r.OptionalDouble("score"); break;
      case kReasons: {
        Reader m = r.Message(absl::StrCat("reasons[", d.reasons.size(), "]"), true);
        Reason& reason = d.reasons.emplace_back();
        while (m.Next()) {
          switch (m.number()) {
            case 1: reason.kind = static_cast<Reason::Kind>(m.Enum("kind", 3)); break;
            case 2: reason.code = m.String("code"); break;
            case 3: reason.text = m.String("text"); break;
            case 4: reason.contribution = m.Double("contribution"); break;
            case 5: reason.shadow = m.Bool("shadow"); break;
            default: m.Unknown();
          }
        }
        r.Absorb(m);
        r.AllowRepeat();
        break;
      }
      case kSchema: d.feature_schema_version = r.String("feature_schema_version"); break;
      case kPolicy: d.policy_version = r.String("policy_version"); break;
      case kModel: d.model_version = r.String("model_version"); break;
      case kRole: d.model_role = r.String("model_role"); break;
      case kBackend: d.model_backend = r.String("model_backend"); break;
      case kShadowModel: d.shadow_model_version = r.String("shadow_model_version"); break;
      case kShadowScore: d.shadow_score = r.OptionalDouble("shadow_score"); break;
      case kDegraded: d.degraded = r.Bool("degraded"); break;
      case kDegradedReason: d.degraded_reason = r.String("degraded_reason"); break;
      case kTimings: {
        Reader m = r.Message(absl::StrCat("timings[", d.timings.size(), "]"), true);
        StageTiming& t = d.timings.emplace_back();
        while (m.Next()) {
          switch (m.number()) {
            case 1: t.stage = m.String("stage"); break;
            case 2: t.elapsed = std::chrono::microseconds(m.Micros("elapsed_us")); break;
            default: m.Unknown();
          }
        }
        r.Absorb(m);
        r.AllowRepeat();
        break;
      }
      case kScreeningScore: d.screening_score = r.OptionalDouble("screening_score"); break;
      case kAccounts: {
        Reader m = r.Message("accounts");
        bool seen[2] = {false, false};
        while (m.Next()) {
          const uint32_t party = m.number();
          if (party != 1 && party != 2) {
            m.Unknown();
            continue;
          }
          seen[party - 1] = true;
          AccountStanding& s = party == 1 ? d.originator_account : d.beneficiary_account;
          Reader p = m.Message(party == 1 ? "originator" : "beneficiary", true);
          while (p.Next()) {
            switch (p.number()) {
              case 1: s.score = p.OptionalDouble("score"); break;
              case 2: {
                const uint64_t hits = p.UInt("rule_hits");
                if (hits > UINT32_MAX) p.Fail("rule_hits", "out of range");
                s.rule_hits = static_cast<uint32_t>(hits);
                break;
              }
              case 3: s.alert = p.Bool("alert"); break;
              case 4: s.cause = static_cast<AccountAlertCause>(p.Enum("alert_cause", 3)); break;
              default: p.Unknown();
            }
          }
          if (p.ok() && s.alert != (s.cause != AccountAlertCause::kNone)) {
            p.Fail("alert_cause", "present exactly when alert is");
          }
          m.Absorb(p);
        }
        if (m.ok() && !(seen[0] && seen[1])) {
          m.Fail("accounts", "both originator and beneficiary are present");
        }
        r.Absorb(m);
        d.accounts_scored = true;
        break;
      }
      case kScreeningLists:
        d.screening_lists.push_back(
            r.RepeatedString(absl::StrCat("screening_lists[", d.screening_lists.size(), "]")));
        r.AllowRepeat();
        break;
      default: r.Unknown();
    }
  }
}

// 16 lower-case hex digits (crypto::WrappedDataKey::id).
bool IsDataKeyId(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::Status CheckHeader(std::string_view bytes) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("audit record: at byte 0: not an audit record (no \"VAR\" magic)");
  }
  if (static_cast<uint8_t>(bytes[3]) != kRecordFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("audit record: at byte 3: record format version ",
                     static_cast<uint8_t>(bytes[3]), " (this build reads version ",
                     int{kRecordFormatVersion}, ")"));
  }
  return absl::OkStatus();
}

// The body of "f"; its personal fields sealed by f.sealer, or, as "presealed" says, written as
// those sealed bytes under "data_key_id" (a decoded record).
absl::StatusOr<std::string> EncodeBody(const RecordBodyFields& f,
                                       absl::Span<const SealedField> presealed,
                                       std::string_view data_key_id) {
  using namespace record_field;
  std::string out;
  out.reserve(1024);
  Writer w(&out);
  w.UInt(kReceived, static_cast<uint64_t>(std::max<int64_t>(0, ToUnixMicros(f.received))));
  w.UInt(kDecided, static_cast<uint64_t>(std::max<int64_t>(0, ToUnixMicros(f.decided))));
  w.Bytes(kActor, f.actor);
  w.Bytes(kSource, f.source);
  w.Bytes(kInputFormat, f.input_format);
  w.Hash32(kInputSha256, *f.input_sha256);
  std::optional<Sealing> sealing;
  if (f.sealer != nullptr || !presealed.empty()) {
    sealing.emplace();
    sealing->sealer = f.sealer;
    sealing->presealed = presealed;
    sealing->transaction_id = f.transaction->id;
  }
  Sealing* s = sealing.has_value() ? &*sealing : nullptr;
  w.Message(kTransaction, [&](Writer& m) { WriteTransaction(m, *f.transaction, s); });
  if (s != nullptr && !s->status.ok()) return s->status;
  w.PackedDoubles(kFeatures, f.features);
  w.Message(kDecision, [&](Writer& m) { WriteDecision(m, *f.decision); });
  if (s != nullptr && s->any) {
    w.Bytes(kDataKeyId, f.sealer != nullptr ? std::string_view(f.sealer->data_key_id())
                                            : data_key_id);
    if (f.sealer != nullptr) f.sealer->CountRecord();
  }
  if (f.payment_fingerprint != nullptr && *f.payment_fingerprint != Hash{}) {
    w.Hash32(kPaymentFingerprint, *f.payment_fingerprint);
  }
  w.Bytes(kEvent, f.event);
  return out;
}

}  // namespace

RecordBodyFields RecordBodyFields::Of(const AuditRecord& record) {
  return RecordBodyFields{.received = record.received,
                          .decided = record.decided,
                          .actor = record.actor,
                          .source = record.source,
                          .input_format = record.input_format,
                          .input_sha256 = &record.input_sha256,
                          .transaction = &record.transaction,
                          .features = record.features,
                          .decision = &record.decision,
                          .payment_fingerprint = &record.payment_fingerprint,
                          .event = record.event};
}

absl::StatusOr<std::string> EncodeRecordBody(const RecordBodyFields& fields) {
  return EncodeBody(fields, {}, {});
}

absl::StatusOr<std::string> EncodeEventRecordBody(std::string_view source,
                                                  std::string_view event_json, UtcTime at,
                                                  std::string_view actor) {
  if (event_json.empty()) return absl::InvalidArgumentError("audit event: the event is empty");
  static const Transaction* const kNoTransaction = new Transaction();
  static const Decision* const kNoDecision = new Decision();
  const Hash input_sha256 = Digest(HashAlgorithm::kSha256, event_json);
  return EncodeRecordBody(RecordBodyFields{.received = at,
                                           .decided = at,
                                           .actor = actor,
                                           .source = source,
                                           .input_format = "json",
                                           .input_sha256 = &input_sha256,
                                           .transaction = kNoTransaction,
                                           .decision = kNoDecision,
                                           .event = event_json});
}

std::string EncodeRecordBody(const AuditRecord& record) {
  // Nothing is sealed here (no sealer): only the record's sealed bytes are copied.
  absl::StatusOr<std::string> body =
      EncodeBody(RecordBodyFields::Of(record), record.sealed, record.data_key_id);
  VIGIL_CHECK(body.ok());
  return *std::move(body);
}

void AppendAssembledRecord(uint64_t sequence, const Hash& previous, std::string_view body,
                           std::string* out) {
  out->append(kMagic, sizeof(kMagic));
  out->push_back(static_cast<char>(kRecordFormatVersion));
  Writer w(out);
  w.UInt(record_field::kSequence, sequence);
  if (sequence > 0) w.Hash32(record_field::kPrevious, previous);
  out->append(body);
}

std::string EncodeRecord(const AuditRecord& record) {
  std::string out;
  AppendAssembledRecord(record.sequence, record.previous_leaf_hash, EncodeRecordBody(record),
                        &out);
  return out;
}

absl::StatusOr<AuditRecord> DecodeRecord(std::string_view bytes) {
  using namespace record_field;
  if (absl::Status s = CheckHeader(bytes); !s.ok()) return s;
  AuditRecord record;
  Reader r(bytes.substr(kHeaderSize), kHeaderSize, "");
  bool has_previous = false, has_input_hash = false;
  PersonalFields personal;
  personal.sealed = &record.sealed;
  while (r.Next()) {
    switch (r.number()) {
      case kSequence: record.sequence = r.UInt("sequence"); break;
      case kPrevious:
        record.previous_leaf_hash = r.Hash32("previous_leaf_hash");
        has_previous = true;
        break;
      case kReceived: record.received = FromUnixMicros(r.Micros("received")); break;
      case kDecided: record.decided = FromUnixMicros(r.Micros("decided")); break;
      case kActor: record.actor = r.String("actor"); break;
      case kSource: record.source = r.String("source"); break;
      case kInputFormat: record.input_format = r.String("input_format"); break;
      case kInputSha256:
        record.input_sha256 = r.Hash32("input_sha256");
        has_input_hash = true;
        break;
      case kTransaction: {
        Reader m = r.Message("transaction");
        ReadTransaction(m, record.transaction, personal);
        r.Absorb(m);
        break;
      }
      case kFeatures: record.features = r.PackedDoubles("features"); break;
      case kDecision: {
        Reader m = r.Message("decision");
        ReadDecision(m, record.decision);
        r.Absorb(m);
        break;
      }
      case kDataKeyId: {
        record.data_key_id = r.String("data_key_id");
        if (r.ok() && !IsDataKeyId(record.data_key_id)) {
          r.Fail("data_key_id", "not a data key id (16 lower-case hex digits)");
        }
        break;
      }
      case kPaymentFingerprint:
        record.payment_fingerprint = r.Hash32("payment_fingerprint");
        if (r.ok() && record.payment_fingerprint == Hash{}) {
          r.Fail("payment_fingerprint", "all zero (an absent fingerprint is left out)");
        }
        break;
      case kEvent: record.event = r.String("event"); break;
      default: r.Unknown();
    }
  }
  if (!r.ok()) return r.status();
  if (has_previous != (record.sequence > 0)) {
    return absl::DataLossError(absl::StrCat(
        "audit record: previous_leaf_hash ", has_previous ? "present" : "missing",
        " in the record at sequence ", record.sequence,
        " (present iff the sequence is not 0)"));
  }
  if (record.sealed.empty() != record.data_key_id.empty()) {
    return absl::DataLossError(absl::StrCat(
        "audit record: data_key_id ", record.sealed.empty() ? "present" : "missing",
        " in a record ", record.sealed.empty() ? "without" : "with",
        " sealed fields (present iff the record has sealed fields)"));
  }
  if (!record.sealed.empty() && !personal.first_clear.empty()) {
    return absl::DataLossError(absl::StrCat(
        "audit record: ", personal.first_clear,
        " is in the clear in a record whose personal fields are sealed (",
        record.sealed.front().path, ")"));
  }
  if (!has_input_hash) return absl::DataLossError("audit record: input_sha256 missing");
  if (!record.event.empty()) {
    // An event decides nothing: it names no transaction and holds no row.
    if (!record.transaction.id.empty() || !record.features.empty()) {
      return absl::DataLossError(absl::StrCat(
          "audit record: an event (field 14) with a ",
          !record.transaction.id.empty() ? "transaction" : "feature row",
          " at sequence ", record.sequence, " (an event record holds neither)"));
    }
    return record;
  }
  if (record.transaction.id.empty()) {
    return absl::DataLossError("audit record: transaction.id missing");
  }
  return record;
}

absl::StatusOr<RecordLink> DecodeRecordLink(std::string_view bytes) {
  using namespace record_field;
  if (absl::Status s = CheckHeader(bytes); !s.ok()) return s;
  RecordLink link;
  Reader r(bytes.substr(kHeaderSize), kHeaderSize, "");
  bool has_previous = false;
  while (r.Next()) {
    switch (r.number()) {
      case kSequence: link.sequence = r.UInt("sequence"); break;
      case kPrevious:
        link.previous_leaf_hash = r.Hash32("previous_leaf_hash");
        has_previous = true;
        break;
      case kTransaction: {
        Reader m = r.Message("transaction");
        m.AllowSealed(Bit(tx_field::kRemittance));
        while (m.Next()) {
          if (m.number() == tx_field::kId) {
            link.transaction_id = m.String("id");
            break;
          }
          m.Skip();
        }
        r.Absorb(m);
        break;
      }
      default: r.Skip();
    }
  }
  if (!r.ok()) return r.status();
  if (has_previous != (link.sequence > 0)) {
    return absl::DataLossError(absl::StrCat(
        "audit record: previous_leaf_hash ", has_previous ? "present" : "missing",
        " in the record at sequence ", link.sequence, " (present iff the sequence is not 0)"));
  }
  return link;
}

absl::StatusOr<std::vector<std::string>> SealedFieldValues(std::string_view path,
                                                           std::string_view payload) {
  if (!IsSealablePath(path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("audit record: ", ToAbsl(path), " is not a field that records seal"));
  }
  const auto bad = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("audit record: sealed field ", ToAbsl(path), ": ", ToAbsl(why)));
  };
  if (payload.empty()) return bad("empty value sealed");
  if (!absl::EndsWith(ToAbsl(path), ".address")) {
    return std::vector<std::string>{std::string(payload)};
  }
  // The address's lines, each as varint length ‖ bytes, like the field's payload in the clear.
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < payload.size()) {
    uint64_t length = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (pos >= payload.size() || shift > 63) return bad("truncated line length");
      const uint8_t b = static_cast<uint8_t>(payload[pos++]);
      if (shift > 0 && b == 0) return bad("line length not in its shortest form");
      length |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    if (length > payload.size() - pos) return bad("a line runs past the end");
    lines.emplace_back(payload.substr(pos, length));
    pos += length;
  }
  return lines;
}

namespace {

// Puts "values" (SealedFieldValues' form) in the place "path" names; "path" is sealable.
absl::Status PlaceSealedValues(std::string_view path, std::vector<std::string> values_in,
                               Transaction& tx) {
  std::vector<std::string>* values = &values_in;
  const auto missing = [&] {
    return absl::DataLossError(absl::StrCat("audit record: sealed field ", ToAbsl(path),
                                            ": the transaction has no such place"));
  };
  absl::string_view rest = ToAbsl(path.substr(std::string_view("transaction.").size()));
  if (rest == "remittance") {
    tx.remittance = std::move((*values)[0]);
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "agents[")) {
    const size_t close = rest.find(']');
    size_t index = 0;
    if (!absl::SimpleAtoi(rest.substr(0, close), &index) || index >= tx.agents.size()) {
      return missing();
    }
    tx.agents[index].account_id = std::move((*values)[0]);
    return absl::OkStatus();
  }
  const size_t dot = rest.find('.');
  const absl::string_view party_name = rest.substr(0, dot), field = rest.substr(dot + 1);
  Party* party = nullptr;
  if (party_name == "originator") party = &tx.originator;
  if (party_name == "beneficiary") party = &tx.beneficiary;
  if (party_name == "ultimate_originator" && tx.ultimate_originator.has_value()) {
    party = &*tx.ultimate_originator;
  }
  if (party_name == "ultimate_beneficiary" && tx.ultimate_beneficiary.has_value()) {
    party = &*tx.ultimate_beneficiary;
  }
  if (party == nullptr) return missing();
  if (field == "address") {
    party->address = *std::move(values);
  } else if (field == "name") {
    party->name = std::move((*values)[0]);
  } else {
    party->account_id = std::move((*values)[0]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SetSealedField(std::string_view path, std::string_view payload, Transaction& tx) {
  absl::StatusOr<std::vector<std::string>> values = SealedFieldValues(path, payload);
  if (!values.ok()) return values.status();
  return PlaceSealedValues(path, *std::move(values), tx);
}

absl::Status MarkSealedField(std::string_view path, std::string_view stand_in, Transaction& tx) {
  if (!IsSealablePath(path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("audit record: ", ToAbsl(path), " is not a field that records seal"));
  }
  return PlaceSealedValues(path, {std::string(stand_in)}, tx);
}

}  // namespace vigil::audit
