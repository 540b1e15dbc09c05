// The SWIFT MT and ISO 20022 messages that testdata's manifests pair (a translator's input and
// its expected output, either way) describe the same payment: read by vigil, they must give the
// same amount, currency, value date and parties. A pair of which one side is a type vigil does
// not read (MT205, pacs.004) is skipped; the test insists on a minimum number compared.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "vigil/ingest/iso20022.h"
#include "vigil/ingest/swift_mt_transaction.h"
#include "vigil/testing/csv.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

std::string Read(const std::string& relative) {
  std::ifstream in(::vigil::testing::TestDataPath(relative), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// id -> row (by column name) of a manifest.
std::map<std::string, std::map<std::string, std::string>> Manifest(const std::string& path) {
  std::istringstream in(Read(path));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = ::vigil::testing::SplitCsvLine(line);
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = ::vigil::testing::SplitCsvLine(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows[row["id"]] = std::move(row);
  }
  return rows;
}

// "a;b c" and "id:relation" lists.
std::vector<std::string> Ids(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(list, absl::ByAnyChar("; "), absl::SkipEmpty())) {
    out.emplace_back(item.substr(0, item.find(':')));
  }
  return out;
}

void ExpectSameParty(const Party& mt, const Party& mx, const std::string& pair) {
  EXPECT_EQ(mt.account_id, mx.account_id) << pair;
  EXPECT_EQ(mt.name, mx.name) << pair;
  EXPECT_EQ(mt.country, mx.country) << pair;
  EXPECT_EQ(mt.bank_id, mx.bank_id) << pair;
}

TEST(PaymentPairsTest, PairedMtAndMxMessagesNormalizeToTheSamePayment) {
  const auto mt = Manifest("swift_mt/manifest.csv");
  const auto mx = Manifest("iso20022/manifest.csv");
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& [id, row] : mt) {
    for (const std::string& other : Ids(row.at("paired_iso20022_id"))) pairs.insert({id, other});
    for (const std::string& other : Ids(row.at("other_pairs"))) pairs.insert({id, other});
  }
  for (const auto& [id, row] : mx) {
    for (const std::string& other : Ids(row.at("paired_mt_ids"))) pairs.insert({other, id});
  }
  int compared = 0;
  for (const auto& [mt_id, mx_id] : pairs) {
    if (!mt.contains(mt_id) || !mx.contains(mx_id)) continue;  // held out of testdata
    const std::string pair = mt_id + " / " + mx_id;
    absl::StatusOr<Transaction> a = ParseSwiftMt(Read("swift_mt/" + mt.at(mt_id).at("file")));
    absl::StatusOr<std::vector<Transaction>> b =
        ParseIso20022(Read("iso20022/" + mx.at(mx_id).at("file")));
    if (a.status().code() == absl::StatusCode::kUnimplemented ||
        b.status().code() == absl::StatusCode::kUnimplemented) {
      continue;
    }
    ASSERT_TRUE(a.ok()) << pair << ": " << a.status();
    ASSERT_TRUE(b.ok()) << pair << ": " << b.status();
    ASSERT_EQ(b->size(), 1u) << pair;
    const Transaction& x = *a;
    const Transaction& y = (*b)[0];
    EXPECT_EQ(x.amount, y.amount) << pair;
    EXPECT_EQ(x.amount.currency(), y.amount.currency()) << pair;
    EXPECT_EQ(x.settled_amount, y.settled_amount) << pair;
    EXPECT_EQ(x.value_date, y.value_date) << pair;
    ExpectSameParty(x.originator, y.originator, pair);
    ExpectSameParty(x.beneficiary, y.beneficiary, pair);
    if (!x.uetr.empty() && !y.uetr.empty()) {
      EXPECT_EQ(x.id, y.id) << pair;
    }
    ++compared;
  }
  // 35 pairs have both sides in testdata and of types vigil reads.
  EXPECT_GE(compared, 35);
}

}  // namespace
}  // namespace vigil
