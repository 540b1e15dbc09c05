#include "vigil/screening/jaro_winkler.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace vigil::screening {
namespace {

// Matched-character flags for strings of up to 64 bytes: one word, on the stack.
class WordFlags {
 public:
  bool Test(size_t i) const { return (bits_ >> i) & 1u; }
  void Set(size_t i) { bits_ |= uint64_t{1} << i; }

 private:
  uint64_t bits_ = 0;
};

// Matched-character flags for longer strings.
class VectorFlags {
 public:
  explicit VectorFlags(size_t n) : flags_(n, 0) {}
  bool Test(size_t i) const { return flags_[i] != 0; }
  void Set(size_t i) { flags_[i] = 1; }

 private:
  std::vector<unsigned char> flags_;
};

struct MatchCounts {
  size_t matches = 0;
  size_t transpositions = 0;  // Already halved.
};

template <typename Flags>
MatchCounts CountMatches(std::string_view a, std::string_view b, Flags& a_flags, Flags& b_flags) {
  const size_t longer = std::max(a.size(), b.size());
  const size_t window = longer / 2 > 0 ? longer / 2 - 1 : 0;
  MatchCounts counts;
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t lo = i > window ? i - window : 0;
    const size_t hi = std::min(b.size(), i + window + 1);
    for (size_t j = lo; j < hi; ++j) {
      if (!b_flags.Test(j) && a[i] == b[j]) {
        a_flags.Set(i);
        b_flags.Set(j);
        ++counts.matches;
        break;
      }
    }
  }
  if (counts.matches == 0) return counts;
  size_t half_transposed = 0;
  size_t j = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a_flags.Test(i)) continue;
    while (!b_flags.Test(j)) ++j;
    if (a[i] != b[j]) ++half_transposed;
    ++j;
  }
  counts.transpositions = half_transposed / 2;
  return counts;
}

MatchCounts Count(std::string_view a, std::string_view b) {
  if (a.size() <= 64 && b.size() <= 64) {
    WordFlags a_flags, b_flags;
    return CountMatches(a, b, a_flags, b_flags);
  }
  VectorFlags a_flags(a.size()), b_flags(b.size());
  return CountMatches(a, b, a_flags, b_flags);
}

double Jaro(std::string_view a, std::string_view b, const MatchCounts& c) {
  if (c.matches == 0) return 0.0;
  const double m = static_cast<double>(c.matches);
  return (m / static_cast<double>(a.size()) + m / static_cast<double>(b.size()) +
          (m - static_cast<double>(c.transpositions)) / m) /
         3.0;
}

int CommonPrefix(std::string_view a, std::string_view b, int max_prefix) {
  const size_t limit = std::min({a.size(), b.size(), static_cast<size_t>(std::max(max_prefix, 0))});
  size_t n = 0;
  while (n < limit && a[n] == b[n]) ++n;
  return static_cast<int>(n);
}

constexpr double kBoostThreshold = 0.7;

}  // namespace

double JaroSimilarity(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  if (a.empty() || b.empty()) return 0.0;
  return Jaro(a, b, Count(a, b));
}

double JaroWinklerSimilarity(std::string_view a, std::string_view b, double prefix_scale,
                             int max_prefix) {
  const double j = JaroSimilarity(a, b);
  if (j <= kBoostThreshold) return j;
  return j + CommonPrefix(a, b, max_prefix) * prefix_scale * (1.0 - j);
}

double JaroWinklerLongToleranceSimilarity(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  if (a.empty() || b.empty()) return 0.0;
  const MatchCounts c = Count(a, b);
  double w = Jaro(a, b, c);
  if (w <= kBoostThreshold) return w;
  const int l = CommonPrefix(a, b, 4);
  w += l * 0.1 * (1.0 - w);
  const double m = static_cast<double>(c.matches);
  const size_t shorter = std::min(a.size(), b.size());
  if (shorter > 4 && m > l + 1 && 2 * m >= static_cast<double>(shorter + l)) {
    w += (1.0 - w) * (m - l - 1) / static_cast<double>(a.size() + b.size() - 2 * l + 2);
  }
  return w;
}

}  // namespace vigil::screening
