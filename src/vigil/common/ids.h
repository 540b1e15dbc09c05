// UUIDv7 identifiers (RFC 9562 section 5.7): 48 bits of Unix milliseconds, version 7, then 74
// bits that are a per-generator counter-plus-random sequence. Ids from one generator are strictly
// increasing, also within one millisecond and across a backwards clock step, so they sort in
// creation order (trace ids, audit records).
//
// Thread safety: UuidV7Generator is safe for concurrent use.
#ifndef VIGIL_COMMON_IDS_H_
#define VIGIL_COMMON_IDS_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/clock.h"

namespace vigil {

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  // Canonical 8-4-4-4-12 lower-case hex form.
  std::string ToString() const;
  int version() const { return bytes[6] >> 4; }
  // Unix milliseconds stored in a version-7 id.
  int64_t unix_millis() const;

  friend bool operator==(const Uuid&, const Uuid&) = default;
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

// Parses the canonical 36-character form (either case).
absl::StatusOr<Uuid> ParseUuid(absl::string_view text);

class UuidV7Generator {
 public:
  // "clock" must outlive the generator. "seed" fixes the random bits (tests); production code
  // passes a seed from std::random_device.
  UuidV7Generator(const Clock& clock, uint64_t seed);

  Uuid Next();

 private:
  const Clock& clock_;
  absl::Mutex mu_;
  uint64_t rng_state_ ABSL_GUARDED_BY(mu_);
  int64_t last_millis_ ABSL_GUARDED_BY(mu_) = 0;
  // 74-bit sequence (12 bits rand_a, 62 bits rand_b) incremented within one millisecond.
  uint64_t seq_hi_ ABSL_GUARDED_BY(mu_) = 0;  // 12 bits
  uint64_t seq_lo_ ABSL_GUARDED_BY(mu_) = 0;  // 62 bits
};

}  // namespace vigil

#endif  // VIGIL_COMMON_IDS_H_
