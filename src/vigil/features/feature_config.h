// FeatureConfig: the knobs of per-account feature extraction, with their defaults.
#ifndef VIGIL_FEATURES_FEATURE_CONFIG_H_
#define VIGIL_FEATURES_FEATURE_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <memory>

namespace vigil {
namespace crypto {
class Pseudonymizer;
}  // namespace crypto

struct FeatureConfig {
  // Reporting threshold in micro-units of the reporting currency (default 10,000 USD, the US
  // currency transaction report threshold). A payment is "near threshold" when its reporting
  // amount is in [near_threshold_fraction × threshold, threshold).
  int64_t reporting_threshold_micros = 10'000'000'000;
  double near_threshold_fraction = 0.9;

  // How far behind the watermark (the latest event time seen) an event may arrive and still be
  // applied. Later events are rejected with reason "event_too_late": accepting them would mean
  // keeping unbounded history. Replay orders files by event time, so it never hits this bound.
  std::chrono::microseconds allowed_lateness = std::chrono::minutes(10);

  // Weight of the newest amount in the per-account EWMA mean and variance (count-based).
  double ewma_alpha = 0.1;

  // Bounded cycle check: does money from the beneficiary reach the originator within
  // cycle_max_hops payments in the last 7 days? At most cycle_max_branching distinct receivers are
  // expanded per account on the path (the most recent ones), so one check touches at most
  // 1 + cycle_max_branching account states and makes at most branching + branching² membership
  // tests. 0 hops disables the check; at most 3 hops are supported.
  int cycle_max_hops = 3;
  int cycle_max_branching = 8;

  // The long memory of schema v2 (AccountHistory, PaymentMotifs): at most this many
  // counterparties remembered per account over 90 days (24 bytes each; past it the least
  // recently updated is forgotten and distinct counts saturate), and the motif search's bounds:
  // counterparties expanded per account and account histories read per payment. 0 (the
  // default) turns the search off and cycle_length_30d / scatter_gather_30d read 0: at 1M
  // accounts it costs 1.7-5.7 us a payment (budget 1-24; the rest of the feature stage takes
  // 1.6-2.8) and carried no measurable signal on the external data (docs/detection.md).
  int history_max_counterparties = 20;
  int motif_branching = 8;
  int motif_budget = 0;

  // The window of each account's risk (features/account_risk.h: the highest score and the rule
  // hits of its payments, and its alerts), kept in AccountRisk::kBuckets buckets of a sixth of
  // it each (at least an hour). Changing it changes what a stored risk means: the buckets of a
  // state written under another window are read as this window's.
  std::chrono::microseconds account_window = std::chrono::hours(24 * 30);
  // Counterparty risk (schema v3): the risk of at most this many of each party's counterparties
  // is read per payment (its most recently active ones within the account window, from its
  // long memory): at most 2 x this many account states touched, beyond the two parties'.
  int counterparty_risk_max = 8;

  // When set, accounts are known by the keyed hash of their key ("<bank>\x1f<account>"),
  // never by the key itself: the state, in memory and stored, holds no account id
  // (docs/security.md). A stored state records which key made its pseudonyms
  // (FeatureStore refuses to mix).
  std::shared_ptr<const crypto::Pseudonymizer> account_pseudonyms;
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_FEATURE_CONFIG_H_
