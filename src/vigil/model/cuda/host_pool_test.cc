#include "vigil/model/cuda/host_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace vigil::cuda {
namespace {

// Every index is visited exactly once, in contiguous pieces no smaller than asked.
TEST(HostPool, CoversTheRangeOnceInPiecesOfAtLeastTheMinimum) {
  HostPool pool(3);
  for (size_t n : {size_t{0}, size_t{1}, size_t{999}, size_t{1000}, size_t{4001}, size_t{100000}}) {
    std::vector<std::atomic<int>> seen(n);
    std::atomic<int> pieces{0};
    std::atomic<bool> small{false};
    pool.ParallelFor(n, 1000, [&](size_t begin, size_t end) {
      ++pieces;
      if (end - begin < 1000 && n >= 1000) small = true;
      for (size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "n " << n << " i " << i;
    EXPECT_FALSE(small) << n;
    EXPECT_LE(pieces.load(), 4) << n;  // three workers and the caller
    if (n == 0) {
      EXPECT_EQ(pieces.load(), 0);
    }
  }
}

TEST(HostPool, WithoutWorkersTheCallerDoesItAll) {
  HostPool pool(0);
  const std::thread::id caller = std::this_thread::get_id();
  int calls = 0;
  pool.ParallelFor(1 << 20, 1, [&](size_t begin, size_t end) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(begin, 0u);
    EXPECT_EQ(end, size_t{1} << 20);
  });
  EXPECT_EQ(calls, 1);
}

// Callers on several threads at once, more than the workers: all finish, each with its own
// range covered (a waiting caller runs queued pieces, so nobody waits on an idle queue).
TEST(HostPool, ConcurrentCallersAllFinish) {
  HostPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        const size_t n = 1000 + static_cast<size_t>(c * 97 + round);
        std::vector<int> seen(n, 0);
        pool.ParallelFor(n, 100, [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i) ++seen[i];
        });
        for (int v : seen) wrong += v != 1;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace vigil::cuda
