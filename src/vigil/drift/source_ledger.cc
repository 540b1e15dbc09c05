#include "vigil/drift/source_ledger.h"

#include <algorithm>
#include <cmath>

namespace vigil::drift {

uint64_t SourceHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

SourceLedger::SourceLedger(size_t panes, SourceCaps caps)
    : caps_(caps), panes_(std::max<size_t>(1, panes)) {}

void SourceLedger::Decrement(absl::flat_hash_map<uint64_t, uint32_t>& counts, uint64_t key) {
  const auto it = counts.find(key);
  if (it == counts.end()) return;
  if (--it->second == 0) counts.erase(it);
}

void SourceLedger::Evict(Pane& pane) {
  for (const uint64_t a : pane.accounts) Decrement(accounts_, a);
  for (const uint64_t c : pane.clients) Decrement(clients_, c);
  rows_ -= pane.rows;
  unknown_accounts_ -= pane.unknown_accounts;
  unknown_clients_ -= pane.unknown_clients;
  pane.unknown_clients = 0;
  pane.accounts.clear();
  pane.clients.clear();
  pane.rows = 0;
  pane.unknown_accounts = 0;
  pane.index = INT64_MIN;
}

void SourceLedger::AdvanceTo(int64_t index) {
  if (newest_ != INT64_MIN && index <= newest_) return;
  newest_ = index;
  const int64_t n = static_cast<int64_t>(panes_.size());
  for (Pane& p : panes_) {
    if (p.index != INT64_MIN && p.index <= newest_ - n) Evict(p);
  }
}

SourceLedger::Admission SourceLedger::Admit(int64_t index, const RowSource& source) {
  AdvanceTo(index);
  const int64_t n = static_cast<int64_t>(panes_.size());
  if (index <= newest_ - n) return Admission::kLate;
  const double rows = static_cast<double>(rows_);
  const uint64_t account_cap = std::max<uint64_t>(
      caps_.account_cap_rows, static_cast<uint64_t>(std::floor(caps_.account_cap_share * rows)));
  const auto over = [](const absl::flat_hash_map<uint64_t, uint32_t>& counts, uint64_t key,
                       uint64_t cap) {
    if (key == 0) return false;
    const auto it = counts.find(key);
    return it != counts.end() && it->second >= cap;
  };
  bool capped = over(accounts_, source.originator, account_cap) ||
                over(accounts_, source.beneficiary, account_cap);
  if (caps_.client_cap_share < 1) {
    const uint64_t client_cap = std::max<uint64_t>(
        caps_.account_cap_rows, static_cast<uint64_t>(std::floor(caps_.client_cap_share * rows)));
    capped = capped || over(clients_, source.client, client_cap);
  }
  if (capped) {
    ++capped_;
    return Admission::kCapped;
  }
  Pane& p = panes_[static_cast<size_t>(((index % n) + n) % n)];
  if (p.index != index) {
    if (p.index != INT64_MIN) Evict(p);
    p.index = index;
  }
  ++p.rows;
  ++rows_;
  const auto add_account = [&](uint64_t a) {
    if (a == 0) {
      ++p.unknown_accounts;
      ++unknown_accounts_;
      return;
    }
    p.accounts.push_back(a);
    ++accounts_[a];
  };
  add_account(source.originator);
  // A self-transfer is one account, once.
  if (source.beneficiary != source.originator || source.beneficiary == 0) {
    add_account(source.beneficiary);
  }
  if (source.client != 0) {
    p.clients.push_back(source.client);
    ++clients_[source.client];
  } else {
    ++p.unknown_clients;
    ++unknown_clients_;
  }
  return Admission::kAdmitted;
}

}  // namespace vigil::drift
