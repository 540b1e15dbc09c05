#include "vigil/screening/screener.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/screening/consolidated_screening_list.h"
#include "vigil/screening/ofac_sdn.h"
#include "vigil/screening/watchlist_file.h"

namespace vigil::screening {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "path:size:mtime;" of a file, "path:-;" when it is absent: changes whenever a list is
// replaced, rewritten or removed.
void AppendFileStamp(const std::string& path, std::string& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    absl::StrAppend(&out, path, ":-;");
    return;
  }
  absl::StrAppend(&out, path, ":", static_cast<int64_t>(st.st_size), ":",
                  static_cast<int64_t>(st.st_mtim.tv_sec), ".",
                  static_cast<int64_t>(st.st_mtim.tv_nsec), ";");
}

// The list an entry is on, as its source names it (a list file may hold several lists'
// entries); the source's name when the entry does not say.
const std::string& ListOf(const WatchlistEntry& entry, const Watchlist& list) {
  return entry.list.empty() ? list.name() : entry.list;
}

NormalizedName& ThreadNormalized() {
  thread_local NormalizedName normalized;
  return normalized;
}

// Best first; equal scores in (party, list, entry) order so that output is deterministic.
void SortHits(std::vector<ScreeningHit>& hits) {
  std::stable_sort(hits.begin(), hits.end(), [](const ScreeningHit& a, const ScreeningHit& b) {
    return a.score > b.score;
  });
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ScreeningLists>> ScreeningLists::Build(
    std::vector<std::shared_ptr<const Watchlist>> lists,
    std::shared_ptr<const NameNormalizer> normalizer, IndexOptions index_options) {
  if (normalizer == nullptr) return absl::InvalidArgumentError("screening needs a name normalizer");
  std::shared_ptr<ScreeningLists> out(new ScreeningLists());
  out->normalizer_ = normalizer;
  std::set<std::string> names;
  for (std::shared_ptr<const Watchlist>& list : lists) {
    if (!names.insert(list->name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two screening lists are named '", list->name(),
                       "': list names must be distinct (they identify hits and versions)"));
    }
    out->versions_.push_back(absl::StrCat(list->name(), "@", list->version()));
    VIGIL_ASSIGN_OR_RETURN(auto index,
                           WatchlistIndex::Build(std::move(list), normalizer, index_options));
    out->indexes_.push_back(std::move(index));
  }
  return std::shared_ptr<const ScreeningLists>(std::move(out));
}

size_t ScreeningLists::entry_count() const {
  size_t n = 0;
  for (const auto& index : indexes_) n += index->watchlist().size();
  return n;
}

void ScreeningLists::AddNameHits(std::string_view party, std::string_view name,
                                 const NormalizedName& normalized, const ScreeningOptions& options,
                                 std::vector<ScreeningHit>& out) const {
  thread_local std::vector<WatchlistMatch> matches;
  const SearchOptions search{options.min_score, options.max_hits};
  for (const auto& index : indexes_) {
    matches.clear();
    index->SearchName(normalized, search, matches);
    const Watchlist& list = index->watchlist();
    for (const WatchlistMatch& m : matches) {
      const WatchlistEntry& entry = list.entries()[m.entry];
      out.push_back({std::string(party), std::string(name), ListOf(entry, list), list.version(),
                     entry.id, entry.name, index->NameOf(m), entry.type, m.score, false});
    }
  }
}

void ScreeningLists::AddIdentifierHits(std::string_view party, std::string_view identifier,
                                       std::vector<ScreeningHit>& out) const {
  if (identifier.empty()) return;
  thread_local std::vector<WatchlistMatch> matches;
  for (const auto& index : indexes_) {
    matches.clear();
    index->SearchIdentifier(identifier, matches);
    const Watchlist& list = index->watchlist();
    for (const WatchlistMatch& m : matches) {
      const WatchlistEntry& entry = list.entries()[m.entry];
      out.push_back({std::string(party), std::string(identifier), ListOf(entry, list),
                     list.version(), entry.id, entry.name, entry.identifiers[m.identifier_index], entry.type, 1.0,
                     true});
    }
  }
}

std::vector<ScreeningHit> ScreeningLists::ScreenName(std::string_view name,
                                                     const ScreeningOptions& options) const {
  std::vector<ScreeningHit> hits;
  NormalizedName& normalized = ThreadNormalized();
  normalizer_->NormalizeInto(name, normalized);
  AddNameHits("", name, normalized, options, hits);
  SortHits(hits);
  if (hits.size() > options.max_hits) hits.resize(options.max_hits);
  return hits;
}

std::vector<ScreeningHit> ScreeningLists::ScreenIdentifier(std::string_view identifier) const {
  std::vector<ScreeningHit> hits;
  AddIdentifierHits("", identifier, hits);
  return hits;
}

TransactionScreening ScreeningLists::ScreenTransaction(const Transaction& tx,
                                                       const ScreeningOptions& options) const {
  TransactionScreening result;
  std::vector<ScreeningHit>& hits = result.hits;
  NormalizedName& normalized = ThreadNormalized();
  auto screen_name = [&](std::string_view party, const std::string& name) {
    if (name.empty()) return;
    normalizer_->NormalizeInto(name, normalized);
    AddNameHits(party, name, normalized, options, hits);
  };
  auto screen_party = [&](std::string_view party, const Party& p) {
    screen_name(party, p.name);
    AddIdentifierHits(party, p.account_id, hits);
  };
  screen_party("originator", tx.originator);
  screen_party("beneficiary", tx.beneficiary);
  if (tx.ultimate_originator) screen_party("ultimate_originator", *tx.ultimate_originator);
  if (tx.ultimate_beneficiary) screen_party("ultimate_beneficiary", *tx.ultimate_beneficiary);
  for (const Agent& agent : tx.agents) {
    const std::string_view role(AgentRoleName(agent.role).data(), AgentRoleName(agent.role).size());
    screen_name(role, agent.name);
    AddIdentifierHits(role, agent.bic, hits);
  }
  // The parties' banks as the transaction names them (a BIC or a bank code); skipped when an
  // agent already carried the same BIC.
  auto screen_bank = [&](std::string_view party, const std::string& bank) {
    if (bank.empty()) return;
    for (const Agent& agent : tx.agents) {
      if (agent.bic == bank) return;
    }
    AddIdentifierHits(party, bank, hits);
  };
  screen_bank("originator_bank", tx.originator.bank_id);
  screen_bank("beneficiary_bank", tx.beneficiary.bank_id);

  // One hit per (party, list, entry): a name and an identifier of one party finding the same
  // entry are one finding, kept at its best score.
  SortHits(hits);
  std::vector<ScreeningHit> unique;
  unique.reserve(hits.size());
  for (ScreeningHit& h : hits) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const ScreeningHit& u) {
      return u.party == h.party && u.list == h.list && u.entry_id == h.entry_id;
    });
    if (!seen) unique.push_back(std::move(h));
  }
  if (unique.size() > options.max_hits) unique.resize(options.max_hits);
  hits = std::move(unique);
  result.max_score = hits.empty() ? 0.0 : hits.front().score;
  return result;
}

// The CSL's header names source, name and alt_names; vigil's list files have none of them.
bool IsConsolidatedScreeningList(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  return in && std::getline(in, first) && LooksLikeConsolidatedScreeningList(first);
}

absl::StatusOr<std::shared_ptr<const Watchlist>> LoadWatchlistSource(const std::string& path) {
  absl::StatusOr<Watchlist> list = IsDirectory(path) ? LoadOfacSdn(path)
                                   : IsConsolidatedScreeningList(path)
                                       ? LoadConsolidatedScreeningList(path)
                                       : LoadWatchlistFile(path);
  if (!list.ok()) {
    return absl::Status(list.status().code(),
                        absl::StrCat("screening list '", path, "': ", list.status().message()));
  }
  return std::make_shared<const Watchlist>(*std::move(list));
}

Screener::Screener(std::shared_ptr<const ScreeningLists> lists) : lists_(std::move(lists)) {}

Screener::Screener(ScreenerConfig config, std::shared_ptr<const NameNormalizer> normalizer)
    : config_(std::move(config)), normalizer_(std::move(normalizer)) {}

absl::StatusOr<std::unique_ptr<Screener>> Screener::Create(ScreenerConfig config) {
  if (config.sources.empty()) {
    return absl::InvalidArgumentError("screening: no list given (a list file or an OFAC folder)");
  }
  VIGIL_ASSIGN_OR_RETURN(auto normalizer, NameNormalizer::Create(config.normalizer));
  std::unique_ptr<Screener> screener(new Screener(std::move(config), std::move(normalizer)));
  {
    absl::MutexLock lock(&screener->reload_mu_);
    VIGIL_RETURN_IF_ERROR(screener->ReloadLocked().status());
  }
  return screener;
}

std::shared_ptr<const ScreeningLists> Screener::Current() const {
  absl::MutexLock lock(&mu_);
  return lists_;
}

std::string Screener::SourceStamp() const {
  std::string stamp;
  for (const std::string& source : config_.sources) {
    if (IsDirectory(source)) {
      for (const char* file : {"/sdn.csv", "/alt.csv", "/add.csv", "/sdn_comments.csv"}) {
        AppendFileStamp(source + file, stamp);
      }
    } else {
      AppendFileStamp(source, stamp);
    }
  }
  return stamp;
}

absl::StatusOr<bool> Screener::ReloadLocked() {
  // The stamp is taken before reading, so a list replaced while it is read is read again on
  // the next check.
  std::string stamp = SourceStamp();
  auto fail = [&](absl::Status status) {
    stamp_ = stamp;  // a broken source is retried when it changes again, not on every check
    absl::MutexLock lock(&mu_);
    ++reload_failures_;
    return status;
  };
  std::vector<std::shared_ptr<const Watchlist>> lists;
  for (const std::string& source : config_.sources) {
    absl::StatusOr<std::shared_ptr<const Watchlist>> list = LoadWatchlistSource(source);
    if (!list.ok()) return fail(list.status());
    lists.push_back(*std::move(list));
  }
  absl::StatusOr<std::shared_ptr<const ScreeningLists>> built =
      ScreeningLists::Build(std::move(lists), normalizer_, config_.index);
  if (!built.ok()) return fail(built.status());
  stamp_ = std::move(stamp);
  absl::MutexLock lock(&mu_);
  const bool changed = lists_ == nullptr || lists_->versions() != (*built)->versions();
  if (changed) {
    if (lists_ != nullptr) ++reloads_;
    lists_ = *std::move(built);
  }
  return changed;
}

absl::StatusOr<bool> Screener::Reload() {
  if (config_.sources.empty()) return false;
  absl::MutexLock lock(&reload_mu_);
  return ReloadLocked();
}

absl::StatusOr<bool> Screener::ReloadIfChanged() {
  if (config_.sources.empty()) return false;
  absl::MutexLock lock(&reload_mu_);
  if (SourceStamp() == stamp_) return false;
  return ReloadLocked();
}

uint64_t Screener::reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

uint64_t Screener::reload_failures() const {
  absl::MutexLock lock(&mu_);
  return reload_failures_;
}

}  // namespace vigil::screening
