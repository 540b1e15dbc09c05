#include "vigil/store/kv_write_batch.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(KvWriteBatch, CountsOperationsAndClears) {
  KvWriteBatch batch;
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.ApproximateSize(), 0u);
  batch.Put("a", "key", "value");
  batch.Delete("b", "key");
  EXPECT_EQ(batch.Count(), 2u);
  EXPECT_FALSE(batch.empty());
  // Keys and values are copied: at least their bytes are held.
  EXPECT_GE(batch.ApproximateSize(), 3u + 5u + 3u);
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.Count(), 0u);
  EXPECT_EQ(batch.ApproximateSize(), 0u);
}

TEST(KvWriteBatch, CopiesItsInputs) {
  KvWriteBatch batch;
  {
    std::string key = "temporary";
    batch.Put("a", key, key);
    key.assign(100, 'x');  // the batch must not refer to the caller's buffer
  }
  KvWriteBatch copy = batch;
  EXPECT_EQ(copy.Count(), 1u);
  EXPECT_EQ(copy.ApproximateSize(), batch.ApproximateSize());
}

}  // namespace
}  // namespace vigil
