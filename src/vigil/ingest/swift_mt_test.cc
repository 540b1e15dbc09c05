#include "vigil/ingest/swift_mt.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Corpus(const std::string& name) {
  return Read(::vigil::testing::TestDataPath("swift_mt/" + name));
}

constexpr char kMt103[] =
    "{1:F01ABCDLKL0XXXX0000000000}{2:I103HANYUS33XXXXN}{3:{111:001}"
    "{121:8403c004-66b2-40fc-acba-9f11d1a4ad84}}{4:\r\n"
    ":20:990OTT250827000\r\n"
    ":23B:CRED\r\n"
    ":32A:250827USD7138,40\r\n"
    ":50K:/100811000148\r\n"
    "RASA ENGINEERING SERVICES (PVT) L\r\n"
    "SRI LANKA\r\n"
    ":59:/2110144802\r\n"
    "KATAYAMA CHAIN THAILAND\r\n"
    ":71A:BEN\r\n"
    "-}";

TEST(SwiftMtMessage, SplitsHeadersAndFields) {
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(kMt103));
  EXPECT_EQ(m.basic.application_id, 'F');
  EXPECT_EQ(m.basic.service_id, "01");
  EXPECT_EQ(m.basic.logical_terminal, "ABCDLKL0XXXX");
  EXPECT_EQ(m.basic.session, "0000");
  EXPECT_EQ(m.basic.sequence, "000000");
  EXPECT_TRUE(m.application.input);
  EXPECT_EQ(m.application.message_type, "103");
  EXPECT_EQ(m.application.counterparty_address, "HANYUS33XXXX");
  EXPECT_EQ(m.application.priority, 'N');
  EXPECT_EQ(m.SenderBic(), "ABCDLKL0XXX");
  EXPECT_EQ(m.ReceiverBic(), "HANYUS33XXX");
  EXPECT_EQ(m.UserHeader("121"), "8403c004-66b2-40fc-acba-9f11d1a4ad84");
  EXPECT_EQ(m.UserHeader("111"), "001");
  EXPECT_EQ(m.UserHeader("119"), std::nullopt);
  std::vector<std::string_view> tags;
  for (const MtField& f : m.fields) tags.push_back(f.tag);
  EXPECT_THAT(tags, ElementsAre("20", "23B", "32A", "50K", "59", "71A"));
  EXPECT_EQ(m.Find("32A")->value, "250827USD7138,40");
  EXPECT_EQ(m.Find("32A")->line, 4);
  EXPECT_EQ(m.Find("50")->tag, "50K");  // any option
  EXPECT_EQ(m.Find("50A"), nullptr);
  EXPECT_THAT(MtLines(m.Find("50K")->value),
              ElementsAre("/100811000148", "RASA ENGINEERING SERVICES (PVT) L", "SRI LANKA"));
  EXPECT_EQ(m.Find("71A")->value, "BEN");
  EXPECT_TRUE(m.trailer.empty());
}

TEST(SwiftMtMessage, LineFeedsAloneAndSpaceBetweenBlocksAreAccepted) {
  const std::string lf = absl::StrReplaceAll(kMt103, {{"\r\n", "\n"}});
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(lf));
  EXPECT_THAT(MtLines(m.Find("59")->value), ElementsAre("/2110144802", "KATAYAMA CHAIN THAILAND"));
  const std::string spaced =
      absl::StrCat("\n  ", absl::StrReplaceAll(kMt103, {{"}{4:", "}\r\n{4:"}}), " \r\n");
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage s, SwiftMtMessage::Parse(spaced));
  EXPECT_EQ(s.fields.size(), 6u);
}

TEST(SwiftMtMessage, OutputMessagesNameTheSenderFromTheInputReference) {
  const std::string text = Corpus("messages/mt103_0032.fin");
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(text));
  EXPECT_FALSE(m.application.input);
  EXPECT_EQ(m.application.input_time, "1101");
  EXPECT_EQ(m.application.input_reference, "051102KKKKESMMAXXX5426781877");
  EXPECT_EQ(m.application.output_date, "051102");
  EXPECT_EQ(m.application.output_time, "1101");
  EXPECT_EQ(m.SenderBic(), "KKKKESMMXXX");
  EXPECT_EQ(m.ReceiverBic(), "FOOBARYYXXX");
  ASSERT_EQ(m.trailer.size(), 2u);
  EXPECT_EQ(m.trailer[0].tag, "MAC");
  EXPECT_EQ(m.trailer[1].value, "802BE35B36EB");
  EXPECT_EQ(m.Find("77B")->value, "/ORDERRES///000000");
}

// Every complete message of the corpus splits; the fragments that are not whole messages are
// refused with the block and line (testdata/swift_mt/manifest.csv).
TEST(SwiftMtMessage, EveryCorpusMessageSplits) {
  int parsed = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(::vigil::testing::TestDataPath("swift_mt/messages"))) {
    const std::string text = Read(entry.path().string());
    absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(text);
    ASSERT_TRUE(m.ok()) << entry.path() << ": " << m.status();
    EXPECT_FALSE(m->fields.empty()) << entry.path();
    EXPECT_NE(m->Find("20"), nullptr) << entry.path();
    ++parsed;
  }
  EXPECT_EQ(parsed, 84);
  EXPECT_THAT(SwiftMtMessage::Parse(Corpus("fragments/mt103_0042.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 4, line 1: the text block must start with a line break")));
  EXPECT_THAT(SwiftMtMessage::Parse(Corpus("fragments/mt103_0044.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 4, line 3: the text block does not end with a line \"-}\"")));
  // An acknowledgement (F21) in front of the message is read; the message after it is the
  // fragment, cut off inside its text block.
  EXPECT_THAT(SwiftMtMessage::Parse(Corpus("fragments/mt103_0045.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 4, line 3: the text block does not end with a line")));
}

// The corpus's acknowledged messages (fragments/mt103_0045, 0046, 0052: prowide's test
// messages, exported with their ACK in front): the ACK is read into "acknowledgement", the
// message after it is the message.
TEST(SwiftMtAcknowledgement, TheAckInFrontOfAMessageIsReadWithIt) {
  const std::string text = Corpus("fragments/mt103_0046.fin");
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(text));
  ASSERT_TRUE(m.acknowledgement.has_value());
  const MtAcknowledgement& ack = *m.acknowledgement;
  EXPECT_EQ(ack.basic.service_id, "21");
  EXPECT_EQ(ack.basic.logical_terminal, "AAAALT2XAXXX");
  EXPECT_TRUE(ack.accepted);
  EXPECT_EQ(ack.date_time, "1903250612");
  EXPECT_TRUE(ack.error_code.empty());
  EXPECT_EQ(ack.line, 1);
  // No {106:}: the date of {177:}, then block 1's logical terminal, session and sequence.
  EXPECT_EQ(ack.Reference(), "190325AAAALT2XAXXX0000000000");
  EXPECT_EQ(m.basic.service_id, "01");
  EXPECT_EQ(m.basic.logical_terminal, "BBBBARZZAXXX");
  EXPECT_FALSE(m.application.input);
  EXPECT_EQ(m.application.input_reference, "190903AAAALT2XAXXX0000000000");
  EXPECT_EQ(m.Find("20")->value, "TEST-OUT");
  EXPECT_EQ(m.Find("32A")->line, 3);

  ASSERT_OK_AND_ASSIGN(SwiftMtMessage again, SwiftMtMessage::Parse(kMt103));
  EXPECT_FALSE(again.acknowledgement.has_value());
  // Reused for a message without one: the acknowledgement does not carry over.
  ASSERT_OK(SwiftMtMessage::ParseInto(text, &again));
  ASSERT_OK(SwiftMtMessage::ParseInto(kMt103, &again));
  EXPECT_FALSE(again.acknowledgement.has_value());

  // mt103_0052: an ACK with a MAC trailer on the message, whose text block is empty.
  EXPECT_THAT(SwiftMtMessage::Parse(Corpus("fragments/mt103_0052.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has no fields")));
  // Line breaks between the ACK and the message; a {106:} gives the reference.
  const std::string ack_106 =
      absl::StrReplaceAll(text, {{"{451:0}}", "{451:0}{106:190325AAAALT2XAXXX1234567890}}\r\n"}});
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m106, SwiftMtMessage::Parse(ack_106));
  EXPECT_EQ(m106.acknowledgement->Reference(), "190325AAAALT2XAXXX1234567890");
  EXPECT_EQ(m106.Find("32A")->line, 4);
}

TEST(SwiftMtAcknowledgement, ANakIsKeptAndAnAcknowledgementAloneIsRefused) {
  const std::string text = Corpus("fragments/mt103_0046.fin");
  const std::string nak = absl::StrReplaceAll(text, {{"{451:0}", "{451:1}{405:T27}"}});
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(nak));
  EXPECT_FALSE(m.acknowledgement->accepted);
  EXPECT_EQ(m.acknowledgement->error_code, "T27");
  EXPECT_EQ(m.acknowledgement->NakReason(), "NAK {451:1}, error code \"T27\" in {405:}");
  // A NAK in front of a message that does not split: both are said, the NAK first.
  const std::string broken =
      absl::StrReplaceAll(Corpus("fragments/mt103_0045.fin"), {{"{451:0}", "{451:1}{405:H25}"}});
  EXPECT_THAT(SwiftMtMessage::Parse(broken),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 4 (ACK), line 1: the network refused the message (NAK "
                                 "{451:1}, error code \"H25\" in {405:}), and the message does "
                                 "not split either: SWIFT MT block 4, line 3")));

  const std::string ack = text.substr(0, text.find("{1:", 1));
  EXPECT_EQ(ack, "{1:F21AAAALT2XAXXX0000000000}{4:{177:1903250612}{451:0}}");
  EXPECT_THAT(SwiftMtMessage::Parse(ack + "\n"),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("unsupported message type: an acknowledgement (service message "
                                 "21, ACK) of session 0000, sequence 000000 of AAAALT2XAXXX "
                                 "without the message")));
  EXPECT_THAT(SwiftMtMessage::Parse(absl::StrReplaceAll(ack, {{"{451:0}", "{451:1}{405:H25}"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the network refused the message (NAK {451:1}, error code "
                                 "\"H25\" in {405:}) of session 0000, sequence 000000 of "
                                 "AAAALT2XAXXX; the message itself is not in the text")));
}

TEST(SwiftMtAcknowledgement, AMalformedAcknowledgementIsNamed) {
  const std::string message = Corpus("fragments/mt103_0046.fin").substr(56);
  ASSERT_TRUE(absl::StartsWith(message, "{1:F01BBBB"));
  const auto error = [&](const std::string& ack) {
    return std::string(SwiftMtMessage::Parse(ack + message).status().message());
  };
  const std::string b1 = "{1:F21AAAALT2XAXXX0000000000}";
  EXPECT_THAT(error(b1 + "{4:{177:1903250612}{451:0}}"), ::testing::IsEmpty());
  EXPECT_THAT(error(b1 + "{4:{177:1903250612}{451:0}}{5:{CHK:ABC}}"), ::testing::IsEmpty());
  EXPECT_THAT(error(b1 + "{4:{177:1903250612}}"),
              HasSubstr("block 4 (ACK), line 1: the acknowledgement has no {451:}"));
  EXPECT_THAT(error(b1 + "{4:{451:2}}"), HasSubstr("{451:2} is neither 0 (accepted) nor 1"));
  EXPECT_THAT(error(b1 + "{4:{177:19032506}{451:0}}"),
              HasSubstr("{177:19032506} is not a date and time YYMMDDHHMM"));
  EXPECT_THAT(error(b1 + "{4:{451:0}{106:SHORT}}"),
              HasSubstr("{106:SHORT} is not a message input reference"));
  EXPECT_THAT(error(b1), HasSubstr("block 1 (ACK), line 1: the acknowledgement (service 21) has "
                                   "no block 4"));
  EXPECT_THAT(error(b1 + "{2:I103BBBBARZZXXXXN}{4:{451:0}}"),
              HasSubstr("block 2 (ACK), line 1: an acknowledgement holds its basic header"));
  EXPECT_THAT(error(b1 + "{4:{451:0}x}"),
              HasSubstr("block 4 (ACK), line 1: expected a {tag:value}"));
  EXPECT_THAT(error("{1:F21AAAALT2XAXXX00}{4:{451:0}}"),
              HasSubstr("block 1, line 1: the basic header has 17 characters"));
  EXPECT_THAT(SwiftMtMessage::Parse("{1:F21"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 1 (ACK), line 1: the block is not closed")));
}

TEST(SwiftMtMessage, StructuralErrorsNameBlockLineAndReason) {
  const auto error = [](const std::string& text) {
    return std::string(SwiftMtMessage::Parse(text).status().message());
  };
  const std::string b12 = "{1:F01ABCDLKL0XXXX0000000000}{2:I103HANYUS33XXXXN}";
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}"), ::testing::IsEmpty());
  EXPECT_THAT(error("{1:F01ABCD}" + b12.substr(29) + "{4:\r\n:20:X\r\n-}"),
              HasSubstr("block 1, line 1: the basic header has 7 characters, not 25"));
  EXPECT_THAT(error("{1:F01ABCDLKL0XXXX0000000000}{2:I10XHANYUS33XXXXN}{4:\r\n:20:X\r\n-}"),
              HasSubstr("block 2, line 1: message type \"10X\" is not 3 digits"));
  EXPECT_THAT(error("{1:F01ABCDLKL0XXXX0000000000}{2:I103HANYUS33XXXXQ}{4:\r\n:20:X\r\n-}"),
              HasSubstr("priority 'Q' is not N, U or S"));
  EXPECT_THAT(error(b12 + "{6:x}"), HasSubstr("block 6, line 1: unknown block"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}{3:{108:A}}"),
              HasSubstr("block 3 is out of place: the headers 1, 2 and 3 come before"));
  EXPECT_THAT(error(b12 + "{2:I103HANYUS33XXXXN}"), HasSubstr("block 2 comes twice"));
  EXPECT_THAT(error(b12 + "{5:{CHK:1}}{4:\r\n:20:X\r\n-}"), HasSubstr("block 5 is out of place"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}{"), ::testing::IsEmpty());
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}}"), ::testing::IsEmpty());
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}}x"), HasSubstr("expected '{' of a block"));
  EXPECT_THAT(error(b12 + "{"), HasSubstr("a block has no ':'"));
  // Block 3 before block 2 (prowide's exports) is accepted.
  EXPECT_THAT(error("{1:F01ABCDLKL0XXXX0000000000}{3:{108:A}}{2:I103HANYUS33XXXXN}{4:\r\n:20:X\r\n-}"),
              ::testing::IsEmpty());
  EXPECT_THAT(error(b12 + "{3:{108:A}"), HasSubstr("block 3, line 1: the block is not closed"));
  // The trailer's last brace may be missing at the end (RJE exports), nowhere else.
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}{5:{CHK:3916EF336FF7}"), ::testing::IsEmpty());
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n-}{5:{CHK:3916EF336FF7"),
              HasSubstr("block 5, line 3: a sub-block is not closed"));
  EXPECT_THAT(error(b12 + "{4:\r\nstray\r\n:20:X\r\n-}"),
              HasSubstr("block 4, line 2: text before the first field"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n:2B:Y\r\n-}"),
              HasSubstr("block 4, line 3: a field must start with :NN: or :NNa:"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n:70:a{b\r\n-}"),
              HasSubstr("block 4, line 3: field :70: holds '{'"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:\r\n:21:X\r\n-}"),
              HasSubstr("block 4, line 2: field :20: is empty"));
  EXPECT_THAT(error(b12 + "{4:\r\n:20:X\r\n"), HasSubstr("does not end with a line \"-}\""));
  EXPECT_THAT(error(b12), HasSubstr("no text block {4:}"));
  EXPECT_THAT(error("{4:\r\n:20:X\r\n-}"), HasSubstr("header {2:} are required"));
  EXPECT_THAT(error(b12 + "{4:\r\n-}"), HasSubstr("has no fields"));
  EXPECT_THAT(error("hello"), HasSubstr("block ?, line 1: expected '{' of a block"));
  EXPECT_THAT(error(""), HasSubstr("are required"));
  EXPECT_THAT(error(std::string(kMaxMessageBytes + 1, ' ')), HasSubstr("the limit is"));
}

TEST(SplitSwiftMtMessagesTest, SplitsGluedAndSeparatedMessagesAfterTheirTrailers) {
  const std::string a = "{1:F01AAAABEBBAXXX0000000000}{2:I103BBBBDEFFXXXXN}{4:\r\n:20:A\r\n-}";
  const std::string b =
      "{1:F01AAAABEBBAXXX0000000000}{2:I202BBBBDEFFXXXXN}{4:\n:20:B\n-}{5:{CHK:1}}{S:{SPD:}}";
  const std::string c = "{1:F01AAAABEBBAXXX0000000000}{2:I103BBBBDEFFXXXXN}{4:\n:20:C\n-}}";
  const std::string text = a + b + "\n$\n" + c + "\n";
  EXPECT_THAT(SplitSwiftMtMessages(text), ::testing::ElementsAre(a, b, c));
  // A "-}" inside a field does not end the text block; one message stays one.
  const std::string d = "{1:F01AAAABEBBAXXX0000000000}{2:I103BBBBDEFFXXXXN}{4:\n:70:X -} Y\n-}";
  EXPECT_THAT(SplitSwiftMtMessages(d), ::testing::ElementsAre(d));
  // Text that is not a next message stays with the message before it.
  EXPECT_THAT(SplitSwiftMtMessages(a + "junk" + b), ::testing::ElementsAre(a + "junk" + b));
  EXPECT_TRUE(SplitSwiftMtMessages("").empty());
  EXPECT_TRUE(SplitSwiftMtMessages(" \n$\n").empty());
}

// RJE files with the ACKs interleaved, as SWIFT Alliance exports them: each ACK stays with the
// message that follows it; one followed by "$", by another ACK or by nothing is a piece alone.
TEST(SplitSwiftMtMessagesTest, AnAcknowledgementStaysWithTheMessageAfterIt) {
  const std::string acked = Corpus("fragments/mt103_0046.fin");  // ACK, then the message
  const std::string ack = acked.substr(0, acked.find("{1:", 1));
  const std::string a = Corpus("messages/mt103_0071.fin");
  const std::string b = Corpus("messages/mt103_0072.fin");
  const auto trim = [](const std::string& t) {
    return t.substr(0, t.find_last_not_of("\r\n") + 1);
  };
  EXPECT_THAT(SplitSwiftMtMessages(acked), ElementsAre(acked));
  // Glued with "$" (prowide's MT103-bulk-with-ack.rje layout), and on lines of their own.
  const std::string bulk = ack + trim(a) + "$" + ack + trim(b) + "$" + acked;
  EXPECT_THAT(SplitSwiftMtMessages(bulk), ElementsAre(ack + trim(a), ack + trim(b), acked));
  const std::string lines = ack + "\n" + a + "$\n" + ack + "\n$\n" + ack + ack + "\n" + b;
  EXPECT_THAT(SplitSwiftMtMessages(lines),
              ElementsAre(ack + "\n" + trim(a), ack, ack, ack + "\n" + trim(b)));
  EXPECT_THAT(SplitSwiftMtMessages(trim(a) + ack), ElementsAre(trim(a), ack));
  EXPECT_THAT(SplitSwiftMtMessages(ack + "{1:F21"), ElementsAre(ack, "{1:F21"));

  EXPECT_TRUE(IsSwiftMtAcknowledgementOnly(" " + ack + "\r\n"));
  EXPECT_FALSE(IsSwiftMtAcknowledgementOnly(acked));
  EXPECT_FALSE(IsSwiftMtAcknowledgementOnly(a));
  EXPECT_FALSE(IsSwiftMtAcknowledgementOnly(""));
}

}  // namespace
}  // namespace vigil
