// A sanctions or watch list as screening reads it: entries with names, aliases, countries and
// identifiers, from one source (OFAC SDN, vigil's list format; docs/screening.md).
//
// Watchlist is immutable once built; its version() names exactly the bytes it was loaded from,
// so a screening decision can say which list content it was made against.
//
// Thread safety: a Watchlist is safe to read from any number of threads.
#ifndef VIGIL_SCREENING_WATCHLIST_H_
#define VIGIL_SCREENING_WATCHLIST_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::screening {

struct WatchlistEntry {
  enum class Type { kIndividual, kEntity, kVessel, kAircraft, kUnknown };

  // Unique within its Watchlist; for OFAC the ent_num ("306").
  std::string id;
  // Primary name, as the list writes it ("BANCO NACIONAL DE CUBA", "ZAWAHIRI, Ayman al-").
  std::string name;
  // Other names (a.k.a., f.k.a., n.k.a.), as written, in list order.
  std::vector<std::string> aliases;
  Type type = Type::kUnknown;
  // Country names as the list writes them ("Cuba", "United Kingdom"), without duplicates, in
  // order of first appearance.
  std::vector<std::string> countries;
  // BICs, IBANs, passport, national ID and registration numbers, as given (no normalization).
  std::vector<std::string> identifiers;
  // Name of the list the entry comes from: "OFAC SDN", ...
  std::string list;
  // Sanctions programs ("CUBA", "SDGT"); empty for lists that have none.
  std::vector<std::string> programs;

  bool operator==(const WatchlistEntry&) const = default;
};

// "individual", "entity", "vessel", "aircraft", "unknown".
std::string_view WatchlistEntryTypeName(WatchlistEntry::Type type);

// "sha256:<64 lower-case hex digits>" of bytes.
std::string ContentVersion(std::string_view bytes);

class Watchlist {
 public:
  // Fails (kInvalidArgument, naming the entry's index and id) when an entry has an empty id or
  // name, or two entries share an id. "version" is recorded as given; loaders pass
  // ContentVersion() of what they read.
  static absl::StatusOr<Watchlist> Create(std::string name, std::string version,
                                          std::vector<WatchlistEntry> entries);

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::vector<WatchlistEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // The entry with this id, or nullptr. Valid as long as the Watchlist.
  const WatchlistEntry* Find(std::string_view id) const;

 private:
  Watchlist() = default;

  std::string name_;
  std::string version_;
  std::vector<WatchlistEntry> entries_;
  std::unordered_map<std::string, size_t> index_;  // id -> position in entries_
};

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_WATCHLIST_H_
