#include "vigil/synth/internal/population.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/synth/internal/samplers.h"

namespace vigil::synth::internal {
namespace {

constexpr uint64_t kMask35 = (uint64_t{1} << 35) - 1;
constexpr char kHexDigits[] = "0123456789ABCDEF";

constexpr double kIndividualShare = 0.85;
constexpr double kCompanyShare = 0.10;  // the rest are merchants
constexpr double kEmployedShare = 0.70;
constexpr double kTenantShare = 0.40;

// A bijection on [0, 2^35) keyed by the seed: distinct account indices get distinct ids that
// do not reveal their order.
uint64_t ScrambleAccount(uint64_t i, uint64_t key) {
  const uint64_t a = Mix64(key) | 1;
  const uint64_t b = Mix64(key + 1) | 1;
  uint64_t x = (i * a) & kMask35;
  x ^= x >> 17;
  x = (x * b) & kMask35;
  x ^= x >> 13;
  return (x + Mix64(key + 2)) & kMask35;
}

void WriteHexId(uint64_t value, char* out) {
  for (int i = 8; i >= 0; --i) {
    out[i] = kHexDigits[value & 0xF];
    value >>= 4;
  }
}

void FillPool(std::vector<int32_t> members, const std::vector<float>& weight, AccountPool* pool) {
  pool->members = std::move(members);
  if (pool->members.empty()) return;
  std::vector<double> w(pool->members.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = weight[pool->members[i]];
  pool->table = AliasTable(w);
}

}  // namespace

absl::StatusOr<Population> Population::Build(int64_t accounts, uint64_t seed,
                                             const FxConverter& fx) {
  if (accounts < kMinAccounts || accounts > kMaxAccounts) {
    return absl::InvalidArgumentError(absl::StrCat("accounts must be in [", kMinAccounts, ", ",
                                                   kMaxAccounts, "], got ", accounts));
  }
  Population p;
  Rng rng(seed, /*stream=*/1);
  p.BuildBanks(accounts, fx, rng);
  p.BuildAccounts(accounts, seed, rng);
  p.BuildPools();
  p.BuildPayrolls(fx, rng);
  p.BuildLeases(fx, rng);
  p.BuildLaunderers(rng);
  if (p.launderers_.size() < static_cast<size_t>(kMinLaunderers)) {
    return absl::InvalidArgumentError(
        absl::StrCat("too few individuals and companies (", p.launderers_.size(),
                     ") to draw laundering patterns from; use more accounts"));
  }
  return p;
}

void Population::BuildBanks(int64_t accounts, const FxConverter& fx, Rng& rng) {
  std::array<double, kNumSynthCurrencies> share{};
  double total_share = 0;
  for (uint8_t c = 0; c < kNumSynthCurrencies; ++c) {
    if (fx.available(c)) share[c] = kSynthCurrencies[c].bank_share;
    total_share += share[c];
  }
  // USD is always available (FxConverter::Create requires it) and has a positive share.
  const int64_t target_banks = std::max<int64_t>(8, accounts / 150);
  // Affine bijection on [0, 10^6): a is coprime to 10.
  uint64_t a = (rng.Next() % 999983) | 1;
  if (a % 5 == 0) a += 2;
  const uint64_t offset = rng.UniformInt(1000000);
  for (uint8_t c = 0; c < kNumSynthCurrencies; ++c) {
    if (share[c] <= 0) continue;
    const int64_t n = std::max<int64_t>(
        1, std::llround(static_cast<double>(target_banks) * share[c] / total_share));
    std::vector<double> sizes;
    int num_countries = 0;
    while (num_countries < 5 && !kSynthCurrencies[c].countries[num_countries].empty()) {
      ++num_countries;
    }
    for (int64_t i = 0; i < n; ++i) {
      Bank bank;
      bank.currency = c;
      const absl::string_view country =
          kSynthCurrencies[c].countries[rng.UniformInt(static_cast<uint64_t>(num_countries))];
      bank.country[0] = country[0];
      bank.country[1] = country[1];
      uint64_t number = (banks_.size() * a + offset) % 1000000;
      for (int d = 5; d >= 0; --d, number /= 10) bank.id[d] = static_cast<char>('0' + number % 10);
      bank.id_len = 6;
      banks_by_currency_[c].push_back(static_cast<int32_t>(banks_.size()));
      banks_.push_back(bank);
      sizes.push_back(std::min(Pareto(rng, 1.0, 1.1), 1e4));
    }
    bank_sizes_[c] = AliasTable(sizes);
  }
  currency_of_bank_ = AliasTable(share);
}

void Population::BuildAccounts(int64_t accounts, uint64_t seed, Rng& rng) {
  const size_t n = static_cast<size_t>(accounts);
  bank_.resize(n);
  kind_.resize(n);
  currency_.resize(n);
  crypto_.resize(n);
  activity_.resize(n);
  popularity_.resize(n);
  hex_ids_.resize(9 * n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = static_cast<uint8_t>(currency_of_bank_.Sample(rng.Next()));
    bank_[i] = banks_by_currency_[c][bank_sizes_[c].Sample(rng.Next())];
    currency_[i] = c;
    const double u = rng.Uniform();
    double activity;
    double popularity;
    bool crypto = false;
    if (u < kIndividualShare) {
      kind_[i] = AccountKind::kIndividual;
      activity = LogNormal(rng, 0.2, 1.1);
      popularity = LogNormal(rng, 1.0, 0.6);
      crypto = rng.Bernoulli(0.03);
    } else if (u < kIndividualShare + kCompanyShare) {
      kind_[i] = AccountKind::kCompany;
      activity = Pareto(rng, 0.75, 1.6);
      popularity = Pareto(rng, 1.0, 1.3);
      crypto = rng.Bernoulli(0.01);
    } else {
      kind_[i] = AccountKind::kMerchant;
      activity = LogNormal(rng, 0.5, 0.8);
      popularity = Pareto(rng, 1.0, 1.1);
    }
    // Caps keep one account from dominating a small population.
    activity_[i] = static_cast<float>(std::min(activity, 300.0));
    popularity_[i] = static_cast<float>(std::min(popularity, 1e5));
    crypto_[i] = crypto ? 1 : 0;
    WriteHexId((uint64_t{8} << 32) + ScrambleAccount(i, seed), &hex_ids_[9 * i]);
  }
}

void Population::BuildPools() {
  std::array<std::vector<int32_t>, kNumAccountKinds> by_kind;
  std::array<std::array<std::vector<int32_t>, kNumAccountKinds>, kNumSynthCurrencies> by_area;
  std::vector<int32_t> bitcoin;
  for (int32_t i = 0; i < size(); ++i) {
    const int k = static_cast<int>(kind_[i]);
    by_kind[k].push_back(i);
    by_area[currency(i)][k].push_back(i);
    if (crypto_[i]) bitcoin.push_back(i);
    total_activity_[k] += activity_[i];
  }
  for (int k = 0; k < kNumAccountKinds; ++k) {
    FillPool(by_kind[k], activity_, &payers_[k]);
    FillPool(by_kind[k], popularity_, &global_[k]);
    for (int c = 0; c < kNumSynthCurrencies; ++c) {
      FillPool(std::move(by_area[c][k]), popularity_, &domestic_[c][k]);
    }
  }
  FillPool(std::move(bitcoin), popularity_, &bitcoin_users_);
}

void Population::BuildPayrolls(const FxConverter& fx, Rng& rng) {
  // employer_of[i]: the company paying individual i, or -1.
  std::vector<int32_t> employer_of(kind_.size(), -1);
  std::vector<int32_t> headcount(kind_.size(), 0);
  for (int32_t i = 0; i < size(); ++i) {
    if (kind_[i] != AccountKind::kIndividual || !rng.Bernoulli(kEmployedShare)) continue;
    const AccountPool& companies = domestic(currency(i), AccountKind::kCompany);
    if (companies.empty()) continue;
    employer_of[i] = companies.Sample(rng.Next());
    ++headcount[employer_of[i]];
  }
  // Payrolls in company-index order, employees grouped by employer (a counting sort).
  std::vector<int32_t> payroll_of(kind_.size(), -1);
  int32_t next = 0;
  for (int32_t c = 0; c < size(); ++c) {
    if (headcount[c] == 0) continue;
    Payroll pr;
    pr.company = c;
    pr.begin = next;
    pr.end = next;
    next += headcount[c];
    const double u = rng.Uniform();
    pr.due_day = u < 0.50 ? 25 : u < 0.75 ? 31 : u < 0.85 ? 1 : 15;
    pr.minute_of_day = static_cast<int16_t>(6 * 60 + rng.UniformInt(180));
    pr.format = rng.Bernoulli(0.9) ? PaymentFormat::kAch : PaymentFormat::kCheque;
    payroll_of[c] = static_cast<int32_t>(payrolls_.size());
    payrolls_.push_back(pr);
  }
  employees_.resize(static_cast<size_t>(next));
  salaries_.resize(static_cast<size_t>(next));
  for (int32_t i = 0; i < size(); ++i) {
    if (employer_of[i] < 0) continue;
    Payroll& pr = payrolls_[payroll_of[employer_of[i]]];
    employees_[pr.end] = i;
    // Monthly salaries are whole currency units (every bank currency has 2 decimals).
    const int64_t salary = fx.FromUsd(LogNormal(rng, 3800, 0.45), currency(employer_of[i]));
    salaries_[pr.end] = std::max<int64_t>(100, salary / 100 * 100);
    ++pr.end;
  }
}

void Population::BuildLeases(const FxConverter& fx, Rng& rng) {
  for (int32_t i = 0; i < size(); ++i) {
    if (kind_[i] != AccountKind::kIndividual || !rng.Bernoulli(kTenantShare)) continue;
    const uint8_t ccy = currency(i);
    const AccountKind landlord_kind =
        rng.Bernoulli(0.6) ? AccountKind::kIndividual : AccountKind::kCompany;
    const AccountPool& landlords = domestic(ccy, landlord_kind);
    if (landlords.empty()) continue;
    Lease lease;
    lease.tenant = i;
    lease.landlord = landlords.Sample(rng.Next());
    if (lease.landlord == i) continue;
    // Rents are round: multiples of 10 currency units.
    const int64_t rent = fx.FromUsd(LogNormal(rng, 1300, 0.4), ccy);
    lease.rent_minor = std::max<int64_t>(1000, rent / 1000 * 1000);
    lease.due_day = static_cast<uint8_t>(rng.UniformRange(1, 5));
    lease.minute_of_day = static_cast<int16_t>(7 * 60 + rng.UniformInt(14 * 60));
    lease.format = rng.Bernoulli(0.85) ? PaymentFormat::kAch : PaymentFormat::kCheque;
    leases_.push_back(lease);
  }
}

void Population::BuildLaunderers(Rng& rng) {
  const int64_t n = size();
  const int64_t want = std::max<int64_t>(60, n / 50);
  const int64_t want_mules = want / 4;
  std::vector<uint8_t> taken(static_cast<size_t>(n), 0);
  // Rejection sampling: bounded attempts, so a tiny population cannot loop forever.
  for (int64_t attempt = 0; attempt < 50 * want && static_cast<int64_t>(launderers_.size()) < want;
       ++attempt) {
    const auto a = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(n)));
    if (taken[a] || kind_[a] == AccountKind::kMerchant) continue;
    taken[a] = 1;
    launderers_.push_back(a);
    launderers_by_currency_[currency(a)].push_back(a);
  }
  for (int64_t attempt = 0; attempt < 50 * want && static_cast<int64_t>(mules_.size()) < want_mules;
       ++attempt) {
    const auto a = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(n)));
    if (taken[a] || kind_[a] != AccountKind::kIndividual) continue;
    taken[a] = 1;
    mules_.push_back(a);
  }
}

}  // namespace vigil::synth::internal
