#include "vigil/audit/record_chunk.h"

#include <lz4.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::vector<std::string> Records(int n, size_t size) {
  std::vector<std::string> records;
  for (int i = 0; i < n; ++i) {
    std::string r = absl::StrCat("record ", i, " action review reason structuring ");
    while (r.size() < size) r += static_cast<char>('a' + (r.size() * 7 + i) % 26);
    records.push_back(r);
  }
  return records;
}

std::vector<std::string> Split(const RecordChunk& chunk) {
  std::vector<std::string> out;
  for (size_t i = 0; i < chunk.size(); ++i) out.emplace_back(chunk.record(i));
  return out;
}

TEST(RecordChunkTest, RoundTripsWithEitherCodec) {
  const std::vector<std::string> records = Records(40, 900);
  for (ChunkCodec codec : {ChunkCodec::kStored, ChunkCodec::kLz4}) {
    const std::string stored = EncodeRecordChunk(records, codec);
    ASSERT_OK_AND_ASSIGN(RecordChunk chunk, RecordChunk::Parse(stored));
    EXPECT_EQ(chunk.codec(), codec);
    EXPECT_EQ(Split(chunk), records);
  }
  // Similar records compress: the chunk is a fraction of their bytes.
  size_t raw = 0;
  for (const std::string& r : records) raw += r.size();
  EXPECT_LT(EncodeRecordChunk(records, ChunkCodec::kLz4).size(), raw / 2);
}

TEST(RecordChunkTest, TheStoredFormIsTheDocumentedOne) {
  const std::string stored = EncodeRecordChunk({"ab", "", "xyz"}, ChunkCodec::kStored);
  // "VRC" 1 | codec 0 | count 3 | payload length 8 | 2 "ab" 0 3 "xyz"
  EXPECT_EQ(stored, std::string("VRC\x01\x00\x03\x08\x02" "ab\x00\x03xyz", 15));
  ASSERT_OK_AND_ASSIGN(RecordChunk chunk, RecordChunk::Parse(stored));
  EXPECT_THAT(Split(chunk), ::testing::ElementsAre("ab", "", "xyz"));

  // An LZ4 chunk is the LZ4 block of that payload: any LZ4 implementation reads it.
  const std::vector<std::string> records = Records(20, 500);
  const std::string lz4 = EncodeRecordChunk(records, ChunkCodec::kLz4);
  ASSERT_EQ(lz4[4], '\x01');
  const std::string plain = EncodeRecordChunk(records, ChunkCodec::kStored);
  // Header of the stored one: magic, codec, count (1 byte), payload length (2 bytes).
  const std::string payload = plain.substr(8);
  ASSERT_EQ(lz4.substr(5, 3), plain.substr(5, 3));  // same count and length
  std::string out(payload.size(), '\0');
  const int n = LZ4_decompress_safe(lz4.data() + 8, out.data(), static_cast<int>(lz4.size() - 8),
                                    static_cast<int>(out.size()));
  ASSERT_EQ(n, static_cast<int>(payload.size()));
  EXPECT_EQ(out, payload);
}

TEST(RecordChunkTest, IncompressibleRecordsAreStoredUncompressed) {
  std::mt19937_64 rng(7);
  std::vector<std::string> records(3, std::string(2000, '\0'));
  for (std::string& r : records) {
    for (char& c : r) c = static_cast<char>(rng());
  }
  const std::string stored = EncodeRecordChunk(records, ChunkCodec::kLz4);
  ASSERT_OK_AND_ASSIGN(RecordChunk chunk, RecordChunk::Parse(stored));
  EXPECT_EQ(chunk.codec(), ChunkCodec::kStored);
  EXPECT_EQ(Split(chunk), records);
}

TEST(RecordChunkTest, TheBuilderIsReusable) {
  RecordChunkBuilder builder(ChunkCodec::kLz4);
  builder.Add("one");
  builder.Add("two");
  EXPECT_EQ(builder.records(), 2u);
  EXPECT_EQ(builder.payload_bytes(), 8u);
  ASSERT_OK_AND_ASSIGN(RecordChunk first, RecordChunk::Parse(builder.Finish()));
  EXPECT_EQ(builder.records(), 0u);
  builder.Add("three");
  ASSERT_OK_AND_ASSIGN(RecordChunk second, RecordChunk::Parse(builder.Finish()));
  EXPECT_THAT(Split(first), ::testing::ElementsAre("one", "two"));
  EXPECT_THAT(Split(second), ::testing::ElementsAre("three"));
}

TEST(RecordChunkTest, DamageIsRefusedWithWhereAndWhy) {
  const std::string good = EncodeRecordChunk({"ab", "", "xyz"}, ChunkCodec::kStored);
  const auto damaged = [&](size_t at, char value) {
    std::string s = good;
    s[at] = value;
    return s;
  };
  EXPECT_THAT(RecordChunk::Parse("VAR\x01"), StatusIs(absl::StatusCode::kDataLoss,
                                                      HasSubstr("not a record chunk")));
  EXPECT_THAT(RecordChunk::Parse(damaged(3, '\x02')),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("byte 3: chunk format version 2")));
  EXPECT_THAT(RecordChunk::Parse(damaged(4, '\x07')),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("byte 4: unknown codec 7")));
  EXPECT_THAT(RecordChunk::Parse(damaged(5, '\x00')),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad record count")));
  EXPECT_THAT(RecordChunk::Parse(damaged(5, '\x02')),  // two records declared, three stored
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("follow the 2 records")));
  EXPECT_THAT(RecordChunk::Parse(damaged(5, '\x04')),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("record 3 of 4")));
  EXPECT_THAT(RecordChunk::Parse(damaged(6, '\x09')),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the header says 9")));
  EXPECT_THAT(RecordChunk::Parse(damaged(7, '\x05')),  // the first record overruns
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("overruns")));
  EXPECT_THAT(RecordChunk::Parse(good + "x"), StatusIs(absl::StatusCode::kDataLoss));
  // A padded varint is not canonical.
  EXPECT_THAT(RecordChunk::Parse(std::string("VRC\x01\x00\x83\x00\x08", 8)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad record count")));
  // A length past the limit is refused before anything is allocated.
  EXPECT_THAT(RecordChunk::Parse(std::string("VRC\x01\x01\x01\xff\xff\xff\xff\x0f", 11)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad payload length")));

  // Flipped bytes in an LZ4 chunk: refused, never a crash (seeded, every position).
  const std::string lz4 = EncodeRecordChunk(Records(30, 700), ChunkCodec::kLz4);
  std::mt19937_64 rng(11);
  int refused = 0;
  for (size_t at = 0; at < lz4.size(); ++at) {
    std::string s = lz4;
    s[at] = static_cast<char>(s[at] ^ static_cast<char>(1 + rng() % 255));
    absl::StatusOr<RecordChunk> chunk = RecordChunk::Parse(s);
    if (!chunk.ok()) {
      EXPECT_EQ(chunk.status().code(), absl::StatusCode::kDataLoss);
      ++refused;
    }
  }
  // A flip in a literal decompresses to other record bytes (the record's hash catches those);
  // one in the header or the LZ4 sequence structure is refused here.
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace vigil::audit
