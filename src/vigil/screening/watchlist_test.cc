#include "vigil/screening/watchlist.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::screening {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

WatchlistEntry Entry(std::string id, std::string name) {
  WatchlistEntry e;
  e.id = std::move(id);
  e.name = std::move(name);
  return e;
}

TEST(WatchlistTest, FindsEntriesById) {
  ASSERT_OK_AND_ASSIGN(
      const Watchlist w,
      Watchlist::Create("l", ContentVersion("abc"), {Entry("1", "ONE"), Entry("2", "TWO")}));
  EXPECT_EQ(w.name(), "l");
  EXPECT_EQ(w.size(), 2u);
  ASSERT_NE(w.Find("2"), nullptr);
  EXPECT_EQ(w.Find("2")->name, "TWO");
  EXPECT_EQ(w.Find("3"), nullptr);
  // sha256("abc")
  EXPECT_EQ(w.version(), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(WatchlistTest, CopiesKeepTheirOwnIndex) {
  ASSERT_OK_AND_ASSIGN(const Watchlist w, Watchlist::Create("l", "v", {Entry("1", "ONE")}));
  const Watchlist copy = w;
  ASSERT_NE(copy.Find("1"), nullptr);
  EXPECT_EQ(copy.Find("1"), &copy.entries()[0]);
}

TEST(WatchlistTest, RejectsEmptyIdEmptyNameAndDuplicateIds) {
  EXPECT_THAT(Watchlist::Create("l", "v", {Entry("", "X")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entry 0: id is empty")));
  EXPECT_THAT(Watchlist::Create("l", "v", {Entry("7", "")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name is empty")));
  EXPECT_THAT(Watchlist::Create("l", "v", {Entry("7", "A"), Entry("7", "B")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 1: duplicate id \"7\" (first at entry 0)")));
}

}  // namespace
}  // namespace vigil::screening
