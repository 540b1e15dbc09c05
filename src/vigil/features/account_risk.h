// AccountRisk: one account's risk over a sliding window of event time, folded from the
// decisions on the payments it sends and receives, and whether it has alerted.
//
// Aggregation (monotone, documented in docs/policy.md "Account alerts"): the account's score
// is the highest model score among its payments in the window, and its rule hits are how many
// of them fired at least one active rule. Raising any payment's score or adding a payment never
// lowers either; the score is the same "highest score of the payments it sends or receives"
// that `vigil model train` and `vigil model evaluate` measure accounts by, so an account
// threshold chosen there applies here unchanged.
//
// Bounded: the window is kBuckets buckets of window / kBuckets each (30 days: 5-day buckets);
// a bucket keeps the highest score (to 1/65534, rounded up) and the rule hits (saturating at
// 255) of its payments. A payment counts from its bucket until kBuckets - 1 buckets later, so
// for between window - window / kBuckets and window of event time. 36 bytes per account.
//
// Alerts: an account alerts when its score reaches the alert score or its rule hits the alert
// count (AccountAlertThresholds), at most once per window: after an alert it stays quiet for
// kBuckets buckets, then alerts again if it is still (or again) over. The payment that raised an
// alert is remembered by a tag (a hash of its transaction id): the same payment recorded again
// (a retry of a decision that was never acknowledged) is answered with the same alert, and
// the last payment recorded is not folded in twice. A retry that arrives after another payment
// of the account was recorded counts its rule hit again (the score, a maximum, cannot change).
//
// Late payments (within the lateness bound) fold into their own bucket; a payment older than
// the window's oldest bucket changes nothing. The standing reported is the account's as of its
// newest bucket.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_RISK_H_
#define VIGIL_FEATURES_ACCOUNT_RISK_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "vigil/core/account_standing.h"

namespace vigil {

class AccountRisk {
 public:
  static constexpr int kBuckets = 6;

  // Folds in one payment of this account at event time "time_us" (>= kMinEventTimeUs) with its
  // model score (NaN: not scored) and whether an active rule fired; "tag" identifies the
  // payment (TagOf). Returns the account's standing after it, alert included.
  // REQUIRES: bucket_us > 0.
  AccountStanding Record(int64_t time_us, int64_t bucket_us, double score, bool rule_hit,
                         uint32_t tag, const AccountAlertThresholds& thresholds);

  // The standing as of event time "time_us" (no alert), without folding anything in.
  AccountStanding At(int64_t time_us, int64_t bucket_us) const;
  // Whether the account's last alert was raised within the window ending at "time_us"'s bucket
  // (an open alert: it was raised at most kBuckets - 1 buckets before, not after).
  bool AlertedAt(int64_t time_us, int64_t bucket_us) const;

  // A payment's tag: a nonzero 32-bit hash of its transaction id.
  static uint32_t TagOf(std::string_view transaction_id);

  bool empty() const { return newest_ == 0; }
  // Forgets everything when the risk holds a payment dated after "limit_us" (a poisoned state's
  // repair, FeatureExtractor::BoundEventTimes): its buckets cannot be told apart.
  void ForgetAfter(int64_t limit_us, int64_t bucket_us);

  // Fixed 36-byte encoding (AccountState embeds it); DecodeFrom consumes it from the front of
  // *in and returns false when it is short or malformed.
  void EncodeTo(std::string* out) const;
  bool DecodeFrom(std::string_view* in);

  bool operator==(const AccountRisk&) const = default;

 private:
  static int64_t BucketOf(int64_t time_us, int64_t bucket_us);
  // Moves the window so that "bucket" is the newest, clearing the buckets it leaves behind.
  void AdvanceTo(int64_t bucket);
  AccountStanding StandingAt(int64_t bucket) const;

  std::array<uint16_t, kBuckets> max_score_{};  // 0: no score; else 1 + ceil(score * 65534)
  std::array<uint8_t, kBuckets> rule_hits_{};
  uint8_t alert_cause_ = 0;  // AccountAlertCause of the last alert
  uint8_t reserved_ = 0;
  uint32_t newest_ = 0;       // 1 + the newest bucket's number; 0 before the first payment
  uint32_t alert_bucket_ = 0;  // 1 + the bucket of the last alert; 0: never alerted
  uint32_t alert_tag_ = 0;     // the payment that raised it
  uint32_t last_tag_ = 0;      // the payment folded in last
};
static_assert(sizeof(AccountRisk) == 36);

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_RISK_H_
