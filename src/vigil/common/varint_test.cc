#include "vigil/common/varint.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(VarintTest, EncodesLeb128Minimally) {
  std::string out;
  PutVarint(0, &out);
  PutVarint(127, &out);
  PutVarint(128, &out);
  PutVarint(300, &out);
  EXPECT_EQ(out, std::string("\x00\x7f\x80\x01\xac\x02", 6));
}

TEST(VarintTest, RoundTripsEveryWidth) {
  for (const uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 7, (uint64_t{1} << 35) + 3,
                           std::numeric_limits<uint64_t>::max()}) {
    std::string out = "x";
    PutVarint(v, &out);
    size_t offset = 1;
    uint64_t back = 0;
    ASSERT_TRUE(GetVarint(out, &offset, &back)) << v;
    EXPECT_EQ(back, v);
    EXPECT_EQ(offset, out.size());
  }
}

TEST(VarintTest, RefusesTruncatedPaddedAndOverlongEncodings) {
  uint64_t v = 0;
  size_t offset = 0;
  EXPECT_FALSE(GetVarint(std::string("\x80", 1), &offset, &v));  // truncated
  offset = 0;
  EXPECT_FALSE(GetVarint(std::string("\x81\x00", 2), &offset, &v));  // padded: 1 is "\x01"
  offset = 0;
  EXPECT_FALSE(GetVarint(std::string(10, '\xff') + "\x01", &offset, &v));  // over 64 bits
  offset = 0;
  EXPECT_FALSE(GetVarint(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), &offset,
                         &v));  // bit 64 set
}

}  // namespace
}  // namespace vigil
