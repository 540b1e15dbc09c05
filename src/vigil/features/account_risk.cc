#include "vigil/features/account_risk.h"

#include <algorithm>
#include <cmath>

#include "vigil/features/internal/fixed_encoding.h"

namespace vigil {
namespace {

using features_internal::GetFixed;
using features_internal::PutFixed;

constexpr double kScoreSteps = 65534.0;

uint16_t QuantizeScore(double score) {
  const double s = std::clamp(score, 0.0, 1.0);
  return static_cast<uint16_t>(1 + static_cast<int>(std::ceil(s * kScoreSteps)));
}

double ScoreOf(uint16_t q) { return q == 0 ? std::nan("") : (q - 1) / kScoreSteps; }

}  // namespace

int64_t AccountRisk::BucketOf(int64_t time_us, int64_t bucket_us) {
  return std::max<int64_t>(0, time_us / bucket_us);
}

uint32_t AccountRisk::TagOf(std::string_view transaction_id) {
  // FNV-1a: stable across builds and restarts (the tag is stored with the account).
  uint32_t h = 2166136261u;
  for (unsigned char c : transaction_id) {
    h ^= c;
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;
}

void AccountRisk::AdvanceTo(int64_t bucket) {
  const int64_t current = static_cast<int64_t>(newest_) - 1;
  if (newest_ == 0 || bucket - current >= kBuckets) {
    max_score_.fill(0);
    rule_hits_.fill(0);
  } else {
    for (int64_t b = current + 1; b <= bucket; ++b) {
      max_score_[b % kBuckets] = 0;
      rule_hits_[b % kBuckets] = 0;
    }
  }
  newest_ = static_cast<uint32_t>(bucket + 1);
}

AccountStanding AccountRisk::StandingAt(int64_t bucket) const {
  AccountStanding s;
  if (newest_ == 0) return s;
  const int64_t current = static_cast<int64_t>(newest_) - 1;
  // The buckets of the window ending at "bucket" that the stored window (ending at "current")
  // still holds.
  const int64_t first = std::max(bucket, current) - kBuckets + 1;
  const int64_t last = std::min(bucket, current);
  uint16_t best = 0;
  for (int64_t b = std::max<int64_t>(first, 0); b <= last; ++b) {
    best = std::max(best, max_score_[b % kBuckets]);
    s.rule_hits += rule_hits_[b % kBuckets];
  }
  s.score = ScoreOf(best);
  return s;
}

AccountStanding AccountRisk::At(int64_t time_us, int64_t bucket_us) const {
  return StandingAt(BucketOf(time_us, bucket_us));
}

bool AccountRisk::AlertedAt(int64_t time_us, int64_t bucket_us) const {
  if (alert_bucket_ == 0) return false;
  const int64_t alerted = static_cast<int64_t>(alert_bucket_) - 1;
  const int64_t bucket = BucketOf(time_us, bucket_us);
  return alerted <= bucket && bucket - alerted < kBuckets;
}

AccountStanding AccountRisk::Record(int64_t time_us, int64_t bucket_us, double score,
                                    bool rule_hit, uint32_t tag,
                                    const AccountAlertThresholds& thresholds) {
  const int64_t bucket = BucketOf(time_us, bucket_us);
  if (tag == 0 || tag != last_tag_) {
    if (newest_ == 0 || bucket > static_cast<int64_t>(newest_) - 1) AdvanceTo(bucket);
    const int64_t current = static_cast<int64_t>(newest_) - 1;
    if (bucket > current - kBuckets) {  // else older than the window: changes nothing
      const int slot = static_cast<int>(bucket % kBuckets);
      if (!std::isnan(score)) max_score_[slot] = std::max(max_score_[slot], QuantizeScore(score));
      if (rule_hit && rule_hits_[slot] < 255) ++rule_hits_[slot];
    }
    last_tag_ = tag;
  }
  const int64_t current = static_cast<int64_t>(newest_) - 1;
  AccountStanding s = StandingAt(current);
  if (alert_bucket_ != 0 && tag != 0 && tag == alert_tag_) {
    s.alert = true;  // this payment raised the alert before: the same answer
    s.cause = static_cast<AccountAlertCause>(alert_cause_);
    return s;
  }
  AccountAlertCause cause = AccountAlertCause::kNone;
  if (!std::isnan(thresholds.score) && !std::isnan(s.score) && s.score >= thresholds.score) {
    cause = AccountAlertCause::kScore;
  } else if (thresholds.rule_hits > 0 && s.rule_hits >= thresholds.rule_hits) {
    cause = AccountAlertCause::kRuleHits;
  }
  const bool quiet =
      alert_bucket_ == 0 || current - (static_cast<int64_t>(alert_bucket_) - 1) >= kBuckets;
  if (cause != AccountAlertCause::kNone && quiet) {
    alert_bucket_ = static_cast<uint32_t>(current + 1);
    alert_tag_ = tag;
    alert_cause_ = static_cast<uint8_t>(cause);
    s.alert = true;
    s.cause = cause;
  }
  return s;
}

void AccountRisk::ForgetAfter(int64_t limit_us, int64_t bucket_us) {
  if (newest_ != 0 && static_cast<int64_t>(newest_) - 1 > BucketOf(limit_us, bucket_us)) {
    *this = AccountRisk();
  }
}

void AccountRisk::EncodeTo(std::string* out) const {
  for (uint16_t q : max_score_) PutFixed(out, q);
  for (uint8_t h : rule_hits_) PutFixed(out, h);
  PutFixed(out, alert_cause_);
  PutFixed(out, reserved_);
  PutFixed(out, newest_);
  PutFixed(out, alert_bucket_);
  PutFixed(out, alert_tag_);
  PutFixed(out, last_tag_);
}

bool AccountRisk::DecodeFrom(std::string_view* in) {
  std::string_view v = *in;
  AccountRisk r;
  for (uint16_t& q : r.max_score_) {
    if (!GetFixed(&v, &q)) return false;
  }
  for (uint8_t& h : r.rule_hits_) {
    if (!GetFixed(&v, &h)) return false;
  }
  if (!GetFixed(&v, &r.alert_cause_) || !GetFixed(&v, &r.reserved_) || !GetFixed(&v, &r.newest_) ||
      !GetFixed(&v, &r.alert_bucket_) || !GetFixed(&v, &r.alert_tag_) ||
      !GetFixed(&v, &r.last_tag_)) {
    return false;
  }
  if (r.alert_cause_ > static_cast<uint8_t>(AccountAlertCause::kRuleHits) || r.reserved_ != 0 ||
      (r.newest_ == 0 && r.alert_bucket_ != 0) || r.alert_bucket_ > r.newest_) {
    return false;
  }
  *this = r;
  *in = v;
  return true;
}

}  // namespace vigil
