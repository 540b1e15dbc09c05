#include "vigil/audit/internal/head_chain.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/audit/log_hash.h"

namespace vigil::audit::internal {
namespace {

std::string Heads(uint64_t n) { return absl::StrCat(n, n == 1 ? " head" : " heads"); }

std::string Name(const SignedTreeHead& head) {
  return absl::StrCat("the head of size ", head.size,
                      head.chain.has_value() ? absl::StrCat(" (index ", head.chain->index, ")")
                                             : std::string(),
                      " signed at ", FormatUtc(head.time));
}

// The link from "prev" (at position p - 1) to "head" (at p).
void CheckLink(const SignedTreeHead* prev, const SignedTreeHead& head, uint64_t position,
               std::optional<Damage>& damage) {
  const TreeHeadChain& c = *head.chain;
  const uint64_t before = prev != nullptr ? prev->size : 0;
  if (c.index != position) {
    if (c.index > position) {
      KeepFirst(damage, {DamageKind::kMissingHead, before,
                         absl::StrCat(Name(head), " is stored as head ", position, ": ",
                                      Heads(c.index - position), " before it ",
                                      c.index - position == 1 ? "is" : "are",
                                      " missing from the store")});
    } else {
      KeepFirst(damage, {DamageKind::kModified, before,
                         absl::StrCat(Name(head), " is stored as head ", position,
                                      ": the heads before it are not the log's")});
    }
    return;
  }
  if (position == 0) {
    if (head.size != 0) {
      KeepFirst(damage, {DamageKind::kModified, 0,
                         absl::StrCat(Name(head), " has index 0, which is the head of size 0")});
    }
    return;
  }
  if (prev == nullptr) return;  // the one before does not parse: reported as such
  if (!c.previous.has_value() || *c.previous != TreeHeadHash(*prev)) {
    KeepFirst(damage, {DamageKind::kModified, before,
                       absl::StrCat(Name(head), " does not name ", Name(*prev),
                                    " as the head before it")});
    return;
  }
  if (prev->chain.has_value() && head.size - prev->size > prev->chain->every_records) {
    KeepFirst(damage,
              {DamageKind::kMissingHead, before,
               absl::StrCat(Name(*prev), " promises the next head within ",
                            prev->chain->every_records, " records, but the next one stored is ",
                            Name(head), ": the heads between them are missing from the store")});
  }
}

}  // namespace

void KeepFirst(std::optional<Damage>& first, Damage next) {
  if (!first.has_value() || next.sequence < first->sequence) first = std::move(next);
}

ChainCheck CheckHeadChain(absl::Span<const StoredHead> heads, uint64_t first_position) {
  ChainCheck check;
  const SignedTreeHead* prev = nullptr;
  for (size_t i = 0; i < heads.size(); ++i) {
    const std::optional<SignedTreeHead>& head = heads[i].head;
    if (!head.has_value()) {
      prev = nullptr;
      continue;
    }
    if (!head->chain.has_value()) {
      if (check.chained) {
        KeepFirst(check.damage, {DamageKind::kModified, prev != nullptr ? prev->size : 0,
                                 absl::StrCat(Name(*head), " is unchained (format 1) but follows "
                                                           "chained heads: it is not the log's")});
      }
      ++check.legacy;
      prev = &*head;
      continue;
    }
    check.chained = true;
    CheckLink(prev, *head, first_position + i, check.damage);
    prev = &*head;
  }
  return check;
}

std::optional<Damage> CheckEndCovered(const std::optional<SignedTreeHead>& newest,
                                      uint64_t records, int header_format) {
  if (!newest.has_value()) {
    if (records == 0 && header_format < 2) return std::nullopt;  // an old, empty log
    return Damage{DamageKind::kMissingHead, 0,
                  absl::StrCat("the log holds ", records, records == 1 ? " record" : " records",
                               " and no signed tree head: every log starts with a head of size 0 "
                               "and is signed at least every few records; its heads were removed "
                               "from the store")};
  }
  if (!newest->chain.has_value()) {
    if (header_format < 2) return std::nullopt;  // legacy: nothing promised
    return Damage{DamageKind::kMissingHead, newest->size,
                  absl::StrCat("the log's header says its heads are chained (format 2), but the "
                               "newest head stored, ",
                               Name(*newest), ", is unchained: the chained heads after it were "
                                              "removed from the store")};
  }
  const uint64_t every = newest->chain->every_records;
  if (records > newest->size && records - newest->size >= every) {
    return Damage{DamageKind::kMissingHead, newest->size,
                  absl::StrCat("the log holds ", records, " records, but the newest head stored, ",
                               Name(*newest), ", covers ", newest->size,
                               " and promises the next within ", every,
                               " records: the newest heads were removed from the store")};
  }
  return std::nullopt;
}

}  // namespace vigil::audit::internal
