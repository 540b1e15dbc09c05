#include "vigil/ingest/iso20022.h"

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/swift_syntax.h"
#include "vigil/testing/csv.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::vigil::testing::StatusIs;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Corpus(const std::string& relative) {
  const std::string text = Read(::vigil::testing::TestDataPath("iso20022/" + relative));
  EXPECT_FALSE(text.empty()) << "cannot read testdata/iso20022/" << relative
                             << " (set VIGIL_SOURCE_DIR)";
  return text;
}

Money M(std::string_view amount, std::string_view currency) {
  return *Money::Parse(ToAbsl(amount), *Currency::FromCode(ToAbsl(currency)));
}

UtcTime T(std::string_view rfc3339) { return *ParseRfc3339(ToAbsl(rfc3339)); }

Agent A(AgentRole role, std::string bic, std::string country, std::string name = "",
        std::string account_id = "") {
  Agent a;
  a.role = role;
  a.bic = std::move(bic);
  a.account_id = std::move(account_id);
  a.name = std::move(name);
  a.country = std::move(country);
  return a;
}

// The rows of testdata/iso20022/<name> as maps from column name to value.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& name) {
  std::istringstream in(Corpus(name));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = ::vigil::testing::SplitCsvLine(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = ::vigil::testing::SplitCsvLine(line);
    EXPECT_EQ(fields.size(), header.size()) << line;
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
  }
  return rows;
}

// pacs.008 or pacs.009, version 07 or later: what vigil reads.
bool Supported(std::string_view definition) {
  return definition.size() == 15 &&
         (definition.substr(0, 13) == "pacs.008.001." ||
          definition.substr(0, 13) == "pacs.009.001.") &&
         std::stoi(std::string(definition.substr(13))) >= 7;
}

void ExpectInvariants(const Transaction& tx) {
  EXPECT_FALSE(tx.id.empty());
  EXPECT_FALSE(tx.originator.account_id.empty());
  EXPECT_FALSE(tx.beneficiary.account_id.empty());
  EXPECT_TRUE(tx.amount.currency().is_iso());
  EXPECT_FALSE(tx.amount.is_negative());
  if (tx.settled_amount) {
    EXPECT_TRUE(tx.settled_amount->currency().is_iso());
  }
  EXPECT_EQ(tx.payment_format, PaymentFormat::kWire);
}

TEST(Iso20022CsvSplit, QuotedCommasAndQuotes) {
  EXPECT_THAT(::vigil::testing::SplitCsvLine(R"(a,"b, ""c""",,d)"),
              ElementsAre("a", R"(b, "c")", "", "d"));
}

// ---------------------------------------------------------------------------------------------
// The whole corpus against its manifest.

TEST(Iso20022Corpus, EverySupportedSampleParses) {
  int parsed = 0;
  for (const auto& entry : ReadCsv("manifest.csv")) {
    const std::string& definition = entry.at("message_definition");
    if (!Supported(definition) || entry.at("role") != "sample") continue;
    SCOPED_TRACE(entry.at("file"));
    const absl::StatusOr<std::vector<Transaction>> txs = ParseIso20022(Corpus(entry.at("file")));
    ASSERT_TRUE(txs.ok()) << txs.status();
    ASSERT_THAT(*txs, Not(IsEmpty()));
    for (const Transaction& tx : *txs) {
      ExpectInvariants(tx);
      EXPECT_EQ(tx.message_type, definition);
      EXPECT_THAT(tx.agents, Not(IsEmpty()));
    }
    ++parsed;
  }
  // PROVENANCE.md: 23 pacs.008 and 17 pacs.009 (more if the manifest grows).
  EXPECT_GE(parsed, 40);
}

TEST(Iso20022Corpus, OtherMessageTypesAreUnimplemented) {
  int refused = 0;
  for (const auto& entry : ReadCsv("manifest.csv")) {
    const std::string& definition = entry.at("message_definition");
    if (Supported(definition) || entry.at("role") != "sample") continue;
    SCOPED_TRACE(entry.at("file"));
    EXPECT_THAT(ParseIso20022(Corpus(entry.at("file"))),
                StatusIs(absl::StatusCode::kUnimplemented,
                         HasSubstr(absl::StrCat("unsupported message type ", definition))));
    ++refused;
  }
  EXPECT_GE(refused, 45);
}

TEST(Iso20022Corpus, DocumentWithoutNamespaceIsRefused) {
  EXPECT_THAT(ParseIso20022(Corpus("invalid/mx_NO-NAMESPACE_0001.xml")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ISO 20022 document at /Document has no namespace")));
}

// tools/iso20022_expected.py read the same files with Python's xml.etree.
TEST(Iso20022Corpus, AgreesWithAnIndependentRead) {
  int checked = 0;
  for (const auto& row : ReadCsv("expected_fields.csv")) {
    SCOPED_TRACE(absl::StrCat(row.at("file"), " transaction ", row.at("tx_index")));
    const absl::StatusOr<std::vector<Transaction>> txs = ParseIso20022(Corpus(row.at("file")));
    ASSERT_TRUE(txs.ok()) << txs.status();
    const size_t index = std::stoul(row.at("tx_index"));
    ASSERT_GE(txs->size(), index);
    const Transaction& tx = (*txs)[index - 1];
    const Money settlement = M(row.at("intrbk_amount"), row.at("intrbk_ccy"));
    if (row.at("instd_amount").empty()) {
      EXPECT_EQ(tx.amount, settlement);
      EXPECT_FALSE(tx.settled_amount.has_value());
    } else {
      const Money instructed = M(row.at("instd_amount"), row.at("instd_ccy"));
      EXPECT_EQ(tx.amount, instructed);
      if (instructed == settlement) {
        EXPECT_FALSE(tx.settled_amount.has_value());
      } else {
        EXPECT_EQ(tx.settled_amount, settlement);
      }
    }
    std::string uetr = row.at("uetr");
    for (char& c : uetr) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(tx.uetr, uetr);
    if (!uetr.empty()) {
      EXPECT_EQ(tx.id, uetr);
    }
    if (row.at("end_to_end_id") != "NOTPROVIDED") {
      EXPECT_EQ(tx.reference, row.at("end_to_end_id"));
    }
    EXPECT_EQ(tx.value_date, row.at("value_date"));
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

// ---------------------------------------------------------------------------------------------
// Field by field on corpus files.

// CBPR+ pacs.008.001.12 in a SWIFT envelope, default namespaces, structured addresses.
TEST(Iso20022Fields, CbprPacs008Version12) {
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                       ParseIso20022(Corpus("messages/mx_pacs.008.001.12_0001.xml")));
  ASSERT_THAT(txs, SizeIs(1));
  const Transaction& tx = txs[0];
  EXPECT_EQ(tx.message_type, "pacs.008.001.12");
  EXPECT_EQ(tx.id, "174c245f-2682-4291-ad67-2a41e530cd27");
  EXPECT_EQ(tx.uetr, "174c245f-2682-4291-ad67-2a41e530cd27");
  EXPECT_EQ(tx.reference, "E2E04044506271305");
  EXPECT_EQ(tx.event_time, T("2022-10-20T09:05:00Z"));
  EXPECT_EQ(tx.amount, M("591636", "RON"));
  EXPECT_FALSE(tx.settled_amount.has_value());
  EXPECT_EQ(tx.value_date, "2022-10-20");
  EXPECT_EQ(tx.charges, "OUR");
  EXPECT_EQ(tx.remittance, "");
  EXPECT_EQ(tx.purpose, "");
  EXPECT_EQ(tx.priority, Priority::kP1);
  EXPECT_EQ(tx.originator.account_id, "25698745");
  EXPECT_EQ(tx.originator.name, "Debtor Co");
  EXPECT_THAT(tx.originator.address, ElementsAre("High Street", "Epping"));
  EXPECT_EQ(tx.originator.country, "GB");
  EXPECT_EQ(tx.originator.bank_id, "MYMBGB2LXXX");
  EXPECT_EQ(tx.beneficiary.account_id, "65479512");
  EXPECT_EQ(tx.beneficiary.name, "Ardent Finance");
  EXPECT_THAT(tx.beneficiary.address, ElementsAre("Main Street", "Bucharest"));
  EXPECT_EQ(tx.beneficiary.country, "RO");
  EXPECT_EQ(tx.beneficiary.bank_id, "GEBABEBBXXX");
  EXPECT_THAT(tx.agents, ElementsAre(A(AgentRole::kInstructing, "MYMBGB2LXXX", "GB"),
                                     A(AgentRole::kInstructed, "INGBROBUXXX", "RO"),
                                     A(AgentRole::kOrderingInstitution, "MYMBGB2LXXX", "GB"),
                                     A(AgentRole::kAccountWithInstitution, "GEBABEBBXXX", "BE")));
  EXPECT_FALSE(tx.ultimate_originator.has_value());
  EXPECT_FALSE(tx.ultimate_beneficiary.has_value());
}

// pacs.008.001.08 with head: and pacs: prefixes; EndToEndId NOTPROVIDED; CreDtTm the
// placeholder "CURRENT_TIME" (in the AppHdr too); unstructured addresses without a country.
TEST(Iso20022Fields, PrefixedPacs008Version08) {
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                       ParseIso20022(Corpus("messages/mx_pacs.008.001.08_0007.xml")));
  ASSERT_THAT(txs, SizeIs(1));
  const Transaction& tx = txs[0];
  EXPECT_EQ(tx.message_type, "pacs.008.001.08");
  EXPECT_EQ(tx.id, "09797101-a670-4e81-98ed-34b409736402");
  EXPECT_EQ(tx.reference, "990OTT250922014");           // InstrId: EndToEndId is NOTPROVIDED
  EXPECT_EQ(tx.event_time, T("2025-09-22T00:00:00Z"));  // the settlement date
  EXPECT_EQ(tx.amount, M("100", "JPY"));
  EXPECT_FALSE(tx.settled_amount.has_value());  // InstdAmt equals IntrBkSttlmAmt
  EXPECT_EQ(tx.value_date, "2025-09-22");
  EXPECT_EQ(tx.charges, "BEN");
  EXPECT_EQ(tx.remittance, "IMPORT OF GOOD INV NO : 1526395 INV DATE : 10.10.2025 LKMIOP");
  EXPECT_EQ(tx.originator.account_id, "100811000148");
  EXPECT_EQ(tx.originator.name, "RASA ENGINEERING SERVICES (PVT) L");
  EXPECT_THAT(tx.originator.address, ElementsAre("NO 852-60", "SHARUK PURA", "SRI LANKA"));
  EXPECT_EQ(tx.originator.country, "LK");  // from DbtrAgt's BIC
  EXPECT_EQ(tx.originator.bank_id, "ABCDLKLXXXX");
  EXPECT_EQ(tx.beneficiary.account_id, "2563529");
  EXPECT_EQ(tx.beneficiary.name, "SHASHU LANXI SHANYE");
  EXPECT_THAT(tx.beneficiary.address, ElementsAre("MACHINERY CO LTD", "MACHINERY CO LTD"));
  EXPECT_EQ(tx.beneficiary.country, "CN");  // from CdtrAgt's BIC
  EXPECT_EQ(tx.beneficiary.bank_id, "ICBKCNBJZJP");
  // PrvsInstgAgt1 and the ChrgsInf agent are not agents of the chain.
  EXPECT_THAT(tx.agents,
              ElementsAre(A(AgentRole::kInstructing, "ABCDLKLXXXX", "LK"),
                          A(AgentRole::kInstructed, "MHCBJPJTXXX", "JP"),
                          A(AgentRole::kOrderingInstitution, "ABCDLKLXXXX", "LK", "", "CGC BRANHC"),
                          A(AgentRole::kAccountWithInstitution, "ICBKCNBJZJP", "CN")));
}

// InstdAmt differs from IntrBkSttlmAmt (charges deducted); offset +05:00.
TEST(Iso20022Fields, SettledAmountWhenItDiffers) {
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                       ParseIso20022(Corpus("messages/mx_pacs.008.001.12_0013.xml")));
  ASSERT_THAT(txs, SizeIs(1));
  EXPECT_EQ(txs[0].amount, M("136500", "USD"));
  EXPECT_EQ(txs[0].settled_amount, M("136490", "USD"));
  EXPECT_EQ(txs[0].charges, "SHA");
  EXPECT_EQ(txs[0].event_time, T("2021-05-11T05:23:41.960Z"));
  EXPECT_EQ(txs[0].originator.name, "GB Engineering");  // trailing space trimmed
}

// prowide's pacs.009.001.07 in a <message> wrapper: no UETR, a CreDtTm without offset, agents in
// GrpHdr and in the transaction, a name over two lines.
TEST(Iso20022Fields, Pacs009Version07) {
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                       ParseIso20022(Corpus("messages/mx_pacs.009.001.07_0001.xml")));
  ASSERT_THAT(txs, SizeIs(1));
  const Transaction& tx = txs[0];
  EXPECT_EQ(tx.message_type, "pacs.009.001.07");
  EXPECT_EQ(tx.id, "SDFASDF2323/223234");  // MsgId/TxId
  EXPECT_EQ(tx.uetr, "");
  EXPECT_EQ(tx.reference, "ASDFASDF2342");
  EXPECT_EQ(tx.event_time, T("2018-04-30T16:35:54Z"));  // no offset: UTC
  EXPECT_EQ(tx.amount, M("22423", "USD"));
  EXPECT_EQ(tx.value_date, "2018-04-30");  // the transaction's, not GrpHdr's 2018-05-29
  EXPECT_EQ(tx.charges, "");
  // Financial institutions as parties: keyed by their BIC, their own bank.
  EXPECT_EQ(tx.originator.account_id, "SSTYPLP1XXX");
  EXPECT_EQ(tx.originator.name, "SDFGS SDFGD");
  EXPECT_EQ(tx.originator.bank_id, "SSTYPLP1XXX");
  EXPECT_EQ(tx.originator.country, "PL");
  EXPECT_EQ(tx.beneficiary.account_id, "HDSBKHPPXXX");
  EXPECT_EQ(tx.beneficiary.name, "SDFG SDFGSDFG");
  EXPECT_EQ(tx.beneficiary.bank_id, "HDSBKHPPXXX");
  EXPECT_EQ(tx.beneficiary.country, "KH");
  EXPECT_THAT(
      tx.agents,
      ElementsAre(A(AgentRole::kInstructing, "DDPPPLP1XXX", "PL"),
                  A(AgentRole::kInstructed, "HHPEIT21XXX", "IT"),
                  A(AgentRole::kIntermediary, "RRPLZAJJXXX", "ZA"),
                  A(AgentRole::kAccountWithInstitution, "CTZNCA8V001", "CA", "FFDFDFD DFDFDF"),
                  A(AgentRole::kBeneficiaryInstitution, "HDSBKHPPXXX", "KH", "SDFG SDFGSDFG")));
}

// CBPR+ pacs.009.001.11 COV: the banks are the parties, the underlying customers the ultimate
// ones.
TEST(Iso20022Fields, Pacs009Cover) {
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                       ParseIso20022(Corpus("messages/mx_pacs.009.001.11_0007.xml")));
  ASSERT_THAT(txs, SizeIs(1));
  const Transaction& tx = txs[0];
  EXPECT_EQ(tx.id, "7a562c67-ca16-48ba-b074-65581be6f001");
  EXPECT_EQ(tx.reference, "pacs008EndToEndId-001");
  EXPECT_EQ(tx.event_time, T("2022-10-20T08:45:00Z"));  // 09:45+01:00
  EXPECT_EQ(tx.amount, M("65784.32", "EUR"));
  EXPECT_EQ(tx.originator.account_id, "CLYDGB2S");
  EXPECT_EQ(tx.originator.bank_id, "CLYDGB2S");  // its own BIC, not DbtrAgt's
  EXPECT_EQ(tx.originator.country, "GB");
  EXPECT_EQ(tx.beneficiary.account_id, "CAIXESBB");
  EXPECT_EQ(tx.beneficiary.bank_id, "CAIXESBB");
  EXPECT_EQ(tx.beneficiary.country, "ES");
  ASSERT_TRUE(tx.ultimate_originator.has_value());
  EXPECT_EQ(tx.ultimate_originator->account_id, "25698745");
  EXPECT_EQ(tx.ultimate_originator->name, "A Debiter");
  EXPECT_THAT(tx.ultimate_originator->address, ElementsAre("High Street", "Epping"));
  EXPECT_EQ(tx.ultimate_originator->country, "GB");
  EXPECT_EQ(tx.ultimate_originator->bank_id, "CLYDGB2S");
  ASSERT_TRUE(tx.ultimate_beneficiary.has_value());
  EXPECT_EQ(tx.ultimate_beneficiary->account_id, "65479512");
  EXPECT_EQ(tx.ultimate_beneficiary->name, "B Creditor Co");
  EXPECT_EQ(tx.ultimate_beneficiary->country, "ES");
  EXPECT_EQ(tx.ultimate_beneficiary->bank_id, "CAIXESBB");
  EXPECT_THAT(tx.agents, ElementsAre(A(AgentRole::kInstructing, "BOFSGB2L", "GB"),
                                     A(AgentRole::kInstructed, "BSCHESMM", "ES"),
                                     A(AgentRole::kOrderingInstitution, "BOFSGB2L", "GB"),
                                     A(AgentRole::kAccountWithInstitution, "BSCHESMM", "ES"),
                                     A(AgentRole::kBeneficiaryInstitution, "CAIXESBB", "ES")));
}

// ---------------------------------------------------------------------------------------------
// Hand-made documents.

constexpr std::string_view kPacs008Ns = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08";

// One CdtTrfTxInf; each member is the XML of one element (or empty to leave it out).
struct TxSpec {
  std::string payment_id =
      "<PmtId><InstrId>INSTR-1</InstrId><EndToEndId>E2E-1</EndToEndId>"
      "<UETR>8a562c67-ca16-48ba-b074-65581be6f011</UETR></PmtId>";
  std::string settlement_amount = R"(<IntrBkSttlmAmt Ccy="EUR">1500.25</IntrBkSttlmAmt>)";
  std::string settlement_date = "<IntrBkSttlmDt>2024-03-01</IntrBkSttlmDt>";
  std::string instructed_amount;
  std::string charges = "<ChrgBr>SHAR</ChrgBr>";
  std::string debtor =
      "<Dbtr><Nm>Alpha GmbH</Nm><PstlAdr><StrtNm>Hauptstrasse</StrtNm><BldgNb>1</BldgNb>"
      "<PstCd>60311</PstCd><TwnNm>Frankfurt</TwnNm><Ctry>DE</Ctry></PstlAdr></Dbtr>";
  std::string debtor_account = "<DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>";
  std::string debtor_agent =
      "<DbtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></DbtrAgt>";
  std::string creditor_agent =
      "<CdtrAgt><FinInstnId><BICFI>NWBKGB2LXXX</BICFI></FinInstnId></CdtrAgt>";
  std::string creditor = "<Cdtr><Nm>Beta Ltd</Nm></Cdtr>";
  std::string creditor_account =
      "<CdtrAcct><Id><IBAN>GB82WEST12345698765432</IBAN></Id></CdtrAcct>";
  std::string rest;  // after CdtrAcct: UltmtCdtr, Purp, RmtInf, ...
};

std::string TxXml(const TxSpec& s) {
  return absl::StrCat("<CdtTrfTxInf>", s.payment_id, s.settlement_amount, s.settlement_date,
                      s.instructed_amount, s.charges, s.debtor, s.debtor_account, s.debtor_agent,
                      s.creditor_agent, s.creditor, s.creditor_account, s.rest, "</CdtTrfTxInf>");
}

std::string Pacs008Of(const std::vector<std::string>& transactions, int number = -1,
                      std::string_view created = "2024-03-01T10:15:30+01:00") {
  std::string xml = absl::StrCat(
      R"(<?xml version="1.0" encoding="UTF-8"?>)", "\n", R"(<Document xmlns=")", ToAbsl(kPacs008Ns),
      R"("><FIToFICstmrCdtTrf><GrpHdr><MsgId>MSG-1</MsgId><CreDtTm>)", ToAbsl(created),
      "</CreDtTm><NbOfTxs>", number >= 0 ? number : static_cast<int>(transactions.size()),
      "</NbOfTxs><SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr>");
  for (const std::string& t : transactions) xml += t;
  xml += "</FIToFICstmrCdtTrf></Document>";
  return xml;
}

std::string Pacs008(const TxSpec& spec) { return Pacs008Of({TxXml(spec)}); }

absl::StatusOr<Transaction> ParseOne(const std::string& xml) {
  absl::StatusOr<std::vector<Transaction>> txs = ParseIso20022(xml);
  if (!txs.ok()) return txs.status();
  EXPECT_THAT(*txs, SizeIs(1));
  return (*txs)[0];
}

// The structure every hand-made test varies.
TEST(Iso20022, HandMadeBaseline) {
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(TxSpec())));
  EXPECT_EQ(tx.id, "8a562c67-ca16-48ba-b074-65581be6f011");
  EXPECT_EQ(tx.reference, "E2E-1");
  EXPECT_EQ(tx.event_time, T("2024-03-01T09:15:30Z"));
  EXPECT_EQ(tx.amount, M("1500.25", "EUR"));
  EXPECT_EQ(tx.charges, "SHA");
  EXPECT_EQ(tx.originator.account_id, "DE89370400440532013000");
  EXPECT_THAT(tx.originator.address, ElementsAre("Hauptstrasse 1", "60311 Frankfurt"));
  EXPECT_EQ(tx.originator.country, "DE");
  // No address: the country of the IBAN.
  EXPECT_EQ(tx.beneficiary.account_id, "GB82WEST12345698765432");
  EXPECT_EQ(tx.beneficiary.country, "GB");
  EXPECT_THAT(tx.beneficiary.address, IsEmpty());
  EXPECT_THAT(tx.agents, ElementsAre(A(AgentRole::kOrderingInstitution, "COBADEFFXXX", "DE"),
                                     A(AgentRole::kAccountWithInstitution, "NWBKGB2LXXX", "GB")));
}

TEST(Iso20022, SeveralTransactionsInOrder) {
  std::vector<std::string> txs;
  for (int i = 1; i <= 3; ++i) {
    TxSpec s;
    s.payment_id = absl::StrCat("<PmtId><EndToEndId>E2E-", i, "</EndToEndId></PmtId>");
    s.settlement_amount =
        absl::StrCat(R"(<IntrBkSttlmAmt Ccy="USD">)", i, "00.00</IntrBkSttlmAmt>");
    txs.push_back(TxXml(s));
  }
  ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> parsed, ParseIso20022(Pacs008Of(txs)));
  ASSERT_THAT(parsed, SizeIs(3));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(parsed[i].id, absl::StrCat("MSG-1/E2E-", i + 1));  // no UETR: MsgId/EndToEndId
    EXPECT_EQ(parsed[i].reference, absl::StrCat("E2E-", i + 1));
    EXPECT_EQ(parsed[i].amount, M(absl::StrCat(i + 1, "00"), "USD"));
  }
}

// Without a UETR the id is MsgId and the first of TxId, InstrId, EndToEndId (not NOTPROVIDED),
// the transaction's position.
TEST(Iso20022, IdWithoutUetr) {
  const struct {
    std::string payment_id;
    std::string id;
    std::string reference;
  } cases[] = {
      {"<PmtId><InstrId>I</InstrId><EndToEndId>E</EndToEndId><TxId>T</TxId></PmtId>", "MSG-1/T",
       "E"},
      {"<PmtId><InstrId>I</InstrId><EndToEndId>E</EndToEndId></PmtId>", "MSG-1/I", "E"},
      {"<PmtId><EndToEndId>NOTPROVIDED</EndToEndId><InstrId>I</InstrId></PmtId>", "MSG-1/I", "I"},
      {"<PmtId><EndToEndId>NOTPROVIDED</EndToEndId></PmtId>", "MSG-1/1", ""},
  };
  for (const auto& c : cases) {
    TxSpec s;
    s.payment_id = c.payment_id;
    ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
    EXPECT_EQ(tx.id, c.id) << c.payment_id;
    EXPECT_EQ(tx.reference, c.reference) << c.payment_id;
  }
}

// The identifiers that make the id: no control characters, at most 35 characters (Max35Text).
TEST(Iso20022, Identifiers) {
  TxSpec s;
  s.payment_id = "<PmtId><EndToEndId>E2E\n2</EndToEndId></PmtId>";
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PmtId/EndToEndId: contains a control character")));
  s.payment_id = absl::StrCat("<PmtId><TxId>", std::string(36, 'T'), "</TxId></PmtId>");
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PmtId/TxId: is 36 characters, more than 35")));
  // 35 characters, some of two bytes.
  s.payment_id = absl::StrCat("<PmtId><TxId>", std::string(30, 'T'),
                              "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9</TxId></PmtId>");
  EXPECT_OK(ParseIso20022(Pacs008(s)));
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(Pacs008(TxSpec()), {{"MSG-1", "MSG\t1"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("GrpHdr/MsgId: contains a control character")));
}

// Every element of the template with the prefix "p:" bound on an enclosing wrapper.
TEST(Iso20022, PrefixDeclaredOnAnAncestor) {
  std::string document = Pacs008(TxSpec());
  document = document.substr(document.find("<Document"));
  document = absl::StrReplaceAll(document, {{"</", "</p:"}, {"<", "<p:"}, {"<p:/p:", "</p:"}});
  document = absl::StrReplaceAll(document,
                                 {{absl::StrCat(R"( xmlns=")", ToAbsl(kPacs008Ns), R"(")"), ""}});
  const std::string xml =
      absl::StrCat(R"(<w:Wrapper xmlns:w="urn:example:wrapper" xmlns:p=")", ToAbsl(kPacs008Ns),
                   R"("><w:Inner>)", document, "</w:Inner></w:Wrapper>");
  ASSERT_THAT(xml, HasSubstr("<p:IntrBkSttlmAmt Ccy="));
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(xml));
  EXPECT_EQ(tx.amount, M("1500.25", "EUR"));
  EXPECT_EQ(tx.originator.name, "Alpha GmbH");
}

TEST(Iso20022, ElementsOfAnotherNamespaceAreNotMatched) {
  // The same local name in a foreign namespace, beside the real element: ignored.
  TxSpec s;
  s.settlement_amount = absl::StrCat(
      R"(<x:IntrBkSttlmAmt xmlns:x="urn:example:other" Ccy="XYZ">-1</x:IntrBkSttlmAmt>)",
      s.settlement_amount);
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.amount, M("1500.25", "EUR"));
  // Alone, by a default namespace declared on it: missing.
  s.settlement_amount = R"(<IntrBkSttlmAmt xmlns="urn:example:other" Ccy="EUR">1</IntrBkSttlmAmt>)";
  EXPECT_THAT(
      ParseIso20022(Pacs008(s)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("/Document/FIToFICstmrCdtTrf/CdtTrfTxInf/IntrBkSttlmAmt: missing")));
  // A prefix rebound on an inner element.
  s.settlement_amount =
      R"(<q:IntrBkSttlmAmt xmlns:q="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08" Ccy="EUR">)"
      "7</q:IntrBkSttlmAmt>";
  ASSERT_OK_AND_ASSIGN(const Transaction rebound, ParseOne(Pacs008(s)));
  EXPECT_EQ(rebound.amount, M("7", "EUR"));
}

TEST(Iso20022, NumberOfTransactionsMustMatch) {
  EXPECT_THAT(ParseIso20022(Pacs008Of({TxXml(TxSpec()), TxXml(TxSpec())}, 3)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/Document/FIToFICstmrCdtTrf/GrpHdr/NbOfTxs: says 3 transactions, "
                                 "the message has 2")));
  EXPECT_THAT(ParseIso20022(Pacs008Of({}, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("CdtTrfTxInf: missing")));
}

TEST(Iso20022, BadAmounts) {
  const struct {
    std::string element;
    std::string why;
  } cases[] = {
      {R"(<IntrBkSttlmAmt Ccy="XYZ">1</IntrBkSttlmAmt>)", R"(currency "XYZ" is not an ISO 4217)"},
      // Bitcoin is a vigil asset code, not ISO 4217.
      {R"(<IntrBkSttlmAmt Ccy="XBT">1</IntrBkSttlmAmt>)", R"(currency "XBT" is not an ISO 4217)"},
      {R"(<IntrBkSttlmAmt>1</IntrBkSttlmAmt>)", "has no Ccy attribute"},
      {R"(<IntrBkSttlmAmt Ccy="JPY">1.5</IntrBkSttlmAmt>)", "amount 1.5 has more than 0 decimals"},
      {R"(<IntrBkSttlmAmt Ccy="EUR">1.505</IntrBkSttlmAmt>)",
       "amount 1.505 has more than 2 decimals"},
      {R"(<IntrBkSttlmAmt Ccy="EUR">-5.00</IntrBkSttlmAmt>)", "amount -5.00 is negative"},
      // ISO 20022 writes a decimal point, never a comma.
      {R"(<IntrBkSttlmAmt Ccy="EUR">5,00</IntrBkSttlmAmt>)",
       "amount '5,00' has invalid character ','"},
      {R"(<IntrBkSttlmAmt Ccy="EUR"></IntrBkSttlmAmt>)", "amount is empty"},
  };
  for (const auto& c : cases) {
    TxSpec s;
    s.settlement_amount = c.element;
    EXPECT_THAT(ParseIso20022(Pacs008(s)),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("/CdtTrfTxInf/IntrBkSttlmAmt: ", c.why))))
        << c.element;
  }
  // Trailing zeros beyond the minor unit are the same amount.
  TxSpec s;
  s.settlement_amount = R"(<IntrBkSttlmAmt Ccy="JPY">100.00</IntrBkSttlmAmt>)";
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.amount, M("100", "JPY"));
}

TEST(Iso20022, BadBic) {
  TxSpec s;
  s.debtor_agent = "<DbtrAgt><FinInstnId><BICFI>cobadeff</BICFI></FinInstnId></DbtrAgt>";
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/CdtTrfTxInf/DbtrAgt/FinInstnId/BICFI: BIC \"cobadeff\"")));
  s = TxSpec();
  s.creditor = "<Cdtr><Nm>B</Nm><Id><OrgId><AnyBIC>NWBK2L</AnyBIC></OrgId></Id></Cdtr>";
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/Cdtr/Id/OrgId/AnyBIC: BIC \"NWBK2L\" has 6 characters")));
}

TEST(Iso20022, BadIbanCheckDigits) {
  TxSpec s;
  s.debtor_account = "<DbtrAcct><Id><IBAN>DE88370400440532013000</IBAN></Id></DbtrAcct>";
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/CdtTrfTxInf/DbtrAcct/Id/IBAN: IBAN \"DE88370400440532013000\": "
                                 "the check digits 88 are wrong")));
}

TEST(Iso20022, BadDates) {
  for (const std::string date : {"2024-02-30", "2024-3-1", "01.03.2024", ""}) {
    TxSpec s;
    s.settlement_date = absl::StrCat("<IntrBkSttlmDt>", date, "</IntrBkSttlmDt>");
    EXPECT_THAT(ParseIso20022(Pacs008(s)), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    HasSubstr("/CdtTrfTxInf/IntrBkSttlmDt: date")))
        << date;
  }
}

// The UETR is checked as the MT reader checks field 121 (swift_syntax.h, NormalizeUetr): the same
// payment is accepted in both formats.
TEST(Iso20022, Uetr) {
  const auto with_uetr = [](std::string_view uetr) {
    TxSpec s;
    s.payment_id =
        absl::StrCat("<PmtId><EndToEndId>E</EndToEndId><UETR>", ToAbsl(uetr), "</UETR></PmtId>");
    return Pacs008(s);
  };
  ASSERT_OK_AND_ASSIGN(const Transaction tx,
                       ParseOne(with_uetr(" 8A562C67-CA16-48BA-B074-65581BE6F011 ")));
  EXPECT_EQ(tx.uetr, "8a562c67-ca16-48ba-b074-65581be6f011");
  EXPECT_EQ(tx.id, tx.uetr);
  // The version and variant digits are not checked (the schema's UUIDv4Identifier asks for 4
  // and 8, 9, a or b), as in MT: test and migration traffic carries other UUIDs.
  for (const std::string_view other : {
           "8a562c67-ca16-18ba-b074-65581be6f011",  // version 1
           "8a562c67-ca16-48ba-c074-65581be6f011",  // variant c
           "00000000-0000-0000-0000-000000000000",  // the nil UUID
       }) {
    ASSERT_OK_AND_ASSIGN(const Transaction accepted, ParseOne(with_uetr(other)));
    EXPECT_EQ(accepted.uetr, other);
    EXPECT_EQ(accepted.uetr, NormalizeUetr(other).value_or("")) << "as MT reads it";
  }
  for (const std::string_view bad : {
           "8a562c67-ca16-48ba-b074-65581be6f01",     // 35 characters
           "8a562c67-ca16-48ba-b074-65581be6f01g",    // not hexadecimal
           "8a562c67ca16-48ba-b074-65581be6f0111",    // dash misplaced
           "{8a562c67-ca16-48ba-b074-65581be6f011}",  // braces
           "8a562c67ca1648bab07465581be6f011",        // no dashes
       }) {
    EXPECT_THAT(ParseIso20022(with_uetr(bad)),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("/CdtTrfTxInf/PmtId/UETR: UETR \"", ToAbsl(bad)))))
        << bad;
    EXPECT_FALSE(NormalizeUetr(bad).ok()) << "refused by MT too: " << bad;
  }
}

TEST(Iso20022, MissingSettlementAmountNamesTheTransaction) {
  TxSpec bad;
  bad.settlement_amount.clear();
  EXPECT_THAT(
      ParseIso20022(Pacs008Of({TxXml(TxSpec()), TxXml(bad), TxXml(TxSpec())})),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/IntrBkSttlmAmt: missing (mandatory)"));
}

TEST(Iso20022, MissingMandatoryElements) {
  TxSpec s;
  s.debtor.clear();
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("CdtTrfTxInf/Dbtr: missing")));
  s = TxSpec();
  s.creditor = "<Cdtr></Cdtr>";
  s.creditor_account.clear();
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CdtTrfTxInf/Cdtr: names neither an account, a BIC nor a name")));
  std::string no_msg_id = absl::StrReplaceAll(Pacs008(TxSpec()), {{"<MsgId>MSG-1</MsgId>", ""}});
  EXPECT_THAT(ParseIso20022(no_msg_id),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("GrpHdr/MsgId: missing")));
}

// A party without an account is keyed by its bank and name (party_key.h).
TEST(Iso20022, PartyKeyWithoutAccount) {
  TxSpec s;
  s.creditor_account.clear();
  s.creditor = "<Cdtr><Nm>  Beta   Ltd </Nm></Cdtr>";
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.beneficiary.account_id, "NWBKGB2LXXX:BETA LTD");
  EXPECT_EQ(tx.beneficiary.name, "Beta   Ltd");  // inner text kept
  EXPECT_EQ(tx.beneficiary.country, "GB");       // CdtrAgt's BIC
  s.creditor = "<Cdtr><Nm>Beta</Nm><Id><OrgId><AnyBIC>BETAGB22</AnyBIC></OrgId></Id></Cdtr>";
  ASSERT_OK_AND_ASSIGN(const Transaction with_bic, ParseOne(Pacs008(s)));
  EXPECT_EQ(with_bic.beneficiary.account_id, "BETAGB22");
}

// A pacs.008 customer identified by a BIC (Id/OrgId/AnyBIC) is not a bank: its bank stays the
// agent's BICFI; the AnyBIC keys it when it has no account (party_key.h), and gives its country
// when its address has none.
TEST(Iso20022, Pacs008DebtorWithAnyBicKeepsItsAgentAsBank) {
  TxSpec s;
  s.debtor = "<Dbtr><Nm>Alpha GmbH</Nm><Id><OrgId><AnyBIC>ALPHCHZZ</AnyBIC></OrgId></Id></Dbtr>";
  s.debtor_account.clear();
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.originator.account_id, "ALPHCHZZ");
  EXPECT_EQ(tx.originator.bank_id, "COBADEFFXXX");  // DbtrAgt's BICFI, not the AnyBIC
  EXPECT_EQ(tx.originator.country, "CH");           // the AnyBIC's, before DbtrAgt's DE
  EXPECT_EQ(tx.originator.name, "Alpha GmbH");
  // With an account, the account keys it; the bank is still DbtrAgt's.
  s.debtor_account = "<DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>";
  ASSERT_OK_AND_ASSIGN(const Transaction with_account, ParseOne(Pacs008(s)));
  EXPECT_EQ(with_account.originator.account_id, "DE89370400440532013000");
  EXPECT_EQ(with_account.originator.bank_id, "COBADEFFXXX");
  // Without an agent, no bank is known: the AnyBIC is not taken for one.
  s.debtor_agent.clear();
  ASSERT_OK_AND_ASSIGN(const Transaction no_agent, ParseOne(Pacs008(s)));
  EXPECT_EQ(no_agent.originator.bank_id, "");
}

TEST(Iso20022, ChargeBearers) {
  const std::pair<std::string, std::string> cases[] = {
      {"DEBT", "OUR"}, {"CRED", "BEN"}, {"SHAR", "SHA"}, {"SLEV", "SHA"}, {"", ""}};
  for (const auto& [code, charges] : cases) {
    TxSpec s;
    s.charges = code.empty() ? "" : absl::StrCat("<ChrgBr>", code, "</ChrgBr>");
    ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
    EXPECT_EQ(tx.charges, charges) << code;
  }
  TxSpec s;
  s.charges = "<ChrgBr>BOTH</ChrgBr>";
  EXPECT_THAT(ParseIso20022(Pacs008(s)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ChrgBr: charge bearer")));
}

TEST(Iso20022, CreationTime) {
  const struct {
    std::string created;
    std::string utc;
  } cases[] = {
      {"2024-03-01T10:15:30Z", "2024-03-01T10:15:30Z"},
      {"2024-03-01T10:15:30-05:30", "2024-03-01T15:45:30Z"},
      {"2024-03-01T10:15:30", "2024-03-01T10:15:30Z"},  // no offset: UTC
      {"2024-03-01T10:15:30.123456789+00:00", "2024-03-01T10:15:30.123456Z"},
      // Not a date and time: the settlement date at midnight UTC.
      {"CURRENT_TIME", "2024-03-01T00:00:00Z"},
      {"2024-13-01T10:15:30Z", "2024-03-01T00:00:00Z"},
  };
  for (const auto& c : cases) {
    ASSERT_OK_AND_ASSIGN(const std::vector<Transaction> txs,
                         ParseIso20022(Pacs008Of({TxXml(TxSpec())}, -1, c.created)));
    EXPECT_EQ(txs[0].event_time, T(c.utc)) << c.created;
  }
  TxSpec no_date;
  no_date.settlement_date.clear();
  EXPECT_THAT(ParseIso20022(Pacs008Of({TxXml(no_date)}, -1, "CURRENT_TIME")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("GrpHdr/CreDtTm: \"CURRENT_TIME\" is not a date and time")));
}

TEST(Iso20022, PurposeRemittancePriorityUltimateParties) {
  TxSpec s;
  s.payment_id =
      "<PmtId><EndToEndId>E</EndToEndId></PmtId><PmtTpInf><InstrPrty>HIGH</InstrPrty>"
      "</PmtTpInf>";
  s.instructed_amount = R"(<InstdAmt Ccy="USD">1700.00</InstdAmt>)";
  s.debtor = absl::StrCat(
      "<UltmtDbtr><Nm>Parent AG</Nm><Id><OrgId><LEI>5299009QBLNVBZSHJE07</LEI>"
      "</OrgId></Id><CtryOfRes>CH</CtryOfRes></UltmtDbtr>",
      s.debtor);
  s.creditor_account = absl::StrCat(s.creditor_account,
                                    "<UltmtCdtr><Nm>Gamma</Nm><PstlAdr><AdrLine>"
                                    "1 Road</AdrLine><Ctry>IE</Ctry></PstlAdr>"
                                    "</UltmtCdtr>");
  s.rest = "<Purp><Cd>SUPP</Cd></Purp><RmtInf><Ustrd>INV 1</Ustrd><Ustrd> INV 2 </Ustrd></RmtInf>";
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.priority, Priority::kP0);
  EXPECT_EQ(tx.amount, M("1700", "USD"));
  EXPECT_EQ(tx.settled_amount, M("1500.25", "EUR"));  // another currency
  EXPECT_EQ(tx.purpose, "SUPP");
  EXPECT_EQ(tx.remittance, "INV 1 INV 2");
  ASSERT_TRUE(tx.ultimate_originator.has_value());
  EXPECT_EQ(tx.ultimate_originator->name, "Parent AG");
  EXPECT_EQ(tx.ultimate_originator->account_id, "5299009QBLNVBZSHJE07");
  EXPECT_EQ(tx.ultimate_originator->country, "CH");
  ASSERT_TRUE(tx.ultimate_beneficiary.has_value());
  EXPECT_EQ(tx.ultimate_beneficiary->account_id, "");
  EXPECT_THAT(tx.ultimate_beneficiary->address, ElementsAre("1 Road"));
  EXPECT_EQ(tx.ultimate_beneficiary->country, "IE");
}

// The chain in role order, whatever the order of the elements; the AppHdr supplies the
// instructing and instructed agents the Document leaves out.
TEST(Iso20022, AgentsAndApplicationHeader) {
  TxSpec s;
  s.debtor_agent = absl::StrCat(
      "<IntrmyAgt2><FinInstnId><BICFI>CHASUS33</BICFI></FinInstnId></IntrmyAgt2>"
      "<IntrmyAgt1><FinInstnId><BICFI>DEUTDEFF</BICFI><Nm>DB</Nm><PstlAdr><Ctry>LU</Ctry>"
      "</PstlAdr></FinInstnId></IntrmyAgt1><IntrmyAgt1Acct><Id><Othr><Id>NOSTRO-9</Id></Othr>"
      "</Id></IntrmyAgt1Acct>",
      s.debtor_agent, "<DbtrAgtAcct><Id><Othr><Id>ACC-7</Id></Othr></Id></DbtrAgtAcct>");
  // CreDtTm a placeholder: the AppHdr's CreDt is the event time.
  const std::string document = Pacs008Of({TxXml(s)}, -1, "CURRENT_TIME");
  const std::string xml = absl::StrCat(
      R"(<Envelope xmlns="urn:swift:xsd:envelope"><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:)"
      R"(head.001.001.02"><Fr><FIId><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></FIId>)"
      "</Fr><To><FIId><FinInstnId><BICFI>NWBKGB2LXXX</BICFI></FinInstnId></FIId></To>"
      "<BizMsgIdr>B</BizMsgIdr><MsgDefIdr>pacs.008.001.08</MsgDefIdr>"
      "<CreDt>2024-03-01T10:15:30Z</CreDt></AppHdr>",
      document.substr(document.find("<Document")), "</Envelope>");
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(xml));
  EXPECT_EQ(tx.event_time, T("2024-03-01T10:15:30Z"));
  EXPECT_THAT(tx.agents,
              ElementsAre(A(AgentRole::kInstructing, "COBADEFFXXX", "DE"),
                          A(AgentRole::kInstructed, "NWBKGB2LXXX", "GB"),
                          A(AgentRole::kOrderingInstitution, "COBADEFFXXX", "DE", "", "ACC-7"),
                          A(AgentRole::kIntermediary, "DEUTDEFF", "LU", "DB", "NOSTRO-9"),
                          A(AgentRole::kIntermediary, "CHASUS33", "US"),
                          A(AgentRole::kAccountWithInstitution, "NWBKGB2LXXX", "GB")));
}

TEST(Iso20022, UnsupportedAndUnknownNamespaces) {
  const std::string document = Pacs008(TxSpec());
  const auto with_ns = [&](std::string_view ns) {
    return absl::StrReplaceAll(document, {{ToAbsl(kPacs008Ns), ToAbsl(ns)}});
  };
  EXPECT_THAT(ParseIso20022(with_ns("urn:iso:std:iso:20022:tech:xsd:pacs.008.001.06")),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "unsupported message type pacs.008.001.06 (vigil reads pacs.008 and "
                       "pacs.009, version 001.07 and later)"));
  EXPECT_THAT(ParseIso20022(with_ns("urn:iso:std:iso:20022:tech:xsd:camt.053.001.08")),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("unsupported message type camt.053.001.08")));
  EXPECT_THAT(ParseIso20022(with_ns("urn:example:not-iso")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("namespace \"urn:example:not-iso\" names no ISO 20022")));
  // pacs.009's root element in a pacs.008 namespace.
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(document, {{"FIToFICstmrCdtTrf", "FICdtTrf"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "/Document/FIToFICstmrCdtTrf: missing (mandatory)"));
}

TEST(Iso20022, DocumentStructure) {
  const std::string document = Pacs008(TxSpec());
  const std::string bare = document.substr(document.find("<Document"));
  EXPECT_THAT(ParseIso20022(absl::StrCat("<a>", bare, bare, "</a>")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a second Document")));
  EXPECT_THAT(ParseIso20022("<a><b/></a>"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no ISO 20022 Document")));
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(bare, {{"<Document xmlns=", "<p:Document x="},
                                                       {"</Document>", "</p:Document>"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("uses the undeclared namespace prefix \"p\"")));
}

// ---------------------------------------------------------------------------------------------
// Hardening.

TEST(Iso20022Hardening, DoctypeWithInternalEntitiesIsRefused) {
  std::string xml = R"(<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
)";
  const std::string document = Pacs008(TxSpec());
  xml += absl::StrReplaceAll(document.substr(document.find("<Document")),
                             {{"<Nm>Alpha GmbH</Nm>", "<Nm>&lol3;</Nm>"}});
  EXPECT_THAT(ParseIso20022(xml),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DOCTYPE")));
}

TEST(Iso20022Hardening, ExternalEntityIsRefused) {
  const std::string document = Pacs008(TxSpec());
  const std::string xml =
      absl::StrCat(R"(<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>)",
                   absl::StrReplaceAll(document.substr(document.find("<Document")),
                                       {{"<Nm>Beta Ltd</Nm>", "<Nm>&xxe;</Nm>"}}));
  const absl::StatusOr<std::vector<Transaction>> result = ParseIso20022(xml);
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DOCTYPE")));
  EXPECT_THAT(std::string(result.status().message()), Not(HasSubstr("root:")));
  // A DOCTYPE naming an external DTD alone is refused as well.
  EXPECT_THAT(ParseIso20022(absl::StrCat(R"(<!DOCTYPE Document SYSTEM "http://example.com/a.dtd">)",
                                         document.substr(document.find("<Document")))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DOCTYPE")));
}

TEST(Iso20022Hardening, DeepNestingIsRefusedWithoutRecursion) {
  std::string xml;
  constexpr int kLevels = 100000;
  for (int i = 0; i < kLevels; ++i) xml += "<a>";
  for (int i = 0; i < kLevels; ++i) xml += "</a>";
  EXPECT_THAT(ParseIso20022(xml),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper than 64")));
}

// Elements under a SplmtryData envelope, nested to exactly the limit and one past it.
TEST(Iso20022Hardening, DepthLimitBoundary) {
  // Document 1, FIToFICstmrCdtTrf 2, CdtTrfTxInf 3, SplmtryData 4, Envlp 5, then <x> from 6.
  const auto nested = [](int levels) {
    TxSpec s;
    s.rest = "<SplmtryData><Envlp>";
    for (int i = 0; i < levels; ++i) s.rest += "<x>";
    for (int i = 0; i < levels; ++i) s.rest += "</x>";
    s.rest += "</Envlp></SplmtryData>";
    return Pacs008(s);
  };
  EXPECT_OK(ParseIso20022(nested(kMaxIso20022Depth - 5)));
  EXPECT_THAT(ParseIso20022(nested(kMaxIso20022Depth - 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper than 64")));
}

TEST(Iso20022Hardening, SizeLimit) {
  const std::string document = Pacs008(TxSpec());
  std::string xml = absl::StrCat("<!--", std::string(kMaxIso20022Bytes, 'x'), "-->", document);
  EXPECT_THAT(ParseIso20022(xml),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the limit is 4194304")));
  // Just under the limit: read.
  xml = absl::StrCat("<!--", std::string(kMaxIso20022Bytes - document.size() - 7, 'x'), "-->",
                     document);
  ASSERT_LE(xml.size(), kMaxIso20022Bytes);
  EXPECT_OK(ParseIso20022(xml));
}

TEST(Iso20022Hardening, MalformedInput) {
  const std::string document = Pacs008(TxSpec());
  EXPECT_THAT(ParseIso20022(""), StatusIs(absl::StatusCode::kInvalidArgument,
                                          "ISO 20022 message "
                                          "is empty"));
  EXPECT_THAT(ParseIso20022(document.substr(0, document.size() / 2)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("XML is not well-formed at byte offset")));
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(document, {{"</MsgId>", "</MsgID>"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Start-end tags mismatch")));
  // Text outside the root element, which pugixml alone would drop.
  for (const std::string& outside :
       {absl::StrCat("nm", document), absl::StrCat(document, "trailing"),
        absl::StrReplaceAll(document, {{"?>", "?><!-- c -->text"}})}) {
    EXPECT_THAT(ParseIso20022(outside),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("text outside the root")))
        << outside.substr(0, 80);
  }
  EXPECT_THAT(ParseIso20022("<!-- only a comment -->"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no ISO 20022 Document")));
  EXPECT_THAT(ParseIso20022(absl::StrCat(document, "<Document/>")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than one root")));
  EXPECT_THAT(ParseIso20022("just text"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("text outside the root")));
  // Bytes that are not UTF-8, and a control character.
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(document, {{"Alpha", "Alph\xE9"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not UTF-8")));
  EXPECT_THAT(ParseIso20022(absl::StrReplaceAll(document, {{"Alpha", std::string("Al\0ha", 5)}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("control character")));
}

TEST(Iso20022Hardening, BomCommentsAndEscapesAreAccepted) {
  const std::string document = Pacs008(TxSpec());
  const std::string xml =
      absl::StrCat("\xEF\xBB\xBF<!-- exported 2024-03-01 -->\n<?xml-stylesheet href=\"a\"?>",
                   absl::StrReplaceAll(document.substr(document.find("<Document")),
                                       {{"Alpha GmbH", "Alpha &amp; S\xC3\xB6hne"}}));
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(xml));
  EXPECT_EQ(tx.originator.name, "Alpha & S\xC3\xB6hne");
}

// A comment or CDATA section inside a text splits it in pugixml's tree; the reader joins the
// pieces, so that no part of a name escapes screening.
TEST(Iso20022Hardening, TextAroundCommentsAndCdataIsJoined) {
  TxSpec s;
  s.debtor = "<Dbtr><Nm>Alpha<!-- c --> Ltd<![CDATA[ & <Co>]]></Nm></Dbtr>";
  s.creditor = "<Cdtr><Nm><![CDATA[Beta]]><!-- c --> Corp</Nm></Cdtr>";
  ASSERT_OK_AND_ASSIGN(const Transaction tx, ParseOne(Pacs008(s)));
  EXPECT_EQ(tx.originator.name, "Alpha Ltd & <Co>");
  EXPECT_EQ(tx.beneficiary.name, "Beta Corp");
  s = TxSpec();
  s.creditor = "<Cdtr><Nm><![CDATA[Beta]]></Nm></Cdtr>";
  ASSERT_OK_AND_ASSIGN(const Transaction cdata, ParseOne(Pacs008(s)));
  EXPECT_EQ(cdata.beneficiary.name, "Beta");
}

TEST(Iso20022, LooksLikeXml) {
  EXPECT_TRUE(LooksLikeXml("<Document/>"));
  EXPECT_TRUE(LooksLikeXml("\xEF\xBB\xBF \r\n\t<?xml version=\"1.0\"?>"));
  EXPECT_FALSE(LooksLikeXml(""));
  EXPECT_FALSE(LooksLikeXml("\xEF\xBB\xBF"));
  EXPECT_FALSE(LooksLikeXml("{\"id\": \"<\"}"));
  EXPECT_FALSE(LooksLikeXml("{1:F01BANKBEBBAXXX0000000000}"));
  EXPECT_FALSE(LooksLikeXml("\xEF\xBB<a/>"));
}

}  // namespace
}  // namespace vigil
