// Screening a payment's parties against every loaded list, and the lists' hot reload.
//
// ScreeningLists is one immutable set of indexed lists (what a decision was screened against:
// versions()). Screener holds the set in force and swaps in a new one atomically when the
// sources change; a search that started on the old set finishes on it.
//
// A transaction is screened by name for its originator, beneficiary and ultimate parties and
// for every bank in its chain, and by identifier for the parties' accounts (IBANs, account
// numbers) and the banks' BICs (ScreenTransaction).
//
// Thread safety: ScreeningLists is immutable; Screener's methods may be called concurrently.
#ifndef VIGIL_SCREENING_SCREENER_H_
#define VIGIL_SCREENING_SCREENER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/core/transaction.h"
#include "vigil/screening/name_normalizer.h"
#include "vigil/screening/watchlist.h"
#include "vigil/screening/watchlist_index.h"

namespace vigil::screening {

// One list entry found for one name or identifier of a payment.
struct ScreeningHit {
  // Which part of the payment: "originator", "beneficiary", "ultimate_originator",
  // "ultimate_beneficiary", or a bank's role ("originator_bank", "intermediary_bank", ...,
  // "sender", "receiver"); "" for a name screened on its own (ScreenName).
  std::string party;
  std::string query;  // the name or identifier as the payment wrote it
  // The list the entry is on (WatchlistEntry::list: "OFAC SDN", a list file's `list` column),
  // and the version of the source it was loaded from.
  std::string list;
  std::string list_version;
  std::string entry_id;
  std::string entry_name;    // the entry's primary name
  std::string matched_name;  // the name or alias that matched; the identifier for by_identifier
  WatchlistEntry::Type entry_type = WatchlistEntry::Type::kUnknown;
  double score = 0.0;
  bool by_identifier = false;
};

struct TransactionScreening {
  double max_score = 0.0;           // of the hits; 0 when there are none
  std::vector<ScreeningHit> hits;  // best first, at most ScreeningOptions::max_hits
};

struct ScreeningOptions {
  // Hits below this score are not reported. The policy's thresholds decide what a hit does;
  // this only bounds what is worth looking at.
  double min_score = 0.80;
  size_t max_hits = 10;
};

class ScreeningLists {
 public:
  // Indexes every list with "normalizer". Source names must be distinct (the same file given
  // twice is an error).
  static absl::StatusOr<std::shared_ptr<const ScreeningLists>> Build(
      std::vector<std::shared_ptr<const Watchlist>> lists,
      std::shared_ptr<const NameNormalizer> normalizer, IndexOptions index_options = {});

  const std::vector<std::shared_ptr<const WatchlistIndex>>& indexes() const { return indexes_; }
  // "<source name>@<version>" per source, in load order: what a decision records. A source's
  // name is "OFAC SDN" for an OFAC folder, the file name for a list file.
  const std::vector<std::string>& versions() const { return versions_; }
  size_t entry_count() const;

  // Hits for one name across every list, best first (party "").
  std::vector<ScreeningHit> ScreenName(std::string_view name, const ScreeningOptions& options) const;
  // Hits for one identifier (BIC, IBAN, account, passport, ...) across every list.
  std::vector<ScreeningHit> ScreenIdentifier(std::string_view identifier) const;
  // Every party of "tx", by name and by identifier.
  TransactionScreening ScreenTransaction(const Transaction& tx,
                                         const ScreeningOptions& options) const;

 private:
  ScreeningLists() = default;
  void AddNameHits(std::string_view party, std::string_view name, const NormalizedName& normalized,
                   const ScreeningOptions& options, std::vector<ScreeningHit>& out) const;
  void AddIdentifierHits(std::string_view party, std::string_view identifier,
                         std::vector<ScreeningHit>& out) const;

  std::shared_ptr<const NameNormalizer> normalizer_;
  std::vector<std::shared_ptr<const WatchlistIndex>> indexes_;
  std::vector<std::string> versions_;
};

// Reads one list source: a folder holding OFAC's sdn.csv (LoadOfacSdn); a CSV file whose header
// is the US Consolidated Screening List's (LoadConsolidatedScreeningList); else a list file in
// vigil's format (LoadWatchlistFile).
absl::StatusOr<std::shared_ptr<const Watchlist>> LoadWatchlistSource(const std::string& path);

struct ScreenerConfig {
  std::vector<std::string> sources;  // files or OFAC folders (LoadWatchlistSource)
  NormalizerOptions normalizer = NormalizerOptions::Defaults();
  IndexOptions index;
};

class Screener {
 public:
  // Loads and indexes every source; fails naming the source that could not be read.
  static absl::StatusOr<std::unique_ptr<Screener>> Create(ScreenerConfig config);
  // For lists built elsewhere (tests, benchmarks); Reload then has no sources to read.
  explicit Screener(std::shared_ptr<const ScreeningLists> lists);

  // The lists in force. Holding the pointer keeps them alive across a reload.
  std::shared_ptr<const ScreeningLists> Current() const ABSL_LOCKS_EXCLUDED(mu_);

  // Re-reads every source and swaps the new lists in. On any error the lists in force stay and
  // the error (naming the source) is returned. Returns whether any list's version changed.
  absl::StatusOr<bool> Reload() ABSL_LOCKS_EXCLUDED(mu_, reload_mu_);
  // Reload, but only when a source's files changed size or modification time since the last
  // load: cheap enough to call every few seconds.
  absl::StatusOr<bool> ReloadIfChanged() ABSL_LOCKS_EXCLUDED(mu_, reload_mu_);

  // Completed reloads that changed a version, and failed reloads, since Create.
  uint64_t reloads() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t reload_failures() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Screener(ScreenerConfig config, std::shared_ptr<const NameNormalizer> normalizer);
  absl::StatusOr<bool> ReloadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  std::string SourceStamp() const;

  const ScreenerConfig config_;
  const std::shared_ptr<const NameNormalizer> normalizer_;
  absl::Mutex reload_mu_;  // one reload at a time
  std::string stamp_ ABSL_GUARDED_BY(reload_mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const ScreeningLists> lists_ ABSL_GUARDED_BY(mu_);
  uint64_t reloads_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reload_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_SCREENER_H_
