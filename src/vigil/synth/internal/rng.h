// Rng: the generator's pseudo-random source, xoshiro256** (Blackman & Vigna, 2018) seeded through
// splitmix64. vigil implements both itself, and the samplers on top of them (samplers.h), because
// the outputs of std::*_engine seeding helpers and std::*_distribution are implementation-defined:
// the same seed must give the same bytes with any standard library.
//
//   Rng rng(seed, /*stream=*/2);
//   uint64_t bits = rng.Next();
//   double u = rng.Uniform();       // [0, 1)
//   int64_t k = rng.UniformInt(6);  // [0, 6)
//
// Streams: Rng(seed, a) and Rng(seed, b) with a != b are independent for practical purposes, so
// one part of the model (e.g. the laundering injector) can change how many numbers it draws
// without shifting another part's sequence.
//
// Thread safety: externally synchronized (a plain value type; give each thread its own Rng).
#ifndef VIGIL_SYNTH_INTERNAL_RNG_H_
#define VIGIL_SYNTH_INTERNAL_RNG_H_

#include <cstdint>

#include "absl/numeric/int128.h"

namespace vigil::synth::internal {

// One step of splitmix64: advances *state and returns the next output.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A stateless 64-bit mixer (the splitmix64 finalizer over x + golden ratio): a cheap hash used to
// derive stable per-entity choices (an account's favourite payees, its salary batch time).
inline uint64_t Mix64(uint64_t x) {
  uint64_t s = x;
  return SplitMix64(&s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0) {
    uint64_t sm = seed ^ Mix64(stream ^ 0x5DEECE66DULL);
    for (uint64_t& word : s_) word = SplitMix64(&sm);
  }

  // The raw xoshiro256** state, for known-answer tests. REQUIRES: not all zero.
  static Rng FromStateForTest(uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3) {
    Rng rng(0);
    rng.s_[0] = s0;
    rng.s_[1] = s1;
    rng.s_[2] = s2;
    rng.s_[3] = s3;
    return rng;
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  // Uniform integer in [0, n) by Lemire's multiply-high (bias below n / 2^64, irrelevant here and
  // in exchange exactly one draw per call). REQUIRES: n > 0.
  uint64_t UniformInt(uint64_t n) {
    return absl::Uint128High64(absl::uint128(Next()) * absl::uint128(n));
  }

  // Uniform integer in [lo, hi], both ends included. REQUIRES: lo <= hi.
  int64_t UniformRange(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(UniformInt(static_cast<uint64_t>(hi - lo) + 1));
  }

  bool Bernoulli(double p) { return Uniform() < p; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4];
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_RNG_H_
