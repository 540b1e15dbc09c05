#include "vigil/ingest/swift_mt_transaction.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::string Read(const std::string& relative) {
  return ::vigil::testing::ReadFile(::vigil::testing::TestDataPath("swift_mt/" + relative));
}

// A valid MT103 built by the tests; fields are replaced or removed to make the bad ones.
constexpr char kMt103[] =
    "{1:F01BANKBEBBAXXX0000000000}{2:I103DEUTDEFFXXXXU}"
    "{3:{108:REF}{121:8403C004-66B2-40FC-ACBA-9F11D1A4AD84}}{4:\r\n"
    ":20:REF-2025-0001\r\n"
    ":23B:CRED\r\n"
    ":26T:K90\r\n"
    ":32A:250827EUR7138,40\r\n"
    ":33B:USD8000,\r\n"
    ":36:0,8923\r\n"
    ":50K:/BE71096123456769\r\n"
    "ACME TRADING NV\r\n"
    "RUE DE LA LOI 1\r\n"
    "1000 BRUSSELS\r\n"
    ":52A:BANKBEBB\r\n"
    ":56A:/D/123456\r\n"
    "CITIUS33XXX\r\n"
    ":57D:HANDELSBANKEN\r\n"
    "STOCKHOLM\r\n"
    ":59F:/SE4550000000058398257466\r\n"
    "1/Nordic Timber\r\n"
    "1/AB\r\n"
    "2/Kungsgatan 2\r\n"
    "3/SE/Stockholm\r\n"
    ":70:INVOICE 4711\r\n"
    "TIMBER\r\n"
    ":71A:SHA\r\n"
    ":71F:EUR10,\r\n"
    "-}";

std::string With(std::string_view from, std::string_view to) {
  std::string text = kMt103;
  const size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ParseSwiftMtTest, MapsAnMt103FieldByField) {
  absl::StatusOr<Transaction> tx = ParseSwiftMt(kMt103);
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->message_type, "MT103");
  EXPECT_EQ(tx->id, "8403c004-66b2-40fc-acba-9f11d1a4ad84");
  EXPECT_EQ(tx->uetr, "8403c004-66b2-40fc-acba-9f11d1a4ad84");
  EXPECT_EQ(tx->reference, "REF-2025-0001");
  EXPECT_EQ(tx->value_date, "2025-08-27");
  EXPECT_EQ(FormatUtc(tx->event_time), "2025-08-27T00:00:00.000000Z");  // input: the value date
  EXPECT_EQ(tx->amount, *Money::Parse("8000", *Currency::FromCode("USD")));
  EXPECT_EQ(tx->amount.currency().code(), "USD");
  ASSERT_TRUE(tx->settled_amount.has_value());
  EXPECT_EQ(*tx->settled_amount, *Money::Parse("7138.40", *Currency::FromCode("EUR")));
  EXPECT_EQ(tx->charges, "SHA");
  EXPECT_EQ(tx->purpose, "K90");
  EXPECT_EQ(tx->remittance, "INVOICE 4711 TIMBER");
  EXPECT_EQ(tx->priority, Priority::kP0);  // block 2 priority U
  EXPECT_EQ(tx->payment_format, PaymentFormat::kWire);

  EXPECT_EQ(tx->originator.account_id, "BE71096123456769");
  EXPECT_EQ(tx->originator.name, "ACME TRADING NV");
  EXPECT_THAT(tx->originator.address, ElementsAre("RUE DE LA LOI 1", "1000 BRUSSELS"));
  EXPECT_EQ(tx->originator.country, "BE");  // from the IBAN
  EXPECT_EQ(tx->originator.bank_id, "BANKBEBB");

  EXPECT_EQ(tx->beneficiary.account_id, "SE4550000000058398257466");
  EXPECT_EQ(tx->beneficiary.name, "Nordic Timber AB");  // the 1/ lines joined
  EXPECT_THAT(tx->beneficiary.address, ElementsAre("Kungsgatan 2", "Stockholm"));
  EXPECT_EQ(tx->beneficiary.country, "SE");  // from line 3/
  EXPECT_EQ(tx->beneficiary.bank_id, "");    // 57D names the bank without a BIC

  ASSERT_EQ(tx->agents.size(), 5u);
  EXPECT_EQ(tx->agents[0], (Agent{AgentRole::kInstructing, "BANKBEBBXXX", "", "", "BE"}));
  EXPECT_EQ(tx->agents[1], (Agent{AgentRole::kInstructed, "DEUTDEFFXXX", "", "", "DE"}));
  EXPECT_EQ(tx->agents[2], (Agent{AgentRole::kOrderingInstitution, "BANKBEBB", "", "", "BE"}));
  EXPECT_EQ(tx->agents[3], (Agent{AgentRole::kIntermediary, "CITIUS33XXX", "123456", "", "US"}));
  EXPECT_EQ(tx->agents[4],
            (Agent{AgentRole::kAccountWithInstitution, "", "", "HANDELSBANKEN", ""}));
}

TEST(ParseSwiftMtTest, WithoutUetrTheIdIsTheSendersReference) {
  absl::StatusOr<Transaction> tx =
      ParseSwiftMt(With("{121:8403C004-66B2-40FC-ACBA-9F11D1A4AD84}", ""));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->id, "BANKBEBBXXX/REF-2025-0001");
  EXPECT_EQ(tx->uetr, "");
}

TEST(ParseSwiftMtTest, AnOutputMessageTakesItsEventTimeFromTheInputReference) {
  const std::string text =
      "{1:F01DEUTDEFFAXXX0000000000}{2:O1031101250826BANKBEBBAXXX54267818772508261101N}" +
      std::string(std::string_view(kMt103).substr(std::string_view(kMt103).find("{3:")));
  absl::StatusOr<Transaction> tx = ParseSwiftMt(text);
  ASSERT_OK(tx.status());
  EXPECT_EQ(FormatUtc(tx->event_time), "2025-08-26T11:01:00.000000Z");
  EXPECT_EQ(tx->agents[0].bic, "BANKBEBBXXX");
  EXPECT_EQ(tx->agents[1].bic, "DEUTDEFFXXX");
  EXPECT_EQ(tx->priority, Priority::kP1);
}

TEST(ParseSwiftMtTest, ACustomerWithoutAccountIsKeyedByItsBankAndName) {
  absl::StatusOr<Transaction> tx = ParseSwiftMt(With(":50K:/BE71096123456769\r\n", ":50K:"));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->originator.account_id, "BANKBEBB:ACME TRADING NV");
  EXPECT_EQ(tx->originator.country, "BE");  // the ordering institution's BIC
}

TEST(ParseSwiftMtTest, OptionAPartyIsItsBic) {
  absl::StatusOr<Transaction> tx =
      ParseSwiftMt(With(":50K:/BE71096123456769\r\nACME TRADING NV\r\nRUE DE LA LOI 1\r\n"
                        "1000 BRUSSELS\r\n",
                        ":50A:ACMEBEB1\r\n"));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->originator.account_id, "ACMEBEB1");
  EXPECT_EQ(tx->originator.bank_id, "BANKBEBB");  // a customer's bank is 52a, not its own BIC
  EXPECT_EQ(tx->originator.country, "BE");
}

// Each bad value is refused naming the block, the line, the tag and the reason.
TEST(ParseSwiftMtTest, RefusesBadContentNamingLineTagAndReason) {
  struct Case {
    std::string_view from, to, expected;
  };
  const Case cases[] = {
      {":32A:250827EUR7138,40", ":32A:250827XYZ7138,40",
       "line 5, field :32A: currency \"XYZ\" is not an ISO 4217 code"},
      {":32A:250827EUR7138,40", ":32A:250827EUR7138.40", "line 5, field :32A: amount"},
      {":32A:250827EUR7138,40", ":32A:250827JPY7138,40", "JPY has 0 decimals"},
      {":32A:250827EUR7138,40", ":32A:250230EUR7138,40", "has no day 30"},
      {":32A:250827EUR7138,40", ":32A:2508", "line 5, field :32A: expected date"},
      {":33B:USD8000,", ":33B:USD8000",
       "line 6, field :33B: amount \"8000\": needs a decimal comma"},
      {":71A:SHA", ":71A:XYZ", "field :71A: details of charges must be OUR, BEN or SHA"},
      {":20:REF-2025-0001", ":20:/REF", "line 2, field :20: a reference must not start"},
      {":20:REF-2025-0001", ":20:REF-2025-0001-TOO-LONG", "field :20: a reference is 1 to 16"},
      {":23B:CRED", ":23B:CR", "field :23B:"},
      {":36:0,8923", ":36:08923", "field :36: the exchange rate"},
      {":52A:BANKBEBB", ":52A:BANK1EBB", "line 12, field :52A: BIC"},
      {"ACME TRADING NV", "ACME TRADING NV @ HQ",
       "line 9, field :50K: character '@' at column 17 is outside the SWIFT X character set"},
      {"ACME TRADING NV",
       "ACME TR\xC3\x84"
       "DING",
       "character byte 0xc3 at column 8 is outside"},
      {"3/SE/Stockholm", "3/Stockholm", "line 21, field :59F: line 3/ must start with a country"},
      {"1/Nordic Timber\r\n1/AB", "9/Nordic Timber", "field :59F: option F lines start with 1/"},
      {"RUE DE LA LOI 1\r\n", "RUE DE LA LOI 1 AND A VERY LONG LINE OF TEXT\r\n",
       "line 10, field :50K: a line has 44 characters, more than 35"},
      {"TIMBER\r\n", "TIMBER\r\nA\r\nB\r\nC\r\n", "field :70: has more than 4 lines"},
      {":71F:EUR10,", ":58A:DEUTDEFF", "field :58A: is not a field of MT103"},
      {"{1:F01BANKBEBBAXXX", "{1:F01BANKB1BBAXXX",
       "SWIFT MT block 1: the sender's BIC \"BANKB1BBXXX\": character 6 must be a letter"},
      {"I103DEUTDEFFXXXXU", "I103DEUTD1FFXXXXU", "SWIFT MT block 2: the receiver's BIC"},
      {"{121:8403C004-66B2-40FC-ACBA-9F11D1A4AD84}", "{121:not-a-uuid}",
       "SWIFT MT block 3, field {121:}: UETR \"not-a-uuid\""},
  };
  for (const Case& c : cases) {
    const std::string text = With(c.from, c.to);
    ASSERT_NE(text, kMt103) << c.from;
    EXPECT_THAT(ParseSwiftMt(text).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.to;
  }
}

// An IBAN-shaped account with wrong check digits is a plain account: no country from it.
TEST(ParseSwiftMtTest, AnAccountFailingTheIbanCheckIsAPlainAccount) {
  absl::StatusOr<Transaction> tx = ParseSwiftMt(With("/BE71096123456769", "/NL72096123456769"));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->originator.account_id, "NL72096123456769");
  EXPECT_EQ(tx->originator.country, "BE");  // the ordering institution's BIC, not "NL"
}

TEST(ParseSwiftMtTest, BracesInsideAFieldAreCarried) {
  absl::StatusOr<Transaction> tx = ParseSwiftMt(With("/BE71096123456769", "/1234}5678"));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->originator.account_id, "1234}5678");
}

TEST(ParseSwiftMtTest, AnOtherMessageTypeIsUnsupported) {
  EXPECT_THAT(ParseSwiftMt(Read("messages/mt205_0001.fin")).status(),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("unsupported message type")));
}

// A bank-to-bank transfer: the ordering institution pays the beneficiary institution.
TEST(ParseSwiftMtTest, MapsAnMt202) {
  absl::StatusOr<Transaction> tx = ParseSwiftMt(Read("messages/mt202_0005.fin"));
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->message_type, "MT202");
  EXPECT_FALSE(tx->originator.account_id.empty());
  EXPECT_FALSE(tx->beneficiary.account_id.empty());
  EXPECT_FALSE(tx->ultimate_originator.has_value());
  bool beneficiary_institution = false;
  for (const Agent& a : tx->agents) {
    beneficiary_institution |= a.role == AgentRole::kBeneficiaryInstitution;
  }
  EXPECT_TRUE(beneficiary_institution);
}

// MT202COV: the banks are the parties, the underlying customers of sequence B the ultimate ones.
TEST(ParseSwiftMtTest, MapsAnMt202CovWithItsUnderlyingCustomers) {
  const std::string text =
      "{1:F01BOFSGB2LXXXX0000000000}{2:O2020925221020CLYDGB2SXXXX00000000002210200925N}"
      "{3:{119:COV}{121:7a562c67-ca16-48ba-b074-65581be6f001}}{4:\n"
      ":20:pacs9bizmsgidr01\n:21:pacs008EndToEnd+\n:32A:221020DKK591636,\n:52A:CLYDGB2S\n"
      ":57A:BSCHESMM\n:58A:BSCHGB2L\n:72:/INS/BOFSGB2L\n:50F:/NOTPROVIDED\n1/A Debiter\n"
      "2/High Street\n3/GB/Epping London\n:52A:CLYDGB2S\n:57A:BSCHGB2L\n:59F:1/B Creditor Co\n"
      "2/Las Ramblas\n3/ES/Barcelona\n:70:/INV/123\n-}";
  absl::StatusOr<Transaction> tx = ParseSwiftMt(text);
  ASSERT_OK(tx.status());
  EXPECT_EQ(tx->message_type, "MT202COV");
  EXPECT_EQ(tx->originator.account_id, "CLYDGB2S");
  EXPECT_EQ(tx->beneficiary.account_id, "BSCHGB2L");
  EXPECT_EQ(tx->beneficiary.country, "GB");
  EXPECT_EQ(FormatUtc(tx->event_time), "2022-10-20T09:25:00.000000Z");
  ASSERT_TRUE(tx->ultimate_originator.has_value());
  EXPECT_EQ(tx->ultimate_originator->name, "A Debiter");
  EXPECT_EQ(tx->ultimate_originator->account_id, "CLYDGB2S:A DEBITER");  // NOTPROVIDED
  EXPECT_EQ(tx->ultimate_originator->country, "GB");
  ASSERT_TRUE(tx->ultimate_beneficiary.has_value());
  EXPECT_EQ(tx->ultimate_beneficiary->name, "B Creditor Co");
  EXPECT_EQ(tx->ultimate_beneficiary->country, "ES");
  EXPECT_THAT(tx->ultimate_beneficiary->address, ElementsAre("Las Ramblas", "Barcelona"));
  EXPECT_EQ(tx->remittance, "/INV/123");
  // Sequence B's banks are not agents of the chain: sender, receiver, 52A, 57A, 58A.
  EXPECT_EQ(tx->agents.size(), 5u);
}

TEST(ParseSwiftMtTest, ReusesATransactionWithoutCarryingOldFields) {
  absl::StatusOr<SwiftMtMessage> first = SwiftMtMessage::Parse(kMt103);
  ASSERT_OK(first.status());
  const std::string mt202 = Read("messages/mt202_0005.fin");
  absl::StatusOr<SwiftMtMessage> second = SwiftMtMessage::Parse(mt202);
  ASSERT_OK(second.status());
  Transaction reused;
  ASSERT_OK(SwiftMtToTransaction(*first, &reused));
  ASSERT_OK(SwiftMtToTransaction(*second, &reused));
  absl::StatusOr<Transaction> fresh = ParseSwiftMt(mt202);
  ASSERT_OK(fresh.status());
  EXPECT_EQ(reused, *fresh);
}

// The acknowledgement of fragments/mt103_0046.fin (prowide's test message, exported with its
// ACK in front) put in front of a complete message of the corpus.
std::string Acknowledgement() {
  const std::string acked = Read("fragments/mt103_0046.fin");
  return acked.substr(0, acked.find("{1:", 1));
}

TEST(ParseSwiftMtTest, AnAcknowledgedMessageKeepsTheAcksReferenceAndTime) {
  const std::string ack = Acknowledgement();
  ASSERT_EQ(ack, "{1:F21AAAALT2XAXXX0000000000}{4:{177:1903250612}{451:0}}");
  const std::string message = Read("messages/mt103_0071.fin");
  ASSERT_OK_AND_ASSIGN(Transaction plain, ParseSwiftMt(message));
  EXPECT_TRUE(plain.ack_reference.empty());
  EXPECT_TRUE(plain.ack_time.empty());
  ASSERT_OK_AND_ASSIGN(Transaction tx, ParseSwiftMt(ack + message));
  EXPECT_EQ(tx.ack_reference, "190325AAAALT2XAXXX0000000000");
  EXPECT_EQ(tx.ack_time, "2019-03-25T06:12:00.000000Z");
  // Otherwise the message's own transaction.
  Transaction expected = plain;
  expected.ack_reference = tx.ack_reference;
  expected.ack_time = tx.ack_time;
  EXPECT_EQ(tx, expected);
  // Reused for the message alone: the ACK's members do not carry over.
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(message));
  ASSERT_OK(SwiftMtToTransaction(m, &tx));
  EXPECT_EQ(tx, plain);

  EXPECT_THAT(ParseSwiftMt(absl::StrReplaceAll(ack, {{"1903250612", "1913250612"}}) + message),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SWIFT MT block 4 (ACK), line 1: {177:1913250612} is not a "
                                 "valid date and time YYMMDDHHMM")));
}

TEST(ParseSwiftMtTest, ANakedMessageIsRefusedWithTheNaksErrorCode) {
  const std::string message = Read("messages/mt103_0071.fin");
  const std::string nak = absl::StrReplaceAll(Acknowledgement(), {{"{451:0}", "{451:1}{405:T27}"}});
  EXPECT_THAT(ParseSwiftMt(nak + message),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SWIFT MT block 4 (ACK), line 1: the network refused this "
                                 "MT103 \"22342343\" (NAK {451:1}, error code \"T27\" in "
                                 "{405:}); a refused message is not read as a payment")));
  // Refused for the NAK before its type: a NAKed MT205 is a refused message too.
  EXPECT_THAT(
      ParseSwiftMt(absl::StrReplaceAll(Acknowledgement(), {{"{451:0}", "{451:1}"}}) +
                   Read("messages/mt205_0001.fin")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the network refused this MT205 ")));
  EXPECT_THAT(
      ParseSwiftMt(absl::StrReplaceAll(Acknowledgement(), {{"{451:0}", "{451:1}"}}) + message),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("(NAK {451:1}, no error code {405:})")));
}

// Every complete MT103, MT103 STP, MT202 and MT202COV of the corpus maps to a transaction that
// keeps transaction.h's invariants; the rest are refused as the manifest says.
TEST(ParseSwiftMtTest, TheCorpus) {
  std::istringstream manifest(Read("manifest.csv"));
  std::string line;
  std::getline(manifest, line);
  int mapped = 0;
  while (std::getline(manifest, line)) {
    const std::vector<std::string> c = absl::StrSplit(line, ',');
    ASSERT_GE(c.size(), 5u) << line;
    const std::string &file = c[1], &type = c[2], &role = c[4];
    absl::StatusOr<Transaction> tx = ParseSwiftMt(Read(file));
    if (type == "205" || type == "205COV") {
      EXPECT_THAT(tx.status(), StatusIs(absl::StatusCode::kUnimplemented)) << file;
      continue;
    }
    if (role != "valid_sample") {
      EXPECT_THAT(tx.status(), StatusIs(absl::StatusCode::kInvalidArgument)) << file;
      continue;
    }
    ASSERT_OK(tx.status()) << file;
    EXPECT_EQ(tx->message_type, "MT" + type) << file;
    EXPECT_FALSE(tx->id.empty()) << file;
    EXPECT_FALSE(tx->originator.account_id.empty()) << file;
    EXPECT_FALSE(tx->beneficiary.account_id.empty()) << file;
    EXPECT_EQ(tx->value_date.size(), 10u) << file;
    EXPECT_GE(tx->agents.size(), 2u) << file;
    ++mapped;
  }
  EXPECT_EQ(mapped, 42 + 14 + 16 + 5);
}

TEST(LooksLikeSwiftMtTest, RecognizesTheBasicHeader) {
  EXPECT_TRUE(LooksLikeSwiftMt("\r\n {1:F01BANK"));
  EXPECT_FALSE(LooksLikeSwiftMt("{\"id\": 1}"));
  EXPECT_FALSE(LooksLikeSwiftMt("<Document/>"));
  EXPECT_FALSE(LooksLikeSwiftMt(""));
}

}  // namespace
}  // namespace vigil
