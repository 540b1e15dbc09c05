#include "vigil/ingest/swift_mt.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
  // An acknowledgement (F21) in front of the message: its block 4 is not a text block.
  EXPECT_THAT(SwiftMtMessage::Parse(Corpus("fragments/mt103_0045.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("block 4, line 1")));
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

}  // namespace
}  // namespace vigil
