#include "vigil/screening/watchlist.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/sha256.h"

namespace vigil::screening {

std::string_view WatchlistEntryTypeName(WatchlistEntry::Type type) {
  switch (type) {
    case WatchlistEntry::Type::kIndividual:
      return "individual";
    case WatchlistEntry::Type::kEntity:
      return "entity";
    case WatchlistEntry::Type::kVessel:
      return "vessel";
    case WatchlistEntry::Type::kAircraft:
      return "aircraft";
    case WatchlistEntry::Type::kUnknown:
      break;
  }
  return "unknown";
}

std::string ContentVersion(std::string_view bytes) {
  return absl::StrCat("sha256:", Sha256Hex(bytes));
}

absl::StatusOr<Watchlist> Watchlist::Create(std::string name, std::string version,
                                            std::vector<WatchlistEntry> entries) {
  Watchlist w;
  w.index_.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const WatchlistEntry& e = entries[i];
    if (e.id.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("entry ", i, ": id is empty"));
    }
    if (e.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("entry ", i, " (id \"", e.id, "\"): name is empty"));
    }
    const auto [it, inserted] = w.index_.emplace(e.id, i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("entry ", i, ": duplicate id \"", e.id,
                                                     "\" (first at entry ", it->second, ")"));
    }
  }
  w.name_ = std::move(name);
  w.version_ = std::move(version);
  w.entries_ = std::move(entries);
  return w;
}

const WatchlistEntry* Watchlist::Find(std::string_view id) const {
  const auto it = index_.find(std::string(id));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

}  // namespace vigil::screening
