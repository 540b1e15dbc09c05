#include "vigil/screening/screening_clearances.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {
namespace {

std::string Key(std::string_view hit, std::string_view party) {
  return absl::StrCat(ToAbsl(hit), "\n", ToAbsl(party));
}

std::string PartyKey(const Party& p) {
  if (!p.account_id.empty()) return absl::StrCat("account:", p.account_id);
  if (!p.name.empty()) return absl::StrCat("name:", p.name);
  return "";
}

}  // namespace

std::string ScreenedParty(const Transaction& tx, std::string_view role) {
  if (role == "originator") return PartyKey(tx.originator);
  if (role == "beneficiary") return PartyKey(tx.beneficiary);
  if (role == "ultimate_originator") {
    return tx.ultimate_originator ? PartyKey(*tx.ultimate_originator) : "";
  }
  if (role == "ultimate_beneficiary") {
    return tx.ultimate_beneficiary ? PartyKey(*tx.ultimate_beneficiary) : "";
  }
  if (role == "originator_bank") {
    return tx.originator.bank_id.empty() ? "" : absl::StrCat("bank:", tx.originator.bank_id);
  }
  if (role == "beneficiary_bank") {
    return tx.beneficiary.bank_id.empty() ? "" : absl::StrCat("bank:", tx.beneficiary.bank_id);
  }
  for (const Agent& agent : tx.agents) {
    const absl::string_view name = AgentRoleName(agent.role);
    if (ToStd(name) != role) continue;
    if (!agent.bic.empty()) return absl::StrCat("bank:", agent.bic);
    if (!agent.name.empty()) return absl::StrCat("name:", agent.name);
  }
  return "";
}

std::string_view HitPartyRole(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return "";
  const std::string_view rest = text.substr(space + 1);
  if (rest.rfind("name matches ", 0) != 0 && rest.rfind("identifier is listed ", 0) != 0) {
    return "";
  }
  return text.substr(0, space);
}

void ScreeningClearances::Grant(ScreeningClearance c) {
  std::string key = Key(c.hit, c.party);
  absl::WriterMutexLock lock(&mu_);
  by_key_.insert_or_assign(std::move(key), std::move(c));
  count_.store(by_key_.size(), std::memory_order_release);
}

void ScreeningClearances::Revoke(std::string_view hit, std::string_view party) {
  absl::WriterMutexLock lock(&mu_);
  by_key_.erase(Key(hit, party));
  count_.store(by_key_.size(), std::memory_order_release);
}

std::optional<ScreeningClearance> ScreeningClearances::Find(std::string_view hit,
                                                            std::string_view party,
                                                            UtcTime at) const {
  absl::ReaderMutexLock lock(&mu_);
  const auto it = by_key_.find(Key(hit, party));
  if (it == by_key_.end() || !(at < it->second.expires)) return std::nullopt;
  return it->second;
}

std::vector<ScreeningClearance> ScreeningClearances::Holding(UtcTime at) const {
  std::vector<ScreeningClearance> out;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [key, c] : by_key_) {
      if (at < c.expires) out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end(), [](const ScreeningClearance& a, const ScreeningClearance& b) {
    return a.hit != b.hit ? a.hit < b.hit : a.party < b.party;
  });
  return out;
}

size_t ScreeningClearances::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_key_.size();
}

}  // namespace vigil::screening
