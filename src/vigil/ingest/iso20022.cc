#include "vigil/ingest/iso20022.h"

#include <chrono>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/ingest/internal/xml_document.h"
#include "vigil/ingest/party_key.h"
#include "vigil/ingest/swift_syntax.h"

namespace vigil {
namespace {

using ingest_internal::ElementText;
using ingest_internal::ErrorAt;
using ingest_internal::MissingChild;
using ingest_internal::NamespacedReader;
using ingest_internal::NamespaceScope;
using ingest_internal::ParseXmlDocument;
using ingest_internal::QName;
using ingest_internal::SplitName;
using ingest_internal::XPath;

constexpr std::string_view kIsoNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:";
constexpr std::string_view kAppHdrNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:head.001.";
constexpr std::string_view kNotProvided = "NOTPROVIDED";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }

// Equality with a literal as a length check and a memcmp of constant size, which the compiler
// inlines: the readers compare every child's local name with a dozen literals.
template <size_t N>
bool Is(std::string_view s, const char (&literal)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), literal, N - 1) == 0;
}

// ---------------------------------------------------------------------------------------------
// Values.

absl::Status CheckCountry(pugi::xml_node element, std::string_view country) {
  if (country.size() != 2 || !IsUpper(country[0]) || !IsUpper(country[1])) {
    return ErrorAt(element, absl::StrCat("country \"", ToAbsl(country),
                                         "\" is not an ISO 3166 code (two upper-case letters)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> ReadBic(pugi::xml_node element) {
  const std::string_view bic = ElementText(element);
  if (absl::Status s = CheckBic(bic); !s.ok()) return ErrorAt(element, ToStd(s.message()));
  return bic;
}

std::string_view BicCountry(std::string_view bic) {
  return bic.size() >= 6 ? bic.substr(4, 2) : std::string_view();
}

// An ActiveCurrencyAndAmount / ActiveOrHistoricCurrencyAndAmount: "1234.56" with Ccy="EUR".
absl::StatusOr<Money> ReadAmount(pugi::xml_node element) {
  const std::string_view code = element.attribute("Ccy").value();
  if (code.empty()) return ErrorAt(element, "has no Ccy attribute");
  const absl::StatusOr<Currency> currency = Currency::FromCode(ToAbsl(code));
  if (!currency.ok() || !currency->is_iso()) {
    return ErrorAt(element,
                   absl::StrCat("currency \"", ToAbsl(code), "\" is not an ISO 4217 code"));
  }
  absl::StatusOr<Money> money = Money::Parse(ToAbsl(ElementText(element)), *currency);
  if (!money.ok()) return ErrorAt(element, ToStd(money.status().message()));
  if (money->is_negative()) {
    return ErrorAt(element, absl::StrCat("amount ", money->ToDecimalString(), " is negative"));
  }
  if (absl::Status s = money->CheckIsoExponent(); !s.ok()) {
    return ErrorAt(element, ToStd(s.message()));
  }
  return money;
}

// MsgId, InstrId, EndToEndId, TxId (Max35Text): they make the transaction's id, so a line break
// or another control character in one is refused, as is a text over 35 characters.
absl::StatusOr<std::string_view> ReadIdentifier(pugi::xml_node element) {
  const std::string_view id = ElementText(element);
  size_t characters = 0;
  for (const char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return ErrorAt(element, "contains a control character");
    characters += (byte & 0xC0) != 0x80;  // UTF-8 continuation bytes are not characters
  }
  if (characters > 35) {
    return ErrorAt(element, absl::StrCat("is ", characters, " characters, more than 35"));
  }
  return id;
}

absl::StatusOr<std::string_view> ReadDate(pugi::xml_node element) {
  const std::string_view date = ElementText(element);
  if (absl::Status s = CheckIsoDate(date); !s.ok()) return ErrorAt(element, ToStd(s.message()));
  return date;
}

// PmtId/UETR: a UUID, 8-4-4-4-12 hexadecimal digits of either case, returned in lower case.
// The schema's UUIDv4Identifier asks for version 4, but the version and variant digits are not
// checked: NormalizeUetr accepts exactly what the MT reader accepts in field 121, so that the
// same payment is read in both formats.
absl::StatusOr<std::string> ReadUetr(pugi::xml_node element) {
  absl::StatusOr<std::string> uetr = NormalizeUetr(ElementText(element));
  if (!uetr.ok()) return ErrorAt(element, ToStd(uetr.status().message()));
  return uetr;
}

// An ISODateTime: "2022-10-20T09:35:00+02:00", "2021-05-11T10:13:41.960Z", "2018-04-30T16:35:54"
// (no offset: read as UTC). Digits of the fraction beyond microseconds are dropped. nullopt when
// it is none of these, or falls outside the years 0000 to 9999 in UTC.
std::optional<UtcTime> ParseIsoDateTime(std::string_view text) {
  // Room for the date and time (19), a fraction of 6 digits and an offset of 6 characters.
  char buffer[19 + 7 + 6];
  if (text.size() < 19) return std::nullopt;
  std::memcpy(buffer, text.data(), 19);
  size_t length = 19;
  size_t i = 19;
  if (i < text.size() && text[i] == '.') {
    buffer[length++] = '.';
    for (++i; i < text.size() && IsDigit(text[i]); ++i) {
      if (length < 19 + 7) buffer[length++] = text[i];
    }
  }
  const std::string_view offset = text.substr(i);
  if (offset.size() > 6) return std::nullopt;
  if (offset.empty()) {
    buffer[length++] = 'Z';
  } else {
    std::memcpy(buffer + length, offset.data(), offset.size());
    length += offset.size();
  }
  const absl::StatusOr<UtcTime> t = ParseRfc3339(absl::string_view(buffer, length));
  if (!t.ok()) return std::nullopt;
  // An offset can carry a time at the edge of the calendar out of the years 0000-9999, which
  // RFC 3339 (and so vigil's JSON) cannot write.
  using std::chrono::year;
  constexpr std::chrono::sys_days kFirst{year(0) / 1 / 1};
  constexpr std::chrono::sys_days kEnd{year(10000) / 1 / 1};
  if (*t < kFirst || *t >= kEnd) return std::nullopt;
  return *t;
}

absl::StatusOr<std::string_view> ReadCharges(pugi::xml_node element) {
  const std::string_view code = ElementText(element);
  if (code == "DEBT") return std::string_view("OUR");
  if (code == "CRED") return std::string_view("BEN");
  if (code == "SHAR" || code == "SLEV") return std::string_view("SHA");
  return ErrorAt(element, absl::StrCat("charge bearer \"", ToAbsl(code),
                                       "\" is not DEBT, CRED, SHAR or SLEV"));
}

// ---------------------------------------------------------------------------------------------
// What a message says about one party, agent or account, as views into the parsed document.

// A party (PartyIdentification: Nm, PstlAdr, Id/OrgId, CtryOfRes) or a financial institution
// (BranchAndFinancialInstitutionIdentification: FinInstnId/BICFI, ClrSysMmbId, LEI, Nm,
// PstlAdr): the reader takes either shape wherever it reads one.
struct Entity {
  pugi::xml_node node;       // the element (<Dbtr>, <CdtrAgt>, ...); null when absent
  bool institution = false;  // has FinInstnId
  std::string_view name;
  std::string_view bic;  // BICFI or AnyBIC, checked
  std::string_view lei;
  std::string_view member_id;        // ClrSysMmbId/MmbId
  std::string_view country;          // PstlAdr/Ctry, checked
  std::string_view residence;        // CtryOfRes, checked
  std::vector<std::string> address;  // PstlAdr as lines, when asked for
};

// RmtInf/Ustrd texts.
using Texts = absl::InlinedVector<std::string_view, 4>;

struct Account {
  pugi::xml_node node;
  std::string_view iban;   // Id/IBAN, checked
  std::string_view other;  // Id/Othr/Id
  std::string_view id() const { return iban.empty() ? other : iban; }
};

// The optional PstlAdr elements that form one line, in line order (iso20022.h).
constexpr std::string_view kAddressLines[][4] = {
    {"CareOf"},
    {"Dept"},
    {"SubDept"},
    {"StrtNm", "BldgNb"},
    {"BldgNm", "Flr", "Room", "UnitNb"},
    {"PstBx"},
    {"PstCd", "TwnNm"},
    {"TwnLctnNm"},
    {"DstrctNm"},
    {"CtrySubDvsn"},
};
constexpr size_t kNumAddressLines = sizeof(kAddressLines) / sizeof(kAddressLines[0]);

class MessageReader {
 public:
  NamespacedReader& xml() { return xml_; }

  template <typename F>
  absl::Status ForEachChild(pugi::xml_node parent, F&& f) {
    return xml_.ForEachChild(parent, std::forward<F>(f));
  }

  absl::Status ReadPostalAddress(pugi::xml_node element, Entity& e, bool with_lines) {
    std::string_view parts[kNumAddressLines][4] = {};
    absl::InlinedVector<std::string_view, 7> free_lines;  // AdrLine: at most 7
    VIGIL_RETURN_IF_ERROR(ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "Ctry")) {
        e.country = ElementText(c);
        return CheckCountry(c, e.country);
      }
      if (!with_lines) return absl::OkStatus();
      if (Is(local, "AdrLine")) {
        free_lines.push_back(ElementText(c));
        return absl::OkStatus();
      }
      for (size_t line = 0; line < kNumAddressLines; ++line) {
        for (size_t part = 0; part < 4; ++part) {
          if (!local.empty() && kAddressLines[line][part] == local) {
            parts[line][part] = ElementText(c);
          }
        }
      }
      return absl::OkStatus();
    }));
    if (!with_lines) return absl::OkStatus();
    for (size_t line = 0; line < kNumAddressLines; ++line) {
      std::string text;
      for (std::string_view part : parts[line]) {
        if (part.empty()) continue;
        if (!text.empty()) text += ' ';
        text += part;
      }
      if (!text.empty()) e.address.push_back(std::move(text));
    }
    for (std::string_view line : free_lines) {
      if (!line.empty()) e.address.emplace_back(line);
    }
    return absl::OkStatus();
  }

  absl::Status ReadFinInstnId(pugi::xml_node element, Entity& e, bool with_address) {
    e.institution = true;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
      if (Is(local, "BICFI")) {
        VIGIL_ASSIGN_OR_RETURN(e.bic, ReadBic(c));
      } else if (Is(local, "Nm")) {
        e.name = ElementText(c);
      } else if (Is(local, "PstlAdr")) {
        return ReadPostalAddress(c, e, with_address);
      } else if (Is(local, "LEI")) {
        e.lei = ElementText(c);
      } else if (Is(local, "ClrSysMmbId")) {
        return ForEachChild(c, [&](std::string_view l, pugi::xml_node m) {
          if (Is(l, "MmbId")) e.member_id = ElementText(m);
          return absl::OkStatus();
        });
      }
      return absl::OkStatus();
    });
  }

  // Id/OrgId/AnyBIC and LEI of a party.
  absl::Status ReadPartyId(pugi::xml_node element, Entity& e) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (!Is(local, "OrgId")) return absl::OkStatus();
      return ForEachChild(c, [&](std::string_view l, pugi::xml_node o) -> absl::Status {
        if (Is(l, "AnyBIC")) {
          VIGIL_ASSIGN_OR_RETURN(e.bic, ReadBic(o));
        } else if (Is(l, "LEI")) {
          e.lei = ElementText(o);
        }
        return absl::OkStatus();
      });
    });
  }

  absl::Status ReadEntity(pugi::xml_node element, Entity& e, bool with_address) {
    e.node = element;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
      if (Is(local, "FinInstnId")) return ReadFinInstnId(c, e, with_address);
      if (Is(local, "Nm")) {
        e.name = ElementText(c);
      } else if (Is(local, "PstlAdr")) {
        return ReadPostalAddress(c, e, with_address);
      } else if (Is(local, "Id")) {
        return ReadPartyId(c, e);
      } else if (Is(local, "CtryOfRes")) {
        e.residence = ElementText(c);
        return CheckCountry(c, e.residence);
      }
      return absl::OkStatus();
    });
  }

  absl::Status ReadAccount(pugi::xml_node element, Account& a) {
    a.node = element;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (!Is(local, "Id")) return absl::OkStatus();
      return ForEachChild(c, [&](std::string_view l, pugi::xml_node id) -> absl::Status {
        if (Is(l, "IBAN")) {
          a.iban = ElementText(id);
          if (absl::Status s = CheckIban(a.iban); !s.ok()) return ErrorAt(id, ToStd(s.message()));
        } else if (Is(l, "Othr")) {
          return ForEachChild(id, [&](std::string_view o, pugi::xml_node other) {
            if (Is(o, "Id")) a.other = ElementText(other);
            return absl::OkStatus();
          });
        }
        return absl::OkStatus();
      });
    });
  }

  absl::Status ReadRemittance(pugi::xml_node element, Texts& texts) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "Ustrd")) texts.push_back(ElementText(c));
      return absl::OkStatus();
    });
  }

  // PmtTpInf/InstrPrty.
  absl::Status ReadPriority(pugi::xml_node element, std::string_view& priority) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "InstrPrty")) priority = ElementText(c);
      return absl::OkStatus();
    });
  }

 private:
  NamespacedReader xml_;
};

// ---------------------------------------------------------------------------------------------
// The message: application header, group header, transactions.

struct AppHeader {
  bool present = false;               // a head.001 AppHdr was read
  std::string_view from_bic, to_bic;  // Fr/FIId/FinInstnId/BICFI, To/..., checked
  std::string_view created;           // CreDt
};

struct GroupHeader {
  pugi::xml_node node;
  std::string_view message_id;
  pugi::xml_node created_node;  // CreDtTm
  std::optional<UtcTime> created;
  std::string_view value_date;  // IntrBkSttlmDt, checked
  std::string_view priority;    // PmtTpInf/InstrPrty
  Entity instructing, instructed;
  pugi::xml_node number_node;  // NbOfTxs
  std::string_view number_of_transactions;
};

// UndrlygCstmrCdtTrf of a pacs.009 COV.
struct Underlying {
  bool present = false;
  Entity debtor, creditor, debtor_agent, creditor_agent;
  Account debtor_account, creditor_account;
  Texts remittance;
};

struct TxFields {
  pugi::xml_node node;
  std::string_view instruction_id, end_to_end_id, transaction_id;
  std::string uetr;
  std::optional<Money> settlement_amount, instructed_amount;
  std::string_view value_date, charges, purpose_code, purpose_proprietary, priority;
  Texts remittance;
  Entity instructing, instructed, debtor_agent, creditor_agent, intermediary[3];
  Account debtor_agent_account, creditor_agent_account, intermediary_account[3];
  Entity debtor, creditor, ultimate_debtor, ultimate_creditor;
  Account debtor_account, creditor_account;
  Underlying underlying;
};

// An AppHdr of another namespace than head.001 is not read.
absl::Status ReadAppHeader(pugi::xml_node element, AppHeader& header) {
  MessageReader r;
  r.xml().scope().EnterPath(element);
  const std::optional<std::string_view> ns =
      r.xml().scope().Resolve(SplitName(element.name()).prefix);
  if (!ns || ns->substr(0, kAppHdrNamespacePrefix.size()) != kAppHdrNamespacePrefix) {
    return absl::OkStatus();
  }
  r.xml().set_namespace(*ns);
  header.present = true;
  // Fr / To: FIId/FinInstnId/BICFI (the OrgId form names no bank).
  const auto read_bic = [&r](pugi::xml_node party, std::string_view& bic) {
    return r.ForEachChild(party, [&](std::string_view l1, pugi::xml_node fi_id) {
      if (!Is(l1, "FIId")) return absl::OkStatus();
      return r.ForEachChild(fi_id, [&](std::string_view l2, pugi::xml_node fin) {
        if (!Is(l2, "FinInstnId")) return absl::OkStatus();
        return r.ForEachChild(fin, [&](std::string_view l3, pugi::xml_node b) -> absl::Status {
          if (Is(l3, "BICFI")) {
            VIGIL_ASSIGN_OR_RETURN(bic, ReadBic(b));
          }
          return absl::OkStatus();
        });
      });
    });
  };
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "Fr")) return read_bic(c, header.from_bic);
    if (Is(local, "To")) return read_bic(c, header.to_bic);
    if (Is(local, "CreDt")) header.created = ElementText(c);
    return absl::OkStatus();
  });
}

absl::Status ReadGroupHeader(MessageReader& r, pugi::xml_node element, GroupHeader& g) {
  g.node = element;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "MsgId")) {
      VIGIL_ASSIGN_OR_RETURN(g.message_id, ReadIdentifier(c));
      if (g.message_id.empty()) return ErrorAt(c, "is empty");
    } else if (Is(local, "CreDtTm")) {
      g.created_node = c;
      g.created = ParseIsoDateTime(ElementText(c));
    } else if (Is(local, "NbOfTxs")) {
      g.number_node = c;
      g.number_of_transactions = ElementText(c);
    } else if (Is(local, "IntrBkSttlmDt")) {
      VIGIL_ASSIGN_OR_RETURN(g.value_date, ReadDate(c));
    } else if (Is(local, "InstgAgt")) {
      return r.ReadEntity(c, g.instructing, false);
    } else if (Is(local, "InstdAgt")) {
      return r.ReadEntity(c, g.instructed, false);
    } else if (Is(local, "PmtTpInf")) {
      return r.ReadPriority(c, g.priority);
    }
    return absl::OkStatus();
  });
}

absl::Status ReadUnderlying(MessageReader& r, pugi::xml_node element, Underlying& u) {
  u.present = true;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "Dbtr")) return r.ReadEntity(c, u.debtor, true);
    if (Is(local, "Cdtr")) return r.ReadEntity(c, u.creditor, true);
    if (Is(local, "DbtrAcct")) return r.ReadAccount(c, u.debtor_account);
    if (Is(local, "CdtrAcct")) return r.ReadAccount(c, u.creditor_account);
    if (Is(local, "DbtrAgt")) return r.ReadEntity(c, u.debtor_agent, false);
    if (Is(local, "CdtrAgt")) return r.ReadEntity(c, u.creditor_agent, false);
    if (Is(local, "RmtInf")) return r.ReadRemittance(c, u.remittance);
    return absl::OkStatus();
  });
}

absl::Status ReadPaymentId(MessageReader& r, pugi::xml_node element, TxFields& f) {
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "InstrId")) {
      VIGIL_ASSIGN_OR_RETURN(f.instruction_id, ReadIdentifier(c));
    } else if (Is(local, "EndToEndId")) {
      VIGIL_ASSIGN_OR_RETURN(f.end_to_end_id, ReadIdentifier(c));
    } else if (Is(local, "TxId")) {
      VIGIL_ASSIGN_OR_RETURN(f.transaction_id, ReadIdentifier(c));
    } else if (Is(local, "UETR")) {
      VIGIL_ASSIGN_OR_RETURN(f.uetr, ReadUetr(c));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadPurpose(MessageReader& r, pugi::xml_node element, TxFields& f) {
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "Cd")) f.purpose_code = ElementText(c);
    if (Is(local, "Prtry")) f.purpose_proprietary = ElementText(c);
    return absl::OkStatus();
  });
}

// IntrmyAgt1..3 and IntrmyAgt1Acct..3Acct: the index 0..2, or -1.
int IntermediaryIndex(std::string_view local, std::string_view suffix) {
  if (local.size() != 10 + suffix.size() || local.substr(0, 9) != "IntrmyAgt" ||
      local.substr(10) != suffix || local[9] < '1' || local[9] > '3') {
    return -1;
  }
  return local[9] - '1';
}

// One pass over the children of a CdtTrfTxInf.
absl::Status ReadTransaction(MessageReader& r, pugi::xml_node element, TxFields& f) {
  f.node = element;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "PmtId")) return ReadPaymentId(r, c, f);
    if (Is(local, "IntrBkSttlmAmt")) {
      VIGIL_ASSIGN_OR_RETURN(f.settlement_amount, ReadAmount(c));
    } else if (Is(local, "InstdAmt")) {
      VIGIL_ASSIGN_OR_RETURN(f.instructed_amount, ReadAmount(c));
    } else if (Is(local, "IntrBkSttlmDt")) {
      VIGIL_ASSIGN_OR_RETURN(f.value_date, ReadDate(c));
    } else if (Is(local, "ChrgBr")) {
      VIGIL_ASSIGN_OR_RETURN(f.charges, ReadCharges(c));
    } else if (Is(local, "PmtTpInf")) {
      return r.ReadPriority(c, f.priority);
    } else if (Is(local, "InstgAgt")) {
      return r.ReadEntity(c, f.instructing, false);
    } else if (Is(local, "InstdAgt")) {
      return r.ReadEntity(c, f.instructed, false);
    } else if (Is(local, "Dbtr")) {
      return r.ReadEntity(c, f.debtor, true);
    } else if (Is(local, "DbtrAcct")) {
      return r.ReadAccount(c, f.debtor_account);
    } else if (Is(local, "DbtrAgt")) {
      return r.ReadEntity(c, f.debtor_agent, false);
    } else if (Is(local, "DbtrAgtAcct")) {
      return r.ReadAccount(c, f.debtor_agent_account);
    } else if (Is(local, "CdtrAgt")) {
      return r.ReadEntity(c, f.creditor_agent, false);
    } else if (Is(local, "CdtrAgtAcct")) {
      return r.ReadAccount(c, f.creditor_agent_account);
    } else if (Is(local, "Cdtr")) {
      return r.ReadEntity(c, f.creditor, true);
    } else if (Is(local, "CdtrAcct")) {
      return r.ReadAccount(c, f.creditor_account);
    } else if (Is(local, "UltmtDbtr")) {
      return r.ReadEntity(c, f.ultimate_debtor, true);
    } else if (Is(local, "UltmtCdtr")) {
      return r.ReadEntity(c, f.ultimate_creditor, true);
    } else if (Is(local, "RmtInf")) {
      return r.ReadRemittance(c, f.remittance);
    } else if (Is(local, "Purp")) {
      return ReadPurpose(r, c, f);
    } else if (Is(local, "UndrlygCstmrCdtTrf")) {
      return ReadUnderlying(r, c, f.underlying);
    } else if (const int i = IntermediaryIndex(local, ""); i >= 0) {
      return r.ReadEntity(c, f.intermediary[i], false);
    } else if (const int j = IntermediaryIndex(local, "Acct"); j >= 0) {
      return r.ReadAccount(c, f.intermediary_account[j]);
    }
    return absl::OkStatus();
  });
}

// ---------------------------------------------------------------------------------------------
// Mapping to Transaction.

std::string_view FirstNonEmpty(std::initializer_list<std::string_view> values) {
  for (std::string_view v : values) {
    if (!v.empty()) return v;
  }
  return {};
}

// The originator or beneficiary: "party" with its account and its bank ("agent").
Party MakeParty(Entity& party, const Account& account, const Entity& agent) {
  Party p;
  p.name = std::string(party.name);
  p.address = std::move(party.address);
  // A bank with a BIC is its own bank, as an MT202's 52A/58A party is (the formats agree). A
  // pacs.008 customer's AnyBIC identifies the customer, not a bank: its bank is its agent.
  p.bank_id = std::string(FirstNonEmpty(
      {party.institution ? party.bic : std::string_view(), agent.bic, agent.member_id}));
  p.country = std::string(
      FirstNonEmpty({party.country, party.residence, BicCountry(party.bic),
                     account.iban.substr(0, account.iban.empty() ? 0 : 2), BicCountry(agent.bic)}));
  p.account_id = PartyAccountKey(account.id(), party.bic, agent.bic, party.name);
  return p;
}

Party MakeUltimateParty(Entity& party) {
  Party p;
  p.account_id = std::string(FirstNonEmpty({party.bic, party.lei}));
  p.name = std::string(party.name);
  p.address = std::move(party.address);
  p.country = std::string(FirstNonEmpty({party.country, party.residence, BicCountry(party.bic)}));
  return p;
}

void AddAgent(AgentRole role, const Entity& e, const Account* account, Transaction& tx) {
  if (!e.node) return;
  Agent& a = tx.agents.emplace_back();
  a.role = role;
  a.bic = std::string(e.bic);
  if (account != nullptr) a.account_id = std::string(account->id());
  a.name = std::string(e.name);
  a.country = std::string(FirstNonEmpty({e.country, BicCountry(e.bic)}));
}

void AddAgentBic(AgentRole role, std::string_view bic, Transaction& tx) {
  if (bic.empty()) return;
  Agent& a = tx.agents.emplace_back();
  a.role = role;
  a.bic = std::string(bic);
  a.country = std::string(BicCountry(bic));
}

std::string JoinRemittance(const Texts& texts) {
  std::string joined;
  for (std::string_view t : texts) {
    if (t.empty()) continue;
    if (!joined.empty()) joined += ' ';
    joined += t;
  }
  return joined;
}

struct MessageContext {
  std::string_view definition;  // "pacs.008.001.08"
  bool fi_transfer = false;     // pacs.009
  const AppHeader* app_header = nullptr;
  const GroupHeader* group = nullptr;
};

// GrpHdr/CreDtTm; when it is not a date and time, the AppHdr's CreDt, then the settlement date
// at 00:00 UTC (iso20022.h).
absl::StatusOr<UtcTime> EventTime(const MessageContext& m, std::string_view value_date) {
  const GroupHeader& g = *m.group;
  if (g.created) return *g.created;
  if (m.app_header != nullptr) {
    if (std::optional<UtcTime> t = ParseIsoDateTime(m.app_header->created)) return *t;
  }
  if (!value_date.empty()) {
    if (std::optional<UtcTime> t =
            ParseIsoDateTime(absl::StrCat(ToAbsl(value_date), "T00:00:00Z"))) {
      return *t;
    }
  }
  return ErrorAt(g.created_node, absl::StrCat("\"", ToAbsl(ElementText(g.created_node)),
                                              "\" is not a date and time, and the message has no "
                                              "settlement date to fall back on"));
}

// id, reference, UETR.
void FillIdentity(const MessageContext& m, TxFields& f, int index, Transaction& tx) {
  tx.uetr = std::move(f.uetr);
  if (!tx.uetr.empty()) {
    tx.id = tx.uetr;
  } else {
    const std::string_view e2e = f.end_to_end_id == kNotProvided ? "" : f.end_to_end_id;
    const std::string_view tail = FirstNonEmpty({f.transaction_id, f.instruction_id, e2e});
    tx.id = tail.empty() ? absl::StrCat(ToAbsl(m.group->message_id), "/", index)
                         : absl::StrCat(ToAbsl(m.group->message_id), "/", ToAbsl(tail));
  }
  tx.reference = std::string(f.end_to_end_id == kNotProvided ? f.instruction_id : f.end_to_end_id);
}

absl::Status FillParties(TxFields& f, Transaction& tx) {
  if (!f.debtor.node) return MissingChild(f.node, "Dbtr");
  if (!f.creditor.node) return MissingChild(f.node, "Cdtr");
  tx.originator = MakeParty(f.debtor, f.debtor_account, f.debtor_agent);
  if (tx.originator.account_id.empty()) {
    return ErrorAt(f.debtor.node, "names neither an account, a BIC nor a name");
  }
  tx.beneficiary = MakeParty(f.creditor, f.creditor_account, f.creditor_agent);
  if (tx.beneficiary.account_id.empty()) {
    return ErrorAt(f.creditor.node, "names neither an account, a BIC nor a name");
  }
  Underlying& u = f.underlying;
  if (f.ultimate_debtor.node) {
    tx.ultimate_originator = MakeUltimateParty(f.ultimate_debtor);
  } else if (u.debtor.node) {
    tx.ultimate_originator = MakeParty(u.debtor, u.debtor_account, u.debtor_agent);
  }
  if (f.ultimate_creditor.node) {
    tx.ultimate_beneficiary = MakeUltimateParty(f.ultimate_creditor);
  } else if (u.creditor.node) {
    tx.ultimate_beneficiary = MakeParty(u.creditor, u.creditor_account, u.creditor_agent);
  }
  return absl::OkStatus();
}

// In role order (iso20022.h); the instructing and instructed agents of the transaction, else of
// the group header, else of the application header.
void FillAgents(const MessageContext& m, const TxFields& f, Transaction& tx) {
  const GroupHeader& g = *m.group;
  tx.agents.reserve(8);
  if (f.instructing.node) {
    AddAgent(AgentRole::kInstructing, f.instructing, nullptr, tx);
  } else if (g.instructing.node) {
    AddAgent(AgentRole::kInstructing, g.instructing, nullptr, tx);
  } else if (m.app_header != nullptr) {
    AddAgentBic(AgentRole::kInstructing, m.app_header->from_bic, tx);
  }
  if (f.instructed.node) {
    AddAgent(AgentRole::kInstructed, f.instructed, nullptr, tx);
  } else if (g.instructed.node) {
    AddAgent(AgentRole::kInstructed, g.instructed, nullptr, tx);
  } else if (m.app_header != nullptr) {
    AddAgentBic(AgentRole::kInstructed, m.app_header->to_bic, tx);
  }
  AddAgent(AgentRole::kOrderingInstitution, f.debtor_agent, &f.debtor_agent_account, tx);
  for (int i = 0; i < 3; ++i) {
    AddAgent(AgentRole::kIntermediary, f.intermediary[i], &f.intermediary_account[i], tx);
  }
  AddAgent(AgentRole::kAccountWithInstitution, f.creditor_agent, &f.creditor_agent_account, tx);
  if (m.fi_transfer) {
    AddAgent(AgentRole::kBeneficiaryInstitution, f.creditor, &f.creditor_account, tx);
  }
}

// REQUIRES: "tx" is a new Transaction.
absl::Status BuildTransaction(const MessageContext& m, TxFields& f, int index, Transaction& tx) {
  tx.message_type = std::string(m.definition);
  tx.payment_format = PaymentFormat::kWire;
  FillIdentity(m, f, index, tx);
  if (!f.settlement_amount) return MissingChild(f.node, "IntrBkSttlmAmt");
  if (f.instructed_amount) {
    tx.amount = *f.instructed_amount;
    if (!(*f.instructed_amount == *f.settlement_amount)) tx.settled_amount = f.settlement_amount;
  } else {
    tx.amount = *f.settlement_amount;
  }
  tx.value_date = std::string(FirstNonEmpty({f.value_date, m.group->value_date}));
  VIGIL_ASSIGN_OR_RETURN(tx.event_time, EventTime(m, tx.value_date));
  tx.charges = std::string(f.charges);
  tx.purpose = std::string(FirstNonEmpty({f.purpose_code, f.purpose_proprietary}));
  tx.remittance = JoinRemittance(f.remittance);
  if (tx.remittance.empty()) tx.remittance = JoinRemittance(f.underlying.remittance);
  tx.priority =
      FirstNonEmpty({f.priority, m.group->priority}) == "HIGH" ? Priority::kP0 : Priority::kP1;
  VIGIL_RETURN_IF_ERROR(FillParties(f, tx));
  FillAgents(m, f, tx);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Document structure.

// The Document and the AppHdr of a message.
struct MessageParts {
  pugi::xml_node document;
  pugi::xml_node app_header;  // null when absent
};

// The visitor of ParseXmlDocument that finds them, outside each other: the first AppHdr, and the
// Document, of which there must be one (checked by the caller) and no second.
absl::StatusOr<bool> FindMessagePart(pugi::xml_node element, std::string_view local,
                                     MessageParts& parts) {
  if (Is(local, "Document")) {
    if (parts.document) {
      return ErrorAt(element, "a second Document: vigil reads one message at a time");
    }
    parts.document = element;
    return true;
  }
  if (Is(local, "AppHdr")) {
    if (!parts.app_header) parts.app_header = element;
    return true;
  }
  return false;
}

// "pacs.008.001.08", "pain.001.001.03.ch.02": business area (4 letters), message number,
// variant, version, then anything.
bool LooksLikeMessageDefinition(std::string_view id) {
  if (id.size() < 15) return false;
  for (size_t i = 0; i < 15; ++i) {
    const char c = id[i];
    const bool ok = i < 4 ? IsLower(c) : (i == 4 || i == 8 || i == 12) ? c == '.' : IsDigit(c);
    if (!ok) return false;
  }
  return id.size() == 15 || id[15] == '.';
}

// Whether "id" is a definition vigil reads: pacs.008 or pacs.009, version 07 or later.
bool IsSupportedDefinition(std::string_view id) {
  if (id.size() != 15 || !IsDigit(id[13]) || !IsDigit(id[14]) ||
      (id.substr(0, 13) != "pacs.008.001." && id.substr(0, 13) != "pacs.009.001.")) {
    return false;
  }
  return (id[13] - '0') * 10 + (id[14] - '0') >= 7;
}

absl::Status Unsupported(std::string_view id) {
  return absl::UnimplementedError(
      absl::StrCat("unsupported message type ", ToAbsl(id),
                   " (vigil reads pacs.008 and pacs.009, version 001.07 and later)"));
}

// The message definition the Document's namespace names; kUnimplemented for those vigil does
// not read, including market variants in namespaces of their own (SIX's
// "http://www.six-interbank-clearing.com/de/pain.001.001.03.ch.02.xsd").
absl::StatusOr<std::string_view> MessageDefinition(pugi::xml_node document, NamespaceScope& scope) {
  const QName name = SplitName(document.name());
  const std::optional<std::string_view> ns = scope.Resolve(name.prefix);
  if (!ns.has_value()) {
    return ErrorAt(document, absl::StrCat("uses the undeclared namespace prefix \"",
                                          ToAbsl(name.prefix), "\""));
  }
  if (ns->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ISO 20022 document at ", XPath(document), " has no namespace (expected ",
                     ToAbsl(kIsoNamespacePrefix), "<message definition>)"));
  }
  if (ns->substr(0, kIsoNamespacePrefix.size()) == kIsoNamespacePrefix) {
    const std::string_view id = ns->substr(kIsoNamespacePrefix.size());
    if (IsSupportedDefinition(id)) return id;
    if (LooksLikeMessageDefinition(id)) return Unsupported(id);
  } else {
    std::string_view last = ns->substr(ns->find_last_of("/:") + 1);
    if (last.size() > 4 && last.substr(last.size() - 4) == ".xsd") last.remove_suffix(4);
    if (LooksLikeMessageDefinition(last)) return Unsupported(last);
  }
  return ErrorAt(document, absl::StrCat("namespace \"", ToAbsl(*ns), "\" names no ISO 20022 ",
                                        "message definition (expected ",
                                        ToAbsl(kIsoNamespacePrefix), "<message definition>)"));
}

absl::Status CheckTransactionCount(const GroupHeader& g, size_t count) {
  if (!g.number_node) return MissingChild(g.node, "NbOfTxs");
  const std::string_view text = g.number_of_transactions;
  size_t number = 0;
  bool ok = !text.empty() && text.size() <= 15;
  for (char c : text) {
    ok = ok && IsDigit(c);
    number = number * 10 + static_cast<size_t>(c - '0');
  }
  if (!ok) return ErrorAt(g.number_node, absl::StrCat("\"", ToAbsl(text), "\" is not a number"));
  if (number != count) {
    return ErrorAt(g.number_node, absl::StrCat("says ", number, " transactions, the message has ",
                                               count, " CdtTrfTxInf"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Transaction>> ReadMessage(const MessageParts& parts) {
  MessageReader r;
  NamespaceScope& scope = r.xml().scope();
  scope.EnterPath(parts.document);
  VIGIL_ASSIGN_OR_RETURN(const std::string_view definition,
                         MessageDefinition(parts.document, scope));
  // MessageDefinition accepts only a document of a declared, ISO 20022 namespace.
  r.xml().set_namespace(*scope.Resolve(SplitName(parts.document.name()).prefix));

  MessageContext m;
  m.definition = definition;
  m.fi_transfer = definition.substr(0, 8) == "pacs.009";
  const std::string_view root_name = m.fi_transfer ? "FICdtTrf" : "FIToFICstmrCdtTrf";

  AppHeader app_header;
  if (parts.app_header) {
    VIGIL_RETURN_IF_ERROR(ReadAppHeader(parts.app_header, app_header));
    if (app_header.present) m.app_header = &app_header;
  }

  pugi::xml_node root;
  VIGIL_RETURN_IF_ERROR(
      r.ForEachChild(parts.document, [&](std::string_view local, pugi::xml_node c) {
        if (local == root_name && !root) root = c;
        return absl::OkStatus();
      }));
  if (!root) return MissingChild(parts.document, root_name);
  const size_t root_mark = r.xml().scope().Enter(root);

  pugi::xml_node group_node;
  std::vector<pugi::xml_node> transactions;
  VIGIL_RETURN_IF_ERROR(r.ForEachChild(root, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "GrpHdr") && !group_node) group_node = c;
    if (Is(local, "CdtTrfTxInf")) transactions.push_back(c);
    return absl::OkStatus();
  }));
  if (!group_node) return MissingChild(root, "GrpHdr");
  GroupHeader group;
  {
    const size_t mark = r.xml().scope().Enter(group_node);
    VIGIL_RETURN_IF_ERROR(ReadGroupHeader(r, group_node, group));
    r.xml().scope().Leave(mark);
  }
  if (group.message_id.empty()) return MissingChild(group_node, "MsgId");
  if (!group.created_node) return MissingChild(group_node, "CreDtTm");
  if (transactions.empty()) return MissingChild(root, "CdtTrfTxInf");
  VIGIL_RETURN_IF_ERROR(CheckTransactionCount(group, transactions.size()));
  m.group = &group;

  std::vector<Transaction> result;
  result.reserve(transactions.size());
  for (size_t i = 0; i < transactions.size(); ++i) {
    TxFields fields;
    const size_t mark = r.xml().scope().Enter(transactions[i]);
    VIGIL_RETURN_IF_ERROR(ReadTransaction(r, transactions[i], fields));
    r.xml().scope().Leave(mark);
    VIGIL_RETURN_IF_ERROR(
        BuildTransaction(m, fields, static_cast<int>(i) + 1, result.emplace_back()));
  }
  r.xml().scope().Leave(root_mark);
  return result;
}

}  // namespace

bool LooksLikeXml(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  text = ingest_internal::TrimXmlSpace(text);
  return !text.empty() && text.front() == '<';
}

absl::StatusOr<std::vector<Transaction>> ParseIso20022(std::string_view xml) {
  if (xml.empty()) return absl::InvalidArgumentError("ISO 20022 message is empty");
  if (xml.size() > kMaxIso20022Bytes) {
    return absl::InvalidArgumentError(absl::StrCat("ISO 20022 message of ", xml.size(),
                                                   " bytes: the limit is ", kMaxIso20022Bytes));
  }
  pugi::xml_document doc;
  MessageParts parts;
  VIGIL_RETURN_IF_ERROR(ParseXmlDocument(
      xml, kMaxIso20022Depth,
      [&parts](pugi::xml_node element, std::string_view local) {
        return FindMessagePart(element, local, parts);
      },
      doc));
  if (!parts.document) {
    return absl::InvalidArgumentError("XML holds no ISO 20022 Document element");
  }
  return ReadMessage(parts);
}

}  // namespace vigil
