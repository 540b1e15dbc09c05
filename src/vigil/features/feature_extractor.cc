#include "vigil/features/feature_extractor.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/crypto/pseudonym.h"
#include "vigil/features/payment_motifs.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Column layout. Transaction-level columns first, then the same block for each side.
enum TxColumn : int {
  kAmount = 0,
  kIsRoundAmount,
  kIsCrossCurrency,
  kIsCrossBorder,
  kIsSelfTransfer,
  kHourOfDay,
  kDayOfWeek,
  kCycleLength,
  kPaymentFormat0,  // one-hot, kNumPaymentFormats columns
  kNumTxColumns = kPaymentFormat0 + kNumPaymentFormats,
};

enum SideColumn : int {
  kWindowBase = 0,  // 4 columns per window: in_count, in_sum, out_count, out_sum
  kDistinct24h = kWindowBase + 4 * kNumWindows,
  kDistinct7d,
  kFanIn7d,
  kFanOut7d,
  kEwmaMean,
  kEwmaStd,
  kZscore,
  kSecondsSinceLast,
  kNearThreshold24h,
  kPassThrough24h,
  kNumSideColumns,
};

// Schema v2 appends (v1's columns keep their names and places, so a v1 model binds to v2):
// transaction-level columns over the long memory, then the same block for each side.
enum TxHistoryColumn : int {
  kPairCount = 0,
  kPairSecondsSinceLast,
  kPairReverseCount,
  kPairSecondsSinceReverse,
  kCycleLength30d,
  kScatterGather30d,
  kNumTxHistoryColumns,
};

enum SideHistoryColumn : int {
  kAmountToOutMedian = 0,
  kAmountOutQuantile,
  kAmountToInMedian,
  kAmountInQuantile,
  kAmountToLastIn,
  kSecondsSinceLastIn,
  kOutDegree30d,
  kInDegree30d,
  kOutDegree90d,
  kInDegree90d,
  kNumSideHistoryColumns,
};

// Schema v3 appends counterparty risk (v2's columns keep their names and places): for each
// side, its own standing and its counterparties', before this payment.
enum SideRiskColumn : int {
  kAccountScore = 0,
  kAccountRuleHits,
  kAccountAlerted,
  kCounterpartyMaxScore,
  kCounterpartiesAlerted,
  kCounterpartiesWithRuleHits,
  kNumSideRiskColumns,
};

constexpr int kV1Columns = kNumTxColumns + 2 * kNumSideColumns;
constexpr int kV2Columns = kV1Columns + kNumTxHistoryColumns + 2 * kNumSideHistoryColumns;
constexpr int kV3Columns = kV2Columns + 2 * kNumSideRiskColumns;

std::vector<std::string> ColumnNames() {
  std::vector<std::string> names = {"amount_reporting", "is_round_amount",  "is_cross_currency",
                                    "is_cross_border",  "is_self_transfer", "hour_of_day",
                                    "day_of_week",      "cycle_length"};
  for (int f = 0; f < kNumPaymentFormats; ++f) {
    names.push_back(
        absl::StrCat("payment_format_", PaymentFormatJsonName(static_cast<PaymentFormat>(f))));
  }
  const char* windows[] = {"1h", "24h", "7d"};
  for (const char* side : {"orig_", "bene_"}) {
    for (const char* w : windows) {
      for (const char* stat : {"in_count_", "in_sum_", "out_count_", "out_sum_"}) {
        names.push_back(absl::StrCat(side, stat, w));
      }
    }
    for (const char* n :
         {"distinct_counterparties_24h", "distinct_counterparties_7d", "fan_in_7d", "fan_out_7d",
          "amount_ewma_mean", "amount_ewma_std", "amount_zscore", "seconds_since_last_activity",
          "near_threshold_count_24h", "pass_through_ratio_24h"}) {
      names.push_back(absl::StrCat(side, n));
    }
  }
  for (const char* n : {"pair_count_before", "pair_seconds_since_last", "pair_reverse_count",
                        "pair_seconds_since_reverse", "cycle_length_30d", "scatter_gather_30d"}) {
    names.push_back(n);
  }
  for (const char* side : {"orig_", "bene_"}) {
    for (const char* n :
         {"amount_to_out_median", "amount_out_quantile", "amount_to_in_median",
          "amount_in_quantile", "amount_to_last_in", "seconds_since_last_in", "out_degree_30d",
          "in_degree_30d", "out_degree_90d", "in_degree_90d"}) {
      names.push_back(absl::StrCat(side, n));
    }
  }
  for (const char* side : {"orig_", "bene_"}) {
    for (const char* n : {"account_score", "account_rule_hits", "account_alerted",
                          "counterparty_max_score", "counterparties_alerted",
                          "counterparties_with_rule_hits"}) {
      names.push_back(absl::StrCat(side, n));
    }
  }
  return names;
}

double Ratio(double amount, double reference) {
  return std::isnan(reference) || reference <= 0 ? kNaN : amount / reference;
}

// Seconds from HistorySeconds "then" (0: never) to event time t.
double SecondsSince(uint32_t then, int64_t t) {
  if (then == 0) return kNaN;
  return static_cast<double>(HistorySeconds(t)) - static_cast<double>(then);
}

// One side's long-memory columns, from its history before the payment.
void WriteHistorySide(const AccountHistory& h, double amount, int64_t t, double* out) {
  out[kAmountToOutMedian] = Ratio(amount, h.Median(true));
  out[kAmountOutQuantile] = h.Quantile(true, amount);
  out[kAmountToInMedian] = Ratio(amount, h.Median(false));
  out[kAmountInQuantile] = h.Quantile(false, amount);
  out[kAmountToLastIn] = Ratio(amount, h.last_in_amount());
  out[kSecondsSinceLastIn] = SecondsSince(h.last_in_seconds(), t);
  const AccountHistory::Degrees d = h.DegreesAt(t);
  out[kOutDegree30d] = d.out_30d;
  out[kInDegree30d] = d.in_30d;
  out[kOutDegree90d] = d.out_90d;
  out[kInDegree90d] = d.in_90d;
}

double Units(int64_t cents) { return static_cast<double>(cents) / 100; }

bool IsRoundAmount(const Money& m) {
  // A positive whole multiple of 100 in major units ("9000.00", "15000").
  if (m.units() <= 0) return false;
  int64_t unit = 100;
  for (int i = 0; i < m.scale(); ++i) unit *= 10;
  return m.units() % unit == 0;
}

void WriteSide(const AccountSnapshot& s, const AccountState& state, double zscore, int64_t t,
               double* out) {
  const int64_t previous_activity = s.previous_activity_us;
  for (int w = 0; w < kNumWindows; ++w) {
    const WindowTotals& wt = s.windows[w];
    double* o = out + kWindowBase + 4 * w;
    o[0] = static_cast<double>(wt.in_count);
    o[1] = Units(wt.in_sum_cents);
    o[2] = static_cast<double>(wt.out_count);
    o[3] = Units(wt.out_sum_cents);
  }
  out[kDistinct24h] = static_cast<double>(s.distinct_counterparties_24h);
  out[kDistinct7d] = static_cast<double>(s.distinct_counterparties_7d);
  out[kFanIn7d] = static_cast<double>(s.fan_in_7d);
  out[kFanOut7d] = static_cast<double>(s.fan_out_7d);
  out[kEwmaMean] = state.ewma_mean();
  out[kEwmaStd] = state.ewma_std();
  out[kZscore] = zscore;
  out[kSecondsSinceLast] =
      previous_activity == INT64_MIN ? kNaN : static_cast<double>(t - previous_activity) / 1e6;
  const WindowTotals& day = s.windows[static_cast<int>(Window::k24h)];
  out[kNearThreshold24h] = static_cast<double>(day.near_threshold_count);
  out[kPassThrough24h] = day.in_sum_cents == 0 ? kNaN
                                               : static_cast<double>(day.out_sum_cents) /
                                                     static_cast<double>(day.in_sum_cents);
}

}  // namespace

FeatureExtractor::FeatureExtractor(const FxRates& fx, FeatureConfig config)
    : fx_(fx), config_(config), schema_(Schema()) {}

std::shared_ptr<const FeatureSchema> FeatureExtractor::Schema() {
  static const auto* schema = [] {
    auto s = FeatureSchema::Create("vigil.features.v3", ColumnNames());
    VIGIL_CHECK(s.ok());
    VIGIL_CHECK((*s)->size() == static_cast<size_t>(kV3Columns));
    return new std::shared_ptr<const FeatureSchema>(*std::move(s));
  }();
  return *schema;
}

uint32_t FeatureExtractor::Touch(std::string_view key, uint64_t hash) {
  const uint32_t account = index_.FindOrAdd(key, hash);
  if (account == states_.size()) {
    states_.push_back(AccountState());
    is_dirty_.push_back(0);
  }
  MarkDirty(account);
  return account;
}

void FeatureExtractor::PrepareKeys(const Transaction& tx, Lookahead* la) {
  const crypto::Pseudonymizer* pseudonyms = config_.account_pseudonyms.get();
  if (pseudonyms == nullptr) {
    AssignAccountKey(tx.originator.bank_id, tx.originator.account_id, &la->key[0]);
    AssignAccountKey(tx.beneficiary.bank_id, tx.beneficiary.account_id, &la->key[1]);
    return;
  }
  AssignAccountKey(tx.originator.bank_id, tx.originator.account_id, &plain_key_);
  pseudonyms->AssignOf(plain_key_, &la->key[0]);
  AssignAccountKey(tx.beneficiary.bank_id, tx.beneficiary.account_id, &plain_key_);
  pseudonyms->AssignOf(plain_key_, &la->key[1]);
}

absl::Status FeatureExtractor::Process(const Transaction& tx, absl::Span<double> row) {
  return Process(tx, row, nullptr);
}

absl::Status FeatureExtractor::Process(const Transaction& tx, absl::Span<double> row,
                                       RiskReads* reads) {
  PrepareKeys(tx, &single_);
  for (int k = 0; k < 2; ++k) single_.hash[k] = index_.Hash(single_.key[k]);
  return ProcessPrepared(tx, single_, row, reads);
}

// The lookahead stages. Each one only reads state and issues cache hints, so what it sees may
// be a few transactions stale (an account created or an event vector moved in between): that
// costs a miss, never a wrong result. Stage n runs n * kLookaheadStep transactions ahead of
// the one being applied, so each stage's loads have had time to arrive when the next needs them.

void FeatureExtractor::LookaheadFind(Lookahead* la) const {
  for (int k = 0; k < 2; ++k) {
    la->account[k] = index_.Find(la->key[k], la->hash[k]);
    if (la->account[k] >= 0) PrefetchState(static_cast<uint32_t>(la->account[k]));
  }
}

void FeatureExtractor::PrefetchState(uint32_t account) const {
  const char* p = reinterpret_cast<const char*>(&states_[account]);
  __builtin_prefetch(p, 1);
  __builtin_prefetch(p + 64, 1);
  __builtin_prefetch(p + sizeof(AccountState) - 1, 1);
  __builtin_prefetch(&is_dirty_[account]);
}

void FeatureExtractor::LookaheadStates(const Lookahead& la) const {
  for (int k = 0; k < 2; ++k) {
    if (la.account[k] >= 0) states_[static_cast<size_t>(la.account[k])].PrefetchForApply();
  }
}

void FeatureExtractor::LookaheadReceivers(const Transaction& tx, Lookahead* la) const {
  la->num_receivers = 0;
  if (config_.cycle_max_hops < 3 || la->account[1] < 0) return;
  const int limit = std::min(config_.cycle_max_branching, Lookahead::kMaxReceivers);
  states_[static_cast<size_t>(la->account[1])].ForEachRecentReceiver(
      ToUnixMicros(tx.event_time), limit, [&](uint32_t x) {
        la->receivers[la->num_receivers++] = x;
        // ForEachRecentReceiver reads the events vector and the index pointer: the state's
        // first 32 bytes, one line.
        __builtin_prefetch(&states_[x]);
      });
}

void FeatureExtractor::LookaheadMotifAccounts(Lookahead* la) const {
  la->num_motif_accounts = 0;
  if (config_.motif_budget <= 0 || la->account[0] < 0 || la->account[1] < 0) return;
  // A hint only, and no more than the search will read (every prefetch takes a line fill
  // buffer a demand miss could use): the first accounts of each side's long memory in the
  // right direction, the originator's senders first, as the search reads them.
  int left = std::min(config_.motif_budget, Lookahead::kMaxReceivers);
  for (int side = 0; side < 2; ++side) {
    int n = 0;
    const int cap = std::min(config_.motif_branching, left);
    for (const PairSummary& p : states_[static_cast<size_t>(la->account[side])].history().pairs()) {
      if (n == cap) break;
      if ((side == 0 ? p.in_count : p.out_count) == 0) continue;
      la->motif_accounts[la->num_motif_accounts++] = p.counterparty;
      // The history's own first line (states are not line-aligned): it holds the pairs' address.
      __builtin_prefetch(&states_[p.counterparty].history());
      ++n;
    }
    left -= n;
  }
}

void FeatureExtractor::LookaheadReceiverStates(const Lookahead& la) const {
  for (int i = 0; i < la.num_receivers; ++i) states_[la.receivers[i]].PrefetchRecentReceivers();
  const auto first = static_cast<size_t>(std::max(config_.motif_branching, 0));
  for (int i = 0; i < la.num_motif_accounts; ++i) {
    states_[la.motif_accounts[i]].history().PrefetchPairs(first);
  }
}

void FeatureExtractor::LookaheadCounterpartyRisk(const Transaction& tx,
                                                 const Lookahead& la) const {
  if (config_.counterparty_risk_max <= 0) return;
  // The pairs were fetched with the state (LookaheadStates); the risks WriteRiskSide will read
  // are each in a counterparty's state, at random.
  const int64_t t = ToUnixMicros(tx.event_time);
  for (int k = 0; k < 2; ++k) {
    if (la.account[k] < 0) continue;
    states_[static_cast<size_t>(la.account[k])].history().ForEachActiveCounterparty(
        t, config_.account_window.count(), config_.counterparty_risk_max,
        [&](const PairSummary& p) {
          const char* risk = reinterpret_cast<const char*>(&states_[p.counterparty].risk());
          __builtin_prefetch(risk);
          __builtin_prefetch(risk + sizeof(AccountRisk) - 1);
        });
  }
}

RiskReads::Row RiskReads::Of(size_t row) const {
  const Extent& e = rows_[row];
  Row out;
  if (e.refused) return out;
  const absl::Span<const uint32_t> all(accounts_);
  out.parties = all.subspan(e.begin, 2);
  out.counterparties[0] = all.subspan(e.begin + 2, e.orig_counterparties);
  out.counterparties[1] = all.subspan(e.begin + 2 + e.orig_counterparties, e.bene_counterparties);
  return out;
}

void FeatureExtractor::ProcessBatch(absl::Span<const Transaction> txs, absl::Span<double> rows,
                                    absl::Span<absl::Status> statuses, RiskReads* reads) {
  if (reads != nullptr) reads->Clear();
  const size_t width = schema_->size();
  VIGIL_CHECK(rows.size() == txs.size() * width && statuses.size() == txs.size());
  const auto n = static_cast<int64_t>(txs.size());
  constexpr int64_t d = kLookaheadStep;
  const auto slot = [&](int64_t j) -> Lookahead& {
    return ring_[static_cast<size_t>(j) & (kLookaheadRing - 1)];
  };
  const auto in_range = [n](int64_t j) { return j >= 0 && j < n; };
  for (int64_t i = -5 * d; i < n; ++i) {
    if (const int64_t j = i + 5 * d; in_range(j)) {
      Lookahead& la = slot(j);
      PrepareKeys(txs[static_cast<size_t>(j)], &la);
      for (int k = 0; k < 2; ++k) {
        la.hash[k] = index_.Hash(la.key[k]);
        index_.PrefetchSlot(la.hash[k]);
      }
    }
    if (const int64_t j = i + 4 * d; in_range(j)) LookaheadFind(&slot(j));
    if (const int64_t j = i + 3 * d; in_range(j)) LookaheadStates(slot(j));
    if (const int64_t j = i + 2 * d; in_range(j)) {
      LookaheadReceivers(txs[static_cast<size_t>(j)], &slot(j));
      LookaheadMotifAccounts(&slot(j));
    }
    if (const int64_t j = i + d; in_range(j)) {
      LookaheadReceiverStates(slot(j));
      LookaheadCounterpartyRisk(txs[static_cast<size_t>(j)], slot(j));
    }
    if (i >= 0) {
      const auto u = static_cast<size_t>(i);
      statuses[u] = ProcessPrepared(txs[u], slot(i), rows.subspan(u * width, width), reads);
    }
  }
}

namespace {

constexpr char kRefusedFieldPayload[] = "type.vigil.dev/features.refused_field";

absl::Status Refusing(absl::Status status, std::string_view field) {
  status.SetPayload(kRefusedFieldPayload, absl::Cord(absl::string_view(field.data(), field.size())));
  return status;
}

}  // namespace

std::string RefusedField(const absl::Status& status) {
  const auto field = status.GetPayload(kRefusedFieldPayload);  // absl::optional
  return field.has_value() ? std::string(*field) : std::string();
}

absl::Status FeatureExtractor::ProcessPrepared(const Transaction& tx, const Lookahead& la,
                                               absl::Span<double> row, RiskReads* reads) {
  VIGIL_DCHECK(row.size() == schema_->size());
  // A refused row reads nothing; an applied one replaces this entry below.
  if (reads != nullptr) reads->rows_.emplace_back();
  const int64_t t = ToUnixMicros(tx.event_time);
  const int64_t lateness = config_.allowed_lateness.count();
  if (watermark_ != INT64_MIN && t < watermark_ - lateness) {
    return Refusing(
        absl::OutOfRangeError(absl::StrCat(
            "event_too_late: event time ", FormatUtc(tx.event_time), " is more than ",
            lateness / kMicrosPerSecond, " s behind the latest event time ",
            FormatUtc(FromUnixMicros(watermark_)))),
        "$.timestamp");
  }
  if (t < kMinEventTimeUs || t > kMaxEventTimeUs) {
    return Refusing(absl::InvalidArgumentError(absl::StrCat(
                        "event time ", FormatUtc(tx.event_time),
                        " is outside the supported range 2000..2142")),
                    "$.timestamp");
  }
  auto micros = fx_.ToReportingMicros(tx.amount);
  if (!micros.ok()) {
    // Without a rate the currency is at fault; else the amount is beyond the range.
    return Refusing(micros.status(),
                    fx_.Has(tx.amount.currency()) ? "$.amount.value" : "$.amount.currency");
  }
  if (*micros < 0) {
    return Refusing(absl::InvalidArgumentError(
                        absl::StrCat("amount ", tx.amount.ToString(), " is negative")),
                    "$.amount.value");
  }
  // Windows sum whole cents of the reporting currency, rounded half up: exact and compact.
  const int64_t cents = *micros / 10'000 + (*micros % 10'000 >= 5'000 ? 1 : 0);
  if (cents > kMaxEventAmountCents) {
    return Refusing(absl::InvalidArgumentError(absl::StrCat(
                        "amount ", tx.amount.ToString(),
                        " exceeds the largest amount features track (",
                        Money(kMaxEventAmountCents, 2, fx_.reporting_currency()).ToString(),
                        ")")),
                    "$.amount.value");
  }
  // All checks passed: from here on the transaction is applied.
  if (t > watermark_) watermark_ = t;
  const uint32_t orig = Touch(la.key[0], la.hash[0]);
  const uint32_t bene = Touch(la.key[1], la.hash[1]);
  const bool near =
      *micros < config_.reporting_threshold_micros &&
      static_cast<double>(*micros) >=
          config_.near_threshold_fraction * static_cast<double>(config_.reporting_threshold_micros);

  const double amount = static_cast<double>(*micros) / 1e6;
  WriteHistoryColumns(orig, bene, t, amount, row.data() + kV1Columns);
  if (reads == nullptr) {
    WriteRiskSide(orig, t, row.data() + kV2Columns);
    WriteRiskSide(bene, t, row.data() + kV2Columns + kNumSideRiskColumns);
  } else {
    RiskReads::Extent& e = reads->rows_.back();
    e.refused = false;
    e.begin = static_cast<uint32_t>(reads->accounts_.size());
    reads->accounts_.push_back(orig);
    reads->accounts_.push_back(bene);
    WriteRiskSide(orig, t, row.data() + kV2Columns, &reads->accounts_);
    e.orig_counterparties = static_cast<uint32_t>(reads->accounts_.size()) - e.begin - 2;
    WriteRiskSide(bene, t, row.data() + kV2Columns + kNumSideRiskColumns, &reads->accounts_);
    e.bene_counterparties =
        static_cast<uint32_t>(reads->accounts_.size()) - e.begin - 2 - e.orig_counterparties;
  }

  const ApplyOptions apply{lateness, config_.cycle_max_branching};
  AccountSnapshot orig_snap, bene_snap;
  AccountState& o = states_[orig];
  o.Apply(AccountEvent{t, cents, bene, Direction::kOut, near}, apply, &orig_snap);
  const double orig_z = o.UpdateAmountStats(amount, config_.ewma_alpha);
  AccountState& b = states_[bene];  // same object as o for a self-transfer
  b.Apply(AccountEvent{t, cents, orig, Direction::kIn, near}, apply, &bene_snap);
  const double bene_z = orig == bene ? orig_z : b.UpdateAmountStats(amount, config_.ewma_alpha);
  if (orig == bene) {
    // A self-transfer: both sides see both events, and the activity before the transaction.
    bene_snap.previous_activity_us = orig_snap.previous_activity_us;
    orig_snap = bene_snap;
  }

  double* out = row.data();
  out[kAmount] = amount;
  out[kIsRoundAmount] = IsRoundAmount(tx.amount) ? 1 : 0;
  out[kIsCrossCurrency] =
      tx.settled_amount.has_value() && tx.settled_amount->currency() != tx.amount.currency() ? 1
                                                                                             : 0;
  out[kIsCrossBorder] = tx.originator.country.empty() || tx.beneficiary.country.empty()
                            ? kNaN
                            : (tx.originator.country != tx.beneficiary.country ? 1 : 0);
  out[kIsSelfTransfer] = orig == bene ? 1 : 0;
  const int64_t seconds_of_day = ((t / kMicrosPerSecond) % 86400 + 86400) % 86400;
  out[kHourOfDay] = static_cast<double>(seconds_of_day / 3600);
  // 1970-01-01 was a Thursday; 0 = Monday.
  const int64_t days = (t >= 0 ? t : t - 86400 * kMicrosPerSecond + 1) / (86400 * kMicrosPerSecond);
  out[kDayOfWeek] = static_cast<double>(((days + 3) % 7 + 7) % 7);
  out[kCycleLength] = CycleLength(orig, bene, t);
  for (int f = 0; f < kNumPaymentFormats; ++f) {
    out[kPaymentFormat0 + f] = static_cast<int>(tx.payment_format) == f ? 1 : 0;
  }
  WriteSide(orig_snap, o, orig_z, t, out + kNumTxColumns);
  WriteSide(bene_snap, b, bene_z, t, out + kNumTxColumns + kNumSideColumns);
  const int max_pairs = config_.history_max_counterparties;
  o.mutable_history().Observe(bene, /*out=*/true, t, amount, max_pairs);
  b.mutable_history().Observe(orig, /*out=*/false, t, amount, max_pairs);
  return absl::OkStatus();
}

void FeatureExtractor::WriteHistoryColumns(uint32_t orig, uint32_t bene, int64_t t, double amount,
                                           double* out) const {
  const AccountHistory& oh = states_[orig].history();
  const AccountHistory& bh = states_[bene].history();
  const PairSummary* pair = oh.Find(bene, t);
  const bool paid_before = pair != nullptr && pair->out_count > 0;
  const bool paid_back = pair != nullptr && pair->in_count > 0;
  out[kPairCount] = paid_before ? pair->out_count : 0;
  out[kPairSecondsSinceLast] = paid_before ? SecondsSince(pair->last_out, t) : kNaN;
  out[kPairReverseCount] = paid_back ? pair->in_count : 0;
  out[kPairSecondsSinceReverse] = paid_back ? SecondsSince(pair->last_in, t) : kNaN;
  PaymentMotifs motifs;
  if (orig != bene) {
    motifs = FindPaymentMotifs(
        orig, bene, t, MotifLimits{config_.motif_branching, config_.motif_budget},
        [this](uint32_t a) -> const AccountHistory& { return states_[a].history(); });
  }
  out[kCycleLength30d] = motifs.cycle_length;
  out[kScatterGather30d] = motifs.scatter_gather;
  double* side = out + kNumTxHistoryColumns;
  WriteHistorySide(oh, amount, t, side);
  WriteHistorySide(bh, amount, t, side + kNumSideHistoryColumns);
}

// One side's counterparty-risk columns: its own standing as of t, and that of its most recently
// active counterparties within the account window (at most counterparty_risk_max of them, in
// the long memory's recency order). Risk changes only in RecordRisk, after a decision, so all
// of it is from payments decided before this one.
void FeatureExtractor::WriteRiskSide(uint32_t account, int64_t t, double* out,
                                     std::vector<uint32_t>* read) const {
  // The counterparties first (the account's history alone decides which), then the arithmetic
  // over them that RefreshRiskColumns repeats from a noted list.
  risk_counterparties_.clear();
  states_[account].history().ForEachActiveCounterparty(
      t, config_.account_window.count(), config_.counterparty_risk_max,
      [&](const PairSummary& p) { risk_counterparties_.push_back(p.counterparty); });
  if (read != nullptr) {
    read->insert(read->end(), risk_counterparties_.begin(), risk_counterparties_.end());
  }
  WriteRiskSideFrom(account, risk_counterparties_, t, out);
}

// WriteRiskSide's arithmetic over the counterparties it consulted then, in the same order.
void FeatureExtractor::WriteRiskSideFrom(uint32_t account,
                                         absl::Span<const uint32_t> counterparties, int64_t t,
                                         double* out) const {
  const int64_t bucket_us = RiskBucketMicros();
  const AccountRisk& own = states_[account].risk();
  const AccountStanding s = own.At(t, bucket_us);
  out[kAccountScore] = s.score;
  out[kAccountRuleHits] = s.rule_hits;
  out[kAccountAlerted] = own.AlertedAt(t, bucket_us) ? 1 : 0;
  double best = kNaN;
  int alerted = 0, with_hits = 0;
  for (const uint32_t counterparty : counterparties) {
    const AccountRisk& risk = states_[counterparty].risk();
    const AccountStanding c = risk.At(t, bucket_us);
    if (!std::isnan(c.score) && !(c.score <= best)) best = c.score;
    alerted += risk.AlertedAt(t, bucket_us) ? 1 : 0;
    with_hits += c.rule_hits > 0 ? 1 : 0;
  }
  out[kCounterpartyMaxScore] = best;
  out[kCounterpartiesAlerted] = alerted;
  out[kCounterpartiesWithRuleHits] = with_hits;
}

void FeatureExtractor::RefreshRiskColumns(const Transaction& tx, const RiskReads::Row& reads,
                                          absl::Span<double> row) const {
  VIGIL_CHECK(reads.parties.size() == 2 && row.size() == schema_->size());
  const int64_t t = ToUnixMicros(tx.event_time);
  WriteRiskSideFrom(reads.parties[0], reads.counterparties[0], t, row.data() + kV2Columns);
  WriteRiskSideFrom(reads.parties[1], reads.counterparties[1], t,
                    row.data() + kV2Columns + kNumSideRiskColumns);
}

// Shortest cycle closed by this payment orig -> bene: 2 when bene paid orig in the last 7 days,
// 3 through one intermediary, 4 through two; 0 when none is found within the bounds. The work is
// bounded by branching + branching² membership tests and 1 + branching account states touched.
int FeatureExtractor::CycleLength(uint32_t orig, uint32_t bene, int64_t t) const {
  if (orig == bene || config_.cycle_max_hops <= 0) return 0;
  const AccountState& o = states_[orig];
  // Most accounts have received from only a few accounts in the last week: keep them in a small
  // array so each membership test is a short linear scan instead of a lookup.
  constexpr int kFewSenders = 16;
  uint32_t senders[kFewSenders];
  const int n_senders = o.SendersIfFew(t, senders, kFewSenders);
  if (n_senders == 0) return 0;  // nobody paid orig: no path can return to it
  const auto paid_orig = [&](uint32_t account) {
    if (n_senders < 0) return o.ReceivedFrom(account, t);
    for (int i = 0; i < n_senders; ++i) {
      if (senders[i] == account) return true;
    }
    return false;
  };

  constexpr int kMaxBranching = 256;
  uint32_t first_hop[kMaxBranching];
  int n_first = 0;
  const int branching = std::min(config_.cycle_max_branching, kMaxBranching);
  bool direct = false;
  states_[bene].ForEachRecentReceiver(t, branching, [&](uint32_t x) {
    if (x == orig) direct = true;
    if (x != orig && x != bene) first_hop[n_first++] = x;
  });
  if (direct) return 2;
  if (config_.cycle_max_hops < 2 || n_first == 0) return 0;
  for (int i = 0; i < n_first; ++i) {
    if (paid_orig(first_hop[i])) return 3;
  }
  if (config_.cycle_max_hops < 3) return 0;
  // bene -> x -> y -> orig, y among x's most recent receivers. (Expanding from orig's senders
  // instead would test a different set of edges: the answer must not depend on which side is
  // smaller, or a restored state could answer differently from the live one.)
  for (int i = 0; i < n_first; ++i) {
    const uint32_t x = first_hop[i];
    bool found = false;
    states_[x].ForEachRecentReceiver(t, branching, [&](uint32_t y) {
      if (!found && y != x && y != bene && y != orig && paid_orig(y)) found = true;
    });
    if (found) return 4;
  }
  return 0;
}

FeatureMemoryStats FeatureExtractor::Memory(bool per_account) const {
  FeatureMemoryStats m;
  m.accounts = states_.size();
  m.index_bytes = index_.MemoryBytes() + is_dirty_.capacity() + dirty_.capacity() * 4;
  if (per_account) m.per_account_bytes.reserve(states_.size());
  for (size_t a = 0; a < states_.size(); ++a) {
    const size_t bytes = states_[a].MemoryBytes();
    m.state_bytes += bytes;
    if (per_account) m.per_account_bytes.push_back(static_cast<uint32_t>(bytes));
  }
  m.state_bytes += (states_.capacity() - states_.size()) * sizeof(AccountState);
  return m;
}

void FeatureExtractor::ClearDirty() {
  for (uint32_t a : dirty_) is_dirty_[a] = 0;
  dirty_.clear();
}

int64_t FeatureExtractor::RiskBucketMicros() const {
  return std::max<int64_t>(kMicrosPerHour, config_.account_window.count() / AccountRisk::kBuckets);
}

void FeatureExtractor::MarkDirty(uint32_t account) {
  if (!is_dirty_[account]) {
    is_dirty_[account] = 1;
    dirty_.push_back(account);
  }
}

std::array<AccountStanding, 2> FeatureExtractor::RecordRisk(
    const Transaction& tx, double score, bool rule_hit, const AccountAlertThresholds& thresholds) {
  std::array<AccountStanding, 2> standings;
  PrepareKeys(tx, &single_);
  const int64_t t = ToUnixMicros(tx.event_time);
  const uint32_t tag = AccountRisk::TagOf(tx.id);
  const int64_t bucket_us = RiskBucketMicros();
  for (int k = 0; k < 2; ++k) {
    const int64_t account = index_.Find(single_.key[k]);
    if (account < 0) continue;
    const auto a = static_cast<uint32_t>(account);
    // A payment to oneself is recorded once (the second call finds its tag and answers alike).
    standings[k] = states_[a].mutable_risk().Record(t, bucket_us, score, rule_hit, tag, thresholds);
    MarkDirty(a);
  }
  return standings;
}

std::array<AccountStanding, 2> FeatureExtractor::PreviewRisk(
    const Transaction& tx, double score, bool rule_hit, const AccountAlertThresholds& thresholds) {
  std::array<AccountStanding, 2> standings;
  PrepareKeys(tx, &single_);
  const int64_t t = ToUnixMicros(tx.event_time);
  const uint32_t tag = AccountRisk::TagOf(tx.id);
  const int64_t bucket_us = RiskBucketMicros();
  const int64_t accounts[2] = {index_.Find(single_.key[0]), index_.Find(single_.key[1])};
  // A payment to oneself folds in once (RecordRisk's second call answers alike): one copy.
  AccountRisk copies[2];
  for (int k = 0; k < 2; ++k) {
    if (accounts[k] < 0) continue;
    AccountRisk& risk = (k == 1 && accounts[1] == accounts[0]) ? copies[0] : copies[k];
    if (k == 0 || accounts[1] != accounts[0]) risk = states_[accounts[k]].risk();
    standings[k] = risk.Record(t, bucket_us, score, rule_hit, tag, thresholds);
  }
  return standings;
}

std::array<AccountStanding, 2> FeatureExtractor::StandingsOf(const Transaction& tx) {
  std::array<AccountStanding, 2> standings;
  PrepareKeys(tx, &single_);
  const int64_t t = ToUnixMicros(tx.event_time);
  for (int k = 0; k < 2; ++k) {
    const int64_t account = index_.Find(single_.key[k]);
    if (account >= 0) standings[k] = states_[account].risk().At(t, RiskBucketMicros());
  }
  return standings;
}

EventTimeRepair FeatureExtractor::BoundEventTimes(int64_t limit_us) {
  EventTimeRepair repair;
  repair.watermark_before_us = repair.watermark_after_us = watermark_;
  if (watermark_ == INT64_MIN || watermark_ <= limit_us) return repair;
  int64_t newest = INT64_MIN;
  for (size_t i = 0; i < states_.size(); ++i) {
    AccountState& state = states_[i];
    if (state.frontier() > limit_us) {
      repair.events_dropped += state.DropEventsAfter(limit_us);
      state.mutable_risk().ForgetAfter(limit_us, RiskBucketMicros());
      ++repair.accounts;
      MarkDirty(static_cast<uint32_t>(i));
    }
    newest = std::max(newest, state.frontier());
  }
  watermark_ = newest;
  repair.watermark_after_us = watermark_;
  return repair;
}

absl::Status FeatureExtractor::RestoreAccount(std::string_view key, AccountState state) {
  if (index_.FindOrAdd(key) != states_.size()) {
    return absl::DataLossError(
        absl::StrCat("feature state: account key restored twice or out of order: ",
                     absl::string_view(key.data(), key.size())));
  }
  states_.push_back(std::move(state));
  is_dirty_.push_back(0);
  return absl::OkStatus();
}

}  // namespace vigil
