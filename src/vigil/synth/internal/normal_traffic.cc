#include "vigil/synth/internal/normal_traffic.h"

#include <algorithm>

#include "vigil/synth/internal/samplers.h"

namespace vigil::synth::internal {
namespace {

enum PaymentKind : int {
  kCard = 0,
  kCash,
  kCheque,
  kAch,
  kWire,
  kReinvestment,
  kCurrencyExchange,
  kBitcoin,
  kNumPaymentKinds,
};

// How each payment kind is drawn. Index [k] of the arrays is the payer's AccountKind
// (individual, company, merchant). Medians are in USD; amounts are log-normal.
struct PaymentKindSpec {
  PaymentFormat format;
  std::array<double, kNumAccountKinds> median_usd;
  std::array<double, kNumAccountKinds> sigma;
  std::array<double, kNumAccountKinds> individual_payee_share;  // else a company
  double cross_border;                                          // share paid abroad
  bool self_transfer;
};

constexpr PaymentKindSpec kSpecs[kNumPaymentKinds] = {
    // Card: individuals (and a few companies) pay merchants.
    {PaymentFormat::kCreditCard, {45, 120, 120}, {1.0, 1.1, 1.1}, {0, 0, 0}, 0.03, false},
    {PaymentFormat::kCash, {150, 1200, 900}, {1.1, 1.3, 1.2}, {0.6, 0.5, 0.3}, 0.0, false},
    {PaymentFormat::kCheque, {600, 4500, 3000}, {1.3, 1.5, 1.4}, {0.4, 0.3, 0.1}, 0.01, false},
    {PaymentFormat::kAch, {500, 6000, 8000}, {1.4, 1.6, 1.5}, {0.5, 0.2, 0.0}, 0.04, false},
    {PaymentFormat::kWire, {4000, 25000, 20000}, {1.4, 1.7, 1.5}, {0.2, 0.2, 0.1}, 0.35, false},
    {PaymentFormat::kReinvestment, {1500, 12000, 8000}, {1.8, 2.0, 1.8}, {}, 0.0, true},
    {PaymentFormat::kAch, {2500, 20000, 10000}, {1.5, 1.5, 1.5}, {}, 0.0, true},
    {PaymentFormat::kBitcoin, {300, 3000, 3000}, {1.6, 1.6, 1.6}, {}, 0.0, false},
};

// Payment-kind mix per payer kind (kinds kCard..kCurrencyExchange; Bitcoin is separate).
constexpr double kMix[kNumAccountKinds][kBitcoin] = {
    {0.42, 0.10, 0.10, 0.22, 0.03, 0.12, 0.01},  // individual
    {0.05, 0.04, 0.20, 0.36, 0.15, 0.18, 0.02},  // company
    {0.00, 0.05, 0.20, 0.40, 0.08, 0.27, 0.00},  // merchant
};
// Share of a Bitcoin user's payments made in Bitcoin.
constexpr double kBitcoinShare = 0.25;
// Share of payments that go to one of the payer's favourite payees, and how many there are.
constexpr double kFavouriteShare = 0.6;
constexpr int kFavourites = 5;

// Monday..Sunday activity factors per payer kind.
constexpr double kWeekdayFactor[kNumAccountKinds][7] = {
    {1.0, 1.0, 1.0, 1.0, 1.05, 0.65, 0.5},
    {1.0, 1.0, 1.0, 1.0, 1.0, 0.25, 0.12},
    {1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 0.45},
};

constexpr std::array<double, 24> kRetailHours = {0.6, 0.3, 0.2, 0.15, 0.15, 0.3, 0.8, 1.5,
                                                 2.5, 3.5, 4.5, 5.5,  6.5,  6.0, 5.5, 5.5,
                                                 6.0, 6.5, 6.5, 5.5,  4.5,  3.0, 2.0, 1.2};
constexpr std::array<double, 24> kBusinessHours = {0.2, 0.1, 0.1, 0.1, 0.1, 0.2, 0.5, 1.5,
                                                   4.0, 7.0, 8.0, 8.0, 7.0, 7.5, 8.0, 7.0,
                                                   6.0, 4.0, 2.0, 1.0, 0.6, 0.4, 0.3, 0.2};
constexpr std::array<double, 24> kAroundTheClockHours = {2.0, 1.8, 1.6, 1.5, 1.5, 1.6, 1.8, 2.0,
                                                         2.2, 2.4, 2.5, 2.6, 2.6, 2.6, 2.6, 2.6,
                                                         2.7, 2.8, 3.0, 3.2, 3.2, 3.0, 2.6, 2.3};

constexpr double kMaxUsd = 1e9;

HourProfile ProfileOf(AccountKind k) {
  return k == AccountKind::kIndividual ? HourProfile::kRetail : HourProfile::kBusiness;
}

}  // namespace

const std::array<double, 24>& HourWeights(HourProfile profile) {
  switch (profile) {
    case HourProfile::kRetail:
      return kRetailHours;
    case HourProfile::kBusiness:
      return kBusinessHours;
    case HourProfile::kAroundTheClock:
      break;
  }
  return kAroundTheClockHours;
}

NormalTraffic::NormalTraffic(const Population* population, const FxConverter* fx, uint64_t seed)
    : population_(*population), fx_(*fx), rng_(seed, /*stream=*/2), favourite_salt_(Mix64(seed)) {
  for (int p = 0; p < 3; ++p) hours_[p] = AliasTable(HourWeights(static_cast<HourProfile>(p)));
  for (int k = 0; k < kNumAccountKinds; ++k) payment_mix_[k] = AliasTable(kMix[k]);
  std::array<double, kNumSynthCurrencies> fiat{};
  for (uint8_t c = 0; c < kNumSynthCurrencies; ++c) {
    if (c != kXbt && fx_.available(c)) fiat[c] = kSynthCurrencies[c].bank_share;
  }
  fiat_currencies_ = AliasTable(fiat);
}

void NormalTraffic::GenerateDay(int day_index, int64_t epoch_day, std::vector<SynthRow>* rows) {
  const CivilDay civil = CivilFromDays(epoch_day);
  ScheduledPayments(day_index, epoch_day, civil, rows);
  for (int k = 0; k < kNumAccountKinds; ++k) {
    const auto kind = static_cast<AccountKind>(k);
    const AccountPool& payers = population_.payers(kind);
    if (payers.empty()) continue;
    const double mean = population_.total_activity(kind) * kWeekdayFactor[k][civil.weekday - 1];
    const int64_t count = Poisson(rng_, mean);
    for (int64_t i = 0; i < count; ++i) {
      RandomPayment(payers.Sample(rng_.Next()), day_index, rows);
    }
  }
}

void NormalTraffic::ScheduledPayments(int day_index, int64_t epoch_day, const CivilDay& civil,
                                      std::vector<SynthRow>* rows) {
  const int32_t day_start = day_index * 1440;
  // Salaries: due days 1, 15, 25 and 31 (the last day), paid the Friday before a weekend.
  std::array<bool, 32> payday{};
  for (int due : {1, 15, 25, 31}) {
    payday[due] = IsMonthlyPaymentDay(epoch_day, civil, due, WeekendRule::kPreviousFriday);
  }
  for (const Payroll& pr : population_.payrolls()) {
    if (!payday[pr.due_day]) continue;
    const uint8_t ccy = population_.currency(pr.company);
    for (int32_t e = pr.begin; e < pr.end; ++e) {
      const int32_t employee = population_.employees()[e];
      SynthRow r;
      // A payroll batch takes up to half an hour to go out.
      r.minute = day_start + pr.minute_of_day + static_cast<int32_t>(rng_.UniformInt(30));
      r.from = pr.company;
      r.to = employee;
      r.paid_ccy = ccy;
      r.received_ccy = population_.currency(employee);
      r.paid_minor = population_.salaries()[e];
      r.received_minor = fx_.Convert(r.paid_minor, r.paid_ccy, r.received_ccy);
      r.format = pr.format;
      rows->push_back(r);
    }
  }
  // Rents: due on days 1-5, paid the Monday after a weekend.
  std::array<bool, 6> rent_day{};
  for (int due = 1; due <= 5; ++due) {
    rent_day[due] = IsMonthlyPaymentDay(epoch_day, civil, due, WeekendRule::kNextMonday);
  }
  for (const Lease& lease : population_.leases()) {
    if (!rent_day[lease.due_day]) continue;
    SynthRow r;
    r.minute = day_start + lease.minute_of_day;
    r.from = lease.tenant;
    r.to = lease.landlord;
    r.paid_ccy = population_.currency(lease.tenant);
    r.received_ccy = population_.currency(lease.landlord);
    r.paid_minor = lease.rent_minor;
    r.received_minor = fx_.Convert(r.paid_minor, r.paid_ccy, r.received_ccy);
    r.format = lease.format;
    rows->push_back(r);
  }
}

void NormalTraffic::RandomPayment(int32_t payer, int day_index, std::vector<SynthRow>* rows) {
  const AccountKind payer_kind = population_.kind(payer);
  const int pk = static_cast<int>(payer_kind);
  int kind;
  if (population_.pays_bitcoin(payer) && rng_.Bernoulli(kBitcoinShare)) {
    kind = kBitcoin;
  } else {
    kind = static_cast<int>(payment_mix_[pk].Sample(rng_.Next()));
  }
  const PaymentKindSpec& spec = kSpecs[kind];

  SynthRow r;
  r.from = payer;
  r.format = spec.format;
  r.paid_ccy = population_.currency(payer);
  HourProfile profile = ProfileOf(payer_kind);
  if (kind == kBitcoin) {
    r.paid_ccy = kXbt;
    r.received_ccy = kXbt;
    r.to = PickPayee(payer, population_.bitcoin_users(), kind);
    profile = HourProfile::kAroundTheClock;
  } else if (kind == kCurrencyExchange) {
    r.to = payer;
    r.received_ccy = PickOtherCurrency(r.paid_ccy);
  } else if (spec.self_transfer) {
    r.to = payer;
    r.received_ccy = r.paid_ccy;
  } else {
    const AccountKind payee_kind =
        kind == kCard ? AccountKind::kMerchant
                      : (rng_.Bernoulli(spec.individual_payee_share[pk]) ? AccountKind::kIndividual
                                                                         : AccountKind::kCompany);
    if (rng_.Bernoulli(spec.cross_border)) {
      r.to = PickForeignPayee(payer, payee_kind);
    } else {
      const AccountPool& domestic = population_.domestic(r.paid_ccy, payee_kind);
      r.to = PickPayee(payer, domestic.empty() ? population_.global(payee_kind) : domestic, kind);
    }
    r.received_ccy = population_.currency(r.to);
    // Only when no payee of the kind exists at all (a tiny population without merchants).
    if (r.to == payer) r.format = PaymentFormat::kReinvestment;
  }
  if (!fx_.available(r.paid_ccy) || !fx_.available(r.received_ccy)) {
    // Only Bitcoin can be missing from the table here (bank currencies are filtered by
    // availability): fall back to a domestic self-transfer rather than invent a rate.
    r.paid_ccy = r.received_ccy = population_.currency(payer);
    r.to = payer;
    r.format = PaymentFormat::kReinvestment;
  }
  const double usd = std::min(LogNormal(rng_, spec.median_usd[pk], spec.sigma[pk]), kMaxUsd);
  r.paid_minor = fx_.FromUsd(usd, r.paid_ccy);
  r.received_minor = fx_.Convert(r.paid_minor, r.paid_ccy, r.received_ccy);
  const int hour = static_cast<int>(hours_[static_cast<int>(profile)].Sample(rng_.Next()));
  r.minute = day_index * 1440 + hour * 60 + static_cast<int32_t>(rng_.UniformInt(60));
  rows->push_back(r);
}

int32_t NormalTraffic::PickPayee(int32_t payer, const AccountPool& pool, int payment_kind) {
  if (pool.empty()) return payer;
  if (rng_.Bernoulli(kFavouriteShare)) {
    // A stable choice per (payer, kind, slot): the same few payees again and again.
    const uint64_t slot = rng_.UniformInt(kFavourites);
    const uint64_t key = favourite_salt_ ^ (static_cast<uint64_t>(payer) << 20) ^
                         (static_cast<uint64_t>(payment_kind) << 8) ^ slot;
    const int32_t favourite = pool.Sample(Mix64(key));
    if (favourite != payer) return favourite;
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int32_t payee = pool.Sample(rng_.Next());
    if (payee != payer) return payee;
  }
  // A pool of (almost) only the payer itself: any other account of the population.
  return (payer + 1 + static_cast<int32_t>(rng_.UniformInt(population_.size() - 1))) %
         population_.size();
}

int32_t NormalTraffic::PickForeignPayee(int32_t payer, AccountKind kind) {
  const AccountPool& pool = population_.global(kind);
  if (pool.empty()) return payer;
  const Bank& home = population_.bank_of(payer);
  int32_t payee = payer;
  for (int attempt = 0; attempt < 4; ++attempt) {
    payee = pool.Sample(rng_.Next());
    const Bank& there = population_.bank_of(payee);
    if (payee != payer &&
        (there.country[0] != home.country[0] || there.country[1] != home.country[1])) {
      return payee;
    }
  }
  return payee != payer ? payee : PickPayee(payer, pool, kWire);
}

uint8_t NormalTraffic::PickOtherCurrency(uint8_t ccy) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto c = static_cast<uint8_t>(fiat_currencies_.Sample(rng_.Next()));
    if (c != ccy) return c;
  }
  return ccy == kUsd ? 1 : kUsd;
}

}  // namespace vigil::synth::internal
