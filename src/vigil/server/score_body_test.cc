#include "vigil/server/score_body.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;

constexpr char kTx[] =
    R"({"id":"t1","timestamp":"2022-09-01T08:00:00Z","originator":{"account_id":"A1",)"
    R"("bank_id":"B1"},"beneficiary":{"account_id":"A2","bank_id":"B2"},)"
    R"("amount":{"value":"10.00","currency":"USD"}})";

const UtcTime kReceived = FromUnixMicros(1'700'000'000'000'000);

TEST(ScoreBodyTest, OneTransactionIsReadWithItsSendersTime) {
  const ScoreBody read = ReadScoreBody(kTx, MessageFormat::kJson, false, 10, kReceived);
  ASSERT_FALSE(read.refused.has_value());
  ASSERT_EQ(read.items.size(), 1u);
  EXPECT_FALSE(read.items[0].refused.has_value());
  EXPECT_EQ(read.items[0].tx.id, "t1");
  EXPECT_EQ(read.items[0].raw, kTx);
  EXPECT_FALSE(read.items[0].from_message);
  EXPECT_NE(read.items[0].tx.event_time, kReceived);
}

TEST(ScoreBodyTest, ABatchViewsEachItemInTheCallersBodyAndRefusesOnlyTheBadItem) {
  const std::string body = std::string("[") + kTx + ", 7 ]";
  const ScoreBody read = ReadScoreBody(body, MessageFormat::kJson, true, 10, kReceived);
  ASSERT_FALSE(read.refused.has_value());
  ASSERT_EQ(read.items.size(), 2u);
  EXPECT_EQ(read.items[0].raw, kTx);
  EXPECT_GE(read.items[0].raw.data(), body.data());  // a view of the caller's bytes
  EXPECT_LT(read.items[0].raw.data(), body.data() + body.size());
  ASSERT_TRUE(read.items[1].refused.has_value());
  EXPECT_EQ(read.items[1].refused->status, 400);
  EXPECT_THAT(read.items[1].refused->body, HasSubstr(R"("field":"$[1]")"));
}

TEST(ScoreBodyTest, WholeRequestsThatCannotBeReadAreRefused) {
  const auto refused = [](std::string_view body, bool batch, size_t max = 10) {
    const ScoreBody read = ReadScoreBody(body, MessageFormat::kJson, batch, max, kReceived);
    EXPECT_TRUE(read.items.empty());
    return read.refused.has_value() ? read.refused->status : 0;
  };
  EXPECT_EQ(refused("[", true), 400);
  EXPECT_EQ(refused("{}", true), 400);
  EXPECT_EQ(refused("[]", true), 400);
  EXPECT_EQ(refused(std::string("[") + kTx + "," + kTx + "]", true, 1), 413);
  // One transaction that does not parse is that item's error (its field named).
  const ScoreBody bad = ReadScoreBody(R"({"id":"x","amount":{"value":"1,5"}})",
                                      MessageFormat::kJson, false, 10, kReceived);
  ASSERT_EQ(bad.items.size(), 1u);
  ASSERT_TRUE(bad.items[0].refused.has_value());
  EXPECT_EQ(bad.items[0].refused->status, 400);
  EXPECT_FALSE(nlohmann::json::parse(bad.items[0].refused->body)["error"]["field"]
                   .get<std::string>()
                   .empty());
}

TEST(ScoreBodyTest, APaymentMessageIsTimedByItsArrival) {
  const std::string mt103 =
      testing::ReadFile(testing::TestDataPath("swift_mt/messages/mt103_0002.fin"));
  const ScoreBody one = ReadScoreBody(mt103, MessageFormat::kSwiftMt, false, 10, kReceived);
  ASSERT_FALSE(one.refused.has_value());
  ASSERT_EQ(one.items.size(), 1u);
  EXPECT_TRUE(one.items[0].from_message);
  EXPECT_EQ(one.items[0].tx.event_time, kReceived);
  // Two messages one after the other: a batch of two; and a malformed one refused alone.
  const ScoreBody two =
      ReadScoreBody(mt103 + "\n" + mt103, MessageFormat::kSwiftMt, true, 10, kReceived);
  ASSERT_FALSE(two.refused.has_value());
  EXPECT_EQ(two.items.size(), 2u);
  const ScoreBody garbage = ReadScoreBody("{1:F01}", MessageFormat::kSwiftMt, false, 10, kReceived);
  ASSERT_TRUE(garbage.refused.has_value());
  EXPECT_EQ(garbage.refused->status, 400);
}

TEST(ScoreBodyTest, ABatchReplyListsEachItemsAnswerInOrder) {
  ScoreReply ok;
  ok.body = R"({"action":"ALLOW"})";
  ScoreReply conflict;
  conflict.status = 409;
  conflict.transaction_id = "b";
  conflict.body = R"({"error":{"code":"idempotency_conflict","field":"$.id","message":"m"}})";
  ok.transaction_id = "a";
  const ScoreReply batch = BatchReplyOf({&ok, &conflict});
  EXPECT_EQ(batch.status, 200);
  EXPECT_EQ(batch.body, R"({"results":[{"action":"ALLOW"},{"index":1,"status":409,"error":{"code":)"
                        R"("idempotency_conflict","field":"$.id","message":"m"}}]})");
  EXPECT_EQ(batch.conflicts, std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace vigil
