// The party names of `vigil bench http --screening-list`: an account keeps its name, the pool
// gives a realistic spread of persons and companies, and every 200th request pays a listed
// name, the list's entries in turn.
#include "vigil/cli/bench_names.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::cli {
namespace {

TEST(BenchPartyName, AnAccountKeepsItsName) {
  const std::string first = BenchPartyName("ACC-000123");
  EXPECT_FALSE(first.empty());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(BenchPartyName("ACC-000123"), first);
  // From a copy of the id too: the name depends on the id's bytes, not on where they are.
  const std::string copy = absl::StrCat("ACC-", "000123");
  EXPECT_EQ(BenchPartyName(copy), first);
}

TEST(BenchPartyName, SpreadsAccountsOverPersonsAndCompanies) {
  const std::set<std::string> kBusinesses = {
      "Trading",  "Logistics", "Holdings", "Industries",   "Consulting",   "Foods",
      "Textiles", "Shipping",  "Imports",  "Technologies", "Construction", "Partners"};
  std::set<std::string> names;
  int companies = 0;
  const int kAccounts = 20000;  // the bench's population
  for (int i = 0; i < kAccounts; ++i) {
    const std::string name = BenchPartyName(absl::StrCat("ACC", i));
    names.insert(name);
    // A person is "Given Surname"; a company's second word is its line of business.
    const std::vector<std::string> words = absl::StrSplit(name, ' ');
    ASSERT_GE(words.size(), 2u) << name;
    ASSERT_LE(words.size(), 3u) << name;
    if (kBusinesses.count(words[1]) > 0) ++companies;
  }
  // 3,600 persons and 4,320 companies are possible; 15,000 draws of persons and 5,000 of
  // companies reach about 3,550 and 2,960 of them (6,505 in all for these ids).
  EXPECT_GT(names.size(), 6000u);
  // About one in four is a company (a hash bit pair): well within 20%..30% at this size.
  EXPECT_GT(companies, kAccounts / 5);
  EXPECT_LT(companies, kAccounts * 3 / 10);
}

TEST(ListedBeneficiaryName, EveryTwoHundredthRequestPaysTheListsInTurn) {
  const std::vector<std::string> listed = {"BANCO NACIONAL DE CUBA", "ZAWAHIRI, Ayman al-",
                                           "AEROCARIBBEAN AIRLINES"};
  std::vector<std::string> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    const std::string* name = ListedBeneficiaryName(i, listed);
    EXPECT_EQ(name != nullptr, i % kListedNameEvery == 0) << i;
    if (name != nullptr) seen.push_back(*name);
  }
  // Requests 0, 200, 400, 600, 800: round robin, wrapping after the third entry.
  EXPECT_THAT(seen, ::testing::ElementsAre(listed[0], listed[1], listed[2], listed[0], listed[1]));
  // The same request index always gets the same name.
  EXPECT_EQ(ListedBeneficiaryName(400, listed), &listed[2]);
}

TEST(ListedBeneficiaryName, NoListsNoListedNames) {
  EXPECT_EQ(ListedBeneficiaryName(0, {}), nullptr);
  EXPECT_EQ(ListedBeneficiaryName(200, {}), nullptr);
}

}  // namespace
}  // namespace vigil::cli
