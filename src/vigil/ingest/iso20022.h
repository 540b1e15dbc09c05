// ISO 20022 (MX) payment messages: pacs.008 (FIToFICstmrCdtTrf, customer credit transfer) and
// pacs.009 (FICdtTrf, financial institution credit transfer, COV included), message definition
// versions 001.07 and later, read into Transactions (core/transaction.h).
//
// Input: one message. Either a bare <Document>, or a business application header (head.001
// AppHdr) and a Document inside any wrapper element (<Envelope xmlns="urn:swift:xsd:envelope">,
// <message>, ...). Elements are matched by local name and namespace URI, whatever prefix the
// sender chose; the namespace of the Document names the message definition
// ("urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"). Elements of other namespaces inside the
// Document are ignored. A leading UTF-8 BOM, an XML declaration and comments are accepted.
//
// Refused (kInvalidArgument): input over kMaxIso20022Bytes, bytes that are not UTF-8 or are
// control characters, XML that is not well-formed (byte offset and reason), text outside the
// root element, more than one root element or Document, any DOCTYPE (so no DTD, no entity
// declarations, no external entities), elements nested deeper than kMaxIso20022Depth, a
// Document without a namespace, and content errors. Content errors name the
// XPath of the element by local names, with 1-based positions where an element repeats:
// "/Envelope/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/IntrBkSttlmAmt: currency \"XYZ\" is not an
// ISO 4217 code". Other message definitions (pacs.002/004, pain.*, camt.*, pacs.008.001.06 and
// older) are refused with kUnimplemented "unsupported message type <id> ...".
//
// Mapping, per CdtTrfTxInf (one Transaction each, in message order):
//  - message_type: the message definition, "pacs.008.001.08". payment_format kWire, channel empty.
//  - id: the UETR, else "<GrpHdr/MsgId>/<TxId, else InstrId, else EndToEndId unless NOTPROVIDED,
//    else the 1-based index of the CdtTrfTxInf>"; these identifiers (Max35Text) must not exceed
//    35 characters nor hold control characters. uetr: PmtId/UETR, a UUID of 8-4-4-4-12
//    hexadecimal digits, either case, stored in lower case. The version and variant digits are
//    not checked (the schema's UUIDv4Identifier asks for version 4): it is NormalizeUetr
//    (swift_syntax.h), what the MT reader accepts in field 121, so that the same payment is
//    accepted in both formats. A malformed UETR is refused with its XPath.
//    reference: EndToEndId, or InstrId when EndToEndId is NOTPROVIDED.
//  - event_time: GrpHdr/CreDtTm converted to UTC; a time without a UTC offset is read as UTC;
//    fractional digits beyond microseconds are dropped. A CreDtTm that is present but not a date
//    and time (translator test outputs carry the placeholder "CURRENT_TIME") falls back to the
//    AppHdr's CreDt, then to the settlement date at 00:00 UTC: the payment is still screened, at
//    the best time the message gives.
//  - amount: InstdAmt when present, else IntrBkSttlmAmt; settled_amount: IntrBkSttlmAmt when
//    InstdAmt is present and differs in amount or currency. Amounts use '.' as decimal mark, must
//    not be negative and have at most the currency's ISO 4217 decimals (non-ISO codes refused).
//  - value_date: IntrBkSttlmDt of the transaction, else of GrpHdr (YYYY-MM-DD).
//  - charges: ChrgBr DEBT "OUR", CRED "BEN", SHAR "SHA", SLEV "SHA" (service-level rules share
//    the charges, which is what SHA tells a screening rule). purpose: Purp/Cd, else Purp/Prtry.
//    remittance: the RmtInf/Ustrd texts joined with one space (structured RmtInf/Strd is not
//    read). priority: PmtTpInf/InstrPrty (of the transaction, else of GrpHdr) HIGH is kP0,
//    anything else kP1.
//  - originator / beneficiary: Dbtr / Cdtr, with DbtrAcct / CdtrAcct and DbtrAgt / CdtrAgt.
//    A party is read in either shape: a party (pacs.008: Nm, PstlAdr, Id/OrgId/AnyBIC,
//    CtryOfRes) or a financial institution (pacs.009: FinInstnId/BICFI, Nm, PstlAdr).
//    name: Nm. address: PstlAdr rendered as lines (below). account: Id/IBAN (checked) or
//    Id/Othr/Id. bank_id: for a financial institution with a BICFI (pacs.009), that BIC (a bank
//    is its own bank, as the MT202's 52A/58A party is); else the agent's BICFI (DbtrAgt /
//    CdtrAgt), else its ClrSysMmbId/MmbId. A pacs.008 party's bank_id is thus its agent's even
//    when the party has Id/OrgId/AnyBIC: a customer identified by a BIC is not a bank.
//    country: PstlAdr/Ctry, else CtryOfRes, else the party's own BIC (letters 5-6), else the
//    IBAN's country, else the agent's BIC. account_id: PartyAccountKey(account, the party's BIC
//    (AnyBIC or BICFI), the agent's BICFI, name), so the AnyBIC keys a party without an
//    account; a party naming none of them is refused.
//  - pacs.009 COV (UndrlygCstmrCdtTrf): originator and beneficiary are the financial
//    institutions of the cover (the parties the money moves between); the underlying customers
//    (UndrlygCstmrCdtTrf/Dbtr, /Cdtr, keyed with their accounts and agents like pacs.008
//    parties) become ultimate_originator / ultimate_beneficiary unless the cover names
//    UltmtDbtr / UltmtCdtr, and the underlying RmtInf the remittance when the cover has none.
//  - ultimate_originator / ultimate_beneficiary: UltmtDbtr / UltmtCdtr (name, address, country);
//    account_id is their AnyBIC or BICFI, else their LEI, else empty.
//  - agents, ordered by role as the chain runs (the order of AgentRole, as an MT lists 52a, 56a,
//    57a): InstgAgt kInstructing, InstdAgt kInstructed (of the transaction, else of GrpHdr, else
//    the AppHdr's Fr / To BICFI), DbtrAgt kOrderingInstitution, IntrmyAgt1..3 kIntermediary,
//    CdtrAgt kAccountWithInstitution, and for pacs.009 Cdtr kBeneficiaryInstitution (MT202 58a,
//    account CdtrAcct). PrvsInstgAgt*, reimbursement agents of SttlmInf and ChrgsInf agents are
//    not read. Agent: bic FinInstnId/BICFI (checked), name Nm, account_id the matching *AgtAcct
//    (or CdtrAcct) identification, country PstlAdr/Ctry, else the BIC's letters 5-6.
//  - PstlAdr lines, in this order: each structured element that is present, on its own line,
//    with "StrtNm BldgNb", "BldgNm Flr Room UnitNb" and "PstCd TwnNm" joined by a space:
//    CareOf, Dept, SubDept, StrtNm BldgNb, BldgNm Flr Room UnitNb, PstBx, PstCd TwnNm,
//    TwnLctnNm, DstrctNm, CtrySubDvsn; then every AdrLine. Ctry is the country, not a line.
//  - Texts: surrounding whitespace trimmed, inner text kept as it is; a text that comments or
//    CDATA sections interrupt is read whole ("A<!-- -->B" is "AB"), so that no part of a name
//    escapes screening.
// Not checked: GrpHdr/CtrlSum and TtlIntrBkSttlmAmt (the corpus has a CtrlSum that matches
// nothing), text lengths and the schema's element order.
//
// Thread safety: pure functions.
#ifndef VIGIL_INGEST_ISO20022_H_
#define VIGIL_INGEST_ISO20022_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"

namespace vigil {

// A message of a single payment is a few KB; a pacs.008 batch of a few thousand transactions
// stays under this.
inline constexpr size_t kMaxIso20022Bytes = size_t{4} << 20;
// Elements nested deeper than this are refused. The deepest path of a pacs.008 is about 12
// levels below the Document; the rest is headroom for wrappers and supplementary data.
inline constexpr int kMaxIso20022Depth = 64;

// True when the first character after an optional UTF-8 BOM and whitespace is '<': the test
// format detection uses to tell XML from JSON and SWIFT FIN text. Not a well-formedness check.
bool LooksLikeXml(std::string_view text);

// Reads one ISO 20022 message (above) into its transactions, at least one, in message order.
absl::StatusOr<std::vector<Transaction>> ParseIso20022(std::string_view xml);

}  // namespace vigil

#endif  // VIGIL_INGEST_ISO20022_H_
