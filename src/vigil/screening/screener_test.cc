#include "vigil/screening/screener.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/screening/ofac_sdn.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::StatusIs;

constexpr char kHeader[] = "id,name,aliases,type,countries,identifiers,list\n";

class ScreenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/screener_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(ScreenerTest, ListsAreVersionedByContentAndNamesMustBeDistinct) {
  const std::string text = std::string(kHeader) + "1,ACME TRADING LLC,,entity,,,A\n";
  const std::string a = Write("a.csv", text);
  ASSERT_OK_AND_ASSIGN(auto screener, Screener::Create({.sources = {a}}));
  EXPECT_THAT(screener->Current()->versions(), ElementsAre("a.csv@" + ContentVersion(text)));
  EXPECT_EQ(screener->Current()->entry_count(), 1u);
  // Hits name the entry's list.
  const std::vector<ScreeningHit> hits = screener->Current()->ScreenName("Acme Trading", {});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].list, "A");
  EXPECT_EQ(hits[0].list_version, ContentVersion(text));

  EXPECT_THAT(Screener::Create({.sources = {a, a}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("named 'a.csv'")));
  EXPECT_THAT(Screener::Create({.sources = {dir_ + "/none.csv"}}).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("none.csv")));
  EXPECT_THAT(Screener::Create({}).status(), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ScreenerTest, AFolderIsReadAsOfacSdn) {
  const std::string dir = vigil::testing::TestDataPath("sanctions/ofac_sdn_legacy_csv_2019");
  ASSERT_OK_AND_ASSIGN(auto list, LoadWatchlistSource(dir));
  EXPECT_EQ(list->name(), kOfacSdnListName);
  EXPECT_EQ(list->size(), 7379u);
}

Transaction Payment() {
  Transaction tx;
  tx.id = "t1";
  tx.originator.name = "Greta Lindqvist";
  tx.originator.account_id = "SE4550000000058398257466";
  tx.beneficiary.name = "Acme Tradng L.L.C.";
  tx.beneficiary.account_id = "123";
  tx.beneficiary.bank_id = "BNCUCUHH";
  return tx;
}

TEST_F(ScreenerTest, ScreensEveryPartyByNameAndIdentifierOnceEach) {
  const std::string list =
      Write("l.csv", std::string(kHeader) +
                         "1,ACME TRADING LLC,,entity,Iran,,L\n"
                         "2,BANCO NACIONAL DE CUBA,BNC,entity,Cuba,BNCUCUHHXXX,L\n"
                         "3,Ivan Petrov,,individual,Russia,SE4550000000058398257466,L\n");
  ASSERT_OK_AND_ASSIGN(auto screener, Screener::Create({.sources = {list}}));
  const auto lists = screener->Current();

  Transaction tx = Payment();
  TransactionScreening s = lists->ScreenTransaction(tx, {0.80, 10});
  ASSERT_EQ(s.hits.size(), 3u);
  // Identifier hits score 1 and come first.
  EXPECT_EQ(s.max_score, 1.0);
  std::vector<std::string> found;
  for (const ScreeningHit& h : s.hits) found.push_back(h.party + ":" + h.entry_id);
  EXPECT_THAT(found, ::testing::UnorderedElementsAre("originator:3", "beneficiary_bank:2",
                                                     "beneficiary:1"));
  const ScreeningHit& name_hit = s.hits.back();
  EXPECT_EQ(name_hit.party, "beneficiary");
  EXPECT_EQ(name_hit.query, "Acme Tradng L.L.C.");
  EXPECT_EQ(name_hit.entry_name, "ACME TRADING LLC");
  EXPECT_FALSE(name_hit.by_identifier);
  EXPECT_GE(name_hit.score, 0.9);
  EXPECT_LT(name_hit.score, 1.0);
  EXPECT_EQ(name_hit.list_version, ContentVersion(vigil::testing::ReadFile(list)));

  // The bank named by an agent is screened once, under the agent's role.
  Agent bank;
  bank.role = AgentRole::kAccountWithInstitution;
  bank.bic = "BNCUCUHH";
  bank.name = "Banco Nacional de Cuba";
  tx.agents.push_back(bank);
  tx.ultimate_beneficiary = Party{};
  tx.ultimate_beneficiary->name = "IVAN PETROV";
  s = lists->ScreenTransaction(tx, {0.80, 10});
  found.clear();
  for (const ScreeningHit& h : s.hits) found.push_back(h.party + ":" + h.entry_id);
  EXPECT_THAT(found, ::testing::UnorderedElementsAre("originator:3", "account_with_institution:2",
                                                     "beneficiary:1", "ultimate_beneficiary:3"));

  Transaction clean;
  clean.originator.name = "Greta Lindqvist";
  clean.beneficiary.name = "Northwind Logistics";
  s = lists->ScreenTransaction(clean, {0.80, 10});
  EXPECT_THAT(s.hits, IsEmpty());
  EXPECT_EQ(s.max_score, 0.0);
  EXPECT_THAT(lists->ScreenTransaction(tx, {0.80, 2}).hits, ::testing::SizeIs(2));
}

TEST_F(ScreenerTest, ReloadSwapsChangedListsAndKeepsTheOldOnesOnError) {
  const std::string path = Write("l.csv", std::string(kHeader) + "1,ACME TRADING LLC,,entity,,,L\n");
  ASSERT_OK_AND_ASSIGN(auto screener, Screener::Create({.sources = {path}}));
  const std::shared_ptr<const ScreeningLists> before = screener->Current();
  ASSERT_OK_AND_ASSIGN(bool changed, screener->ReloadIfChanged());
  EXPECT_FALSE(changed);
  ASSERT_OK_AND_ASSIGN(changed, screener->Reload());  // same bytes: same version
  EXPECT_FALSE(changed);
  EXPECT_EQ(screener->reloads(), 0u);

  const std::string updated = std::string(kHeader) + "1,ACME TRADING LLC,,entity,,,L\n"
                                                     "2,NEW SANCTIONED PERSON,,individual,,,L\n";
  Write("l.csv", updated);
  ASSERT_OK_AND_ASSIGN(changed, screener->Reload());
  EXPECT_TRUE(changed);
  EXPECT_EQ(screener->reloads(), 1u);
  EXPECT_THAT(screener->Current()->versions(), ElementsAre("l.csv@" + ContentVersion(updated)));
  EXPECT_THAT(screener->Current()->ScreenName("New Sanctioned Person", {}), ::testing::SizeIs(1));
  // A search holding the old lists still works on them.
  EXPECT_THAT(before->ScreenName("New Sanctioned Person", {}), IsEmpty());
  EXPECT_EQ(before->entry_count(), 1u);

  Write("l.csv", std::string(kHeader) + "1,,,entity,,,L\n");  // no name
  EXPECT_THAT(screener->Reload().status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    HasSubstr("l.csv")));
  EXPECT_EQ(screener->reload_failures(), 1u);
  EXPECT_THAT(screener->Current()->versions(), ElementsAre("l.csv@" + ContentVersion(updated)));
  // The broken file is not retried until it changes again.
  ASSERT_OK_AND_ASSIGN(changed, screener->ReloadIfChanged());
  EXPECT_FALSE(changed);
  EXPECT_EQ(screener->reload_failures(), 1u);
}

TEST_F(ScreenerTest, SearchesRunConcurrentlyWithReloads) {
  const std::string path = Write("l.csv", std::string(kHeader) + "1,ACME TRADING LLC,,entity,,,L\n");
  ASSERT_OK_AND_ASSIGN(auto screener, Screener::Create({.sources = {path}}));
  std::atomic<bool> stop{false};
  std::atomic<int> misses{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        if (screener->Current()->ScreenName("acme trading", {0.8, 10}).empty()) ++misses;
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    Write("l.csv", std::string(kHeader) + "1,ACME TRADING LLC,,entity,,,L\n" +
                       std::to_string(i + 2) + ",PERSON " + std::to_string(i) + ",,individual,,,L\n");
    ASSERT_OK(screener->Reload().status());
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses, 0);
  EXPECT_EQ(screener->reloads(), 20u);
}

}  // namespace
}  // namespace vigil::screening
