#include "vigil/ingest/swift_mt_types.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::string Read(const std::string& relative) {
  std::ifstream in(::vigil::testing::TestDataPath("swift_mt/" + relative), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::Status Check(const std::string& text) {
  absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(text);
  if (!m.ok()) return m.status();
  absl::StatusOr<MtType> type = SupportedMtType(*m);
  if (!type.ok()) return type.status();
  return CheckMtFields(*m, *type);
}

// testdata/swift_mt/manifest.csv: every complete MT103, MT103 STP, MT202 and MT202COV has its
// mandatory fields and allowed options; MT205 and MT205COV are unsupported; the source-marked
// invalid message and the fragments that split are refused for what they lack.
TEST(SwiftMtTypes, TheCorpusAsTheManifestDescribesIt) {
  std::istringstream manifest(Read("manifest.csv"));
  std::string line;
  std::getline(manifest, line);  // header
  std::map<std::string, int> checked;
  while (std::getline(manifest, line)) {
    const std::vector<std::string> c = absl::StrSplit(line, ',');
    ASSERT_GE(c.size(), 5u) << line;
    const std::string &file = c[1], &type = c[2], &role = c[4];
    const absl::Status s = Check(Read(file));
    if (role == "valid_sample") {
      if (type == "205" || type == "205COV") {
        EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented,
                                HasSubstr("unsupported message type MT205")))
            << file;
      } else {
        EXPECT_OK(s) << file;
        absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(Read(file));
        ASSERT_OK(m.status());
        EXPECT_EQ(MtTypeName(*SupportedMtType(*m)), "MT" + type) << file;
      }
    } else {
      EXPECT_FALSE(s.ok()) << file;
    }
    ++checked[role];
  }
  EXPECT_EQ(checked["valid_sample"], 84);
  EXPECT_EQ(checked["known_invalid"], 1);
  // The source expects "Mandatory Tag is missing (tagName=20)".
  EXPECT_THAT(Check(Read("invalid/mt103_0082.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MT103: mandatory field :20: is missing")));
  // {2:I202N}: no receiver.
  EXPECT_THAT(Check(Read("fragments/mt202_0023.fin")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 2, line 1: an input header needs the receiver's")));
}

constexpr char kHead[] = "{1:F01ABCDLKL0XXXX0000000000}{2:I103HANYUS33XXXXN}{4:\r\n";

TEST(SwiftMtTypes, MandatoryFieldsAndOptionsAreNamed) {
  const std::string full =
      ":20:REF\r\n:23B:CRED\r\n:32A:250827USD1,00\r\n:50K:/1\r\nA\r\n:59:/2\r\nB\r\n:71A:OUR\r\n-}";
  EXPECT_OK(Check(kHead + full));
  for (const char* tag : {":23B:CRED\r\n", ":32A:250827USD1,00\r\n", ":71A:OUR\r\n"}) {
    std::string text = kHead + full;
    text.erase(text.find(tag), std::string(tag).size());
    EXPECT_THAT(Check(text), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("MT103: mandatory field")))
        << tag;
  }
  std::string no_payee = kHead + full;
  no_payee.erase(no_payee.find(":59:/2\r\nB\r\n"), 11);
  EXPECT_THAT(Check(no_payee), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("mandatory field :59a: is missing")));
  std::string option_b = kHead + full;
  option_b.replace(option_b.find(":50K:"), 5, ":50B:");
  EXPECT_THAT(Check(option_b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MT103: field :50B: (line 5) option B is not allowed (A, F, K)")));
  std::string no_letter = kHead + full;
  no_letter.replace(no_letter.find(":32A:"), 5, ":32:");
  EXPECT_THAT(Check(no_letter), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("field :32: (line 4) needs an option letter")));
  std::string stp = kHead + full;
  stp.replace(stp.find("{4:"), 0, "{3:{119:STP}}");
  ASSERT_OK_AND_ASSIGN(SwiftMtMessage m, SwiftMtMessage::Parse(stp));
  EXPECT_THAT(SupportedMtType(m), ::vigil::testing::IsOkAndHolds(MtType::kMt103Stp));
}

TEST(SwiftMtTypes, CoverPaymentsNeedTheUnderlyingCustomers) {
  const std::string head = "{1:F01ABCDLKL0XXXX0000000000}{2:I202HANYUS33XXXXN}{3:{119:COV}}{4:\r\n";
  const std::string a = ":20:REF\r\n:21:REL\r\n:32A:250827USD1,00\r\n:58A:HANYUS33\r\n";
  EXPECT_OK(Check(head + a + ":50K:/1\r\nA\r\n:59:/2\r\nB\r\n-}"));
  EXPECT_THAT(Check(head + a + "-}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MT202COV: mandatory field :50a (sequence B")));
  EXPECT_THAT(Check(head + a + ":50K:/1\r\nA\r\n-}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":59a (sequence B)")));
  // :21: of sequence B does not stand in for sequence A's.
  EXPECT_THAT(Check(head + ":20:REF\r\n:32A:250827USD1,00\r\n:58A:HANYUS33\r\n:50K:/1\r\nA\r\n"
                           ":21:X\r\n:59:/2\r\nB\r\n-}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":21: is missing")));
  EXPECT_THAT(Check("{1:F01ABCDLKL0XXXX0000000000}{2:I205HANYUS33XXXXN}{4:\r\n:20:X\r\n-}"),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("unsupported message type MT205 (vigil reads MT103, MT202 and "
                                 "MT202COV)")));
}

}  // namespace
}  // namespace vigil
