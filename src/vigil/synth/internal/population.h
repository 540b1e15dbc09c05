// Population: the banks and accounts that synthetic payments flow between, built once per run
// from (accounts, seed) and read-only afterwards.
//
// Banks: about one per 150 accounts (at least 8), each with a home currency (kSynthCurrencies'
// bank_share: mostly USD and EUR, a tail of 12 others) and a home country; bank sizes are
// Pareto-distributed, so a few large banks hold most accounts. Bank ids are distinct 6-digit
// decimal strings ("014433"), account ids distinct 9-digit upper-case hex ("8032DF2A0"), both
// scrambled from the index by seeded bijections.
//
// Accounts: 85% individuals, 10% companies, 5% merchants; an account's currency is its bank's.
// Each has an activity rate (outgoing payments per weekday; individuals log-normal, companies
// Pareto with a heavy tail, merchants log-normal) and a popularity as a payee (Pareto for
// companies and merchants). 70% of individuals are paid a monthly salary by a company of their
// currency area; 40% pay a monthly rent to a landlord (an individual or a company). About 3% of
// individuals and 1% of companies also pay in Bitcoin.
//
// Laundering: max(60, accounts / 50) individuals and companies form the launderer pool that
// patterns draw from; they keep their ordinary activity (camouflage). A further quarter as many
// ordinary individuals are recruitable money mules (pass-through).
//
// Thread safety: immutable after Build; safe for concurrent use.
#ifndef VIGIL_SYNTH_INTERNAL_POPULATION_H_
#define VIGIL_SYNTH_INTERNAL_POPULATION_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"
#include "vigil/synth/internal/alias_table.h"
#include "vigil/synth/internal/currency_table.h"
#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/rng.h"

namespace vigil::synth::internal {

enum class AccountKind : uint8_t { kIndividual = 0, kCompany = 1, kMerchant = 2 };
inline constexpr int kNumAccountKinds = 3;

inline constexpr int64_t kMinAccounts = 100;
inline constexpr int64_t kMaxAccounts = 20'000'000;
// The largest pattern (GATHER-SCATTER) needs 21 distinct launderers; Build fails below this.
inline constexpr int kMinLaunderers = 40;

struct Bank {
  uint8_t currency = 0;
  char country[2] = {};
  uint8_t id_len = 0;
  char id[7] = {};
};

// Accounts with sampling weights (activity for payers, popularity for payees).
struct AccountPool {
  std::vector<int32_t> members;
  AliasTable table;

  bool empty() const { return members.empty(); }
  // REQUIRES: !empty().
  int32_t Sample(uint64_t random_bits) const { return members[table.Sample(random_bits)]; }
};

// A company's monthly payroll: employees_[begin, end) with salaries_[begin, end).
struct Payroll {
  int32_t company = 0;
  int32_t begin = 0;
  int32_t end = 0;
  int16_t minute_of_day = 0;  // batch time
  uint8_t due_day = 25;       // 31 = last day of the month; paid the Friday before a weekend
  PaymentFormat format = PaymentFormat::kAch;
};

// A tenant's monthly rent (paid the Monday after a weekend due day).
struct Lease {
  int32_t tenant = 0;
  int32_t landlord = 0;
  int64_t rent_minor = 0;  // in the tenant's currency
  int16_t minute_of_day = 0;
  uint8_t due_day = 1;
  PaymentFormat format = PaymentFormat::kAch;
};

class Population {
 public:
  // Errors: accounts outside [kMinAccounts, kMaxAccounts] (kInvalidArgument).
  static absl::StatusOr<Population> Build(int64_t accounts, uint64_t seed, const FxConverter& fx);

  int32_t size() const { return static_cast<int32_t>(kind_.size()); }
  int32_t bank_count() const { return static_cast<int32_t>(banks_.size()); }
  const Bank& bank(int32_t b) const { return banks_[b]; }

  const Bank& bank_of(int32_t account) const { return banks_[bank_[account]]; }
  AccountKind kind(int32_t account) const { return kind_[account]; }
  uint8_t currency(int32_t account) const { return currency_[account]; }
  bool pays_bitcoin(int32_t account) const { return crypto_[account] != 0; }
  // Nine upper-case hex characters, not NUL-terminated.
  const char* hex_id(int32_t account) const { return &hex_ids_[9 * static_cast<size_t>(account)]; }

  // Payers of a kind, weighted by activity, and their summed weekday activity (payments/day).
  const AccountPool& payers(AccountKind k) const { return payers_[static_cast<int>(k)]; }
  double total_activity(AccountKind k) const { return total_activity_[static_cast<int>(k)]; }
  // Payees of a kind in one currency area / anywhere, weighted by popularity. May be empty.
  const AccountPool& domestic(uint8_t ccy, AccountKind k) const {
    return domestic_[ccy][static_cast<int>(k)];
  }
  const AccountPool& global(AccountKind k) const { return global_[static_cast<int>(k)]; }
  const AccountPool& bitcoin_users() const { return bitcoin_users_; }

  const std::vector<Payroll>& payrolls() const { return payrolls_; }
  const std::vector<int32_t>& employees() const { return employees_; }
  const std::vector<int64_t>& salaries() const { return salaries_; }  // employer's currency
  const std::vector<Lease>& leases() const { return leases_; }

  const std::vector<int32_t>& launderers() const { return launderers_; }
  const std::vector<int32_t>& launderers_in(uint8_t ccy) const {
    return launderers_by_currency_[ccy];
  }
  const std::vector<int32_t>& mules() const { return mules_; }

 private:
  Population() = default;
  void BuildBanks(int64_t accounts, const FxConverter& fx, Rng& rng);
  void BuildAccounts(int64_t accounts, uint64_t seed, Rng& rng);
  void BuildPools();
  void BuildPayrolls(const FxConverter& fx, Rng& rng);
  void BuildLeases(const FxConverter& fx, Rng& rng);
  void BuildLaunderers(Rng& rng);

  std::vector<Bank> banks_;
  std::array<std::vector<int32_t>, kNumSynthCurrencies> banks_by_currency_;
  std::array<AliasTable, kNumSynthCurrencies> bank_sizes_;
  AliasTable currency_of_bank_;

  // Accounts, structure of arrays.
  std::vector<int32_t> bank_;
  std::vector<AccountKind> kind_;
  std::vector<uint8_t> currency_;  // = banks_[bank_[i]].currency, kept apart for cache locality
  std::vector<uint8_t> crypto_;
  std::vector<float> activity_;
  std::vector<float> popularity_;
  std::vector<char> hex_ids_;

  std::array<AccountPool, kNumAccountKinds> payers_;
  std::array<double, kNumAccountKinds> total_activity_{};
  std::array<std::array<AccountPool, kNumAccountKinds>, kNumSynthCurrencies> domestic_;
  std::array<AccountPool, kNumAccountKinds> global_;
  AccountPool bitcoin_users_;

  std::vector<Payroll> payrolls_;
  std::vector<int32_t> employees_;
  std::vector<int64_t> salaries_;
  std::vector<Lease> leases_;

  std::vector<int32_t> launderers_;
  std::array<std::vector<int32_t>, kNumSynthCurrencies> launderers_by_currency_;
  std::vector<int32_t> mules_;
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_POPULATION_H_
