#include "vigil/cli/bench_names.h"

#include <array>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace vigil::cli {
namespace {

// Ten common names per culture: English, Spanish, Arabic, Russian, Chinese, Indian (Latin
// script, as payment messages mostly write them; the Spanish ones keep their accents, which
// the screening normalizer folds). Given names and surnames are crossed freely: mixed names
// are ordinary in payments, and the pool is here for a realistic spread of name shapes, not
// for demographics. (absl::string_view: Debian's Abseil has its own string_view, the only one
// its StrCat takes.)
// One culture in two lines:
// clang-format off
constexpr std::array<absl::string_view, 60> kGivenNames = {
    // English
    "James", "Mary", "John", "Patricia", "Robert",
    "Jennifer", "Michael", "Linda", "William", "Elizabeth",
    // Spanish
    "José", "María", "Juan", "Carmen", "Luis",
    "Ana", "Carlos", "Lucía", "Javier", "Isabel",
    // Arabic
    "Mohammed", "Ahmed", "Fatima", "Omar", "Aisha",
    "Youssef", "Khalid", "Layla", "Hassan", "Mariam",
    // Russian
    "Dmitry", "Olga", "Sergei", "Natalia", "Alexei",
    "Irina", "Vladimir", "Tatiana", "Nikolai", "Elena",
    // Chinese
    "Wei", "Fang", "Jing", "Lei", "Min",
    "Hao", "Xiuying", "Jun", "Lina", "Yong",
    // Indian
    "Rahul", "Priya", "Amit", "Anjali", "Vikram",
    "Deepika", "Suresh", "Kavya", "Arjun", "Sunita",
};

constexpr std::array<absl::string_view, 60> kSurnames = {
    // English
    "Smith", "Johnson", "Williams", "Brown", "Jones",
    "Taylor", "Wilson", "Davies", "Evans", "Thomas",
    // Spanish
    "García", "Rodríguez", "Martínez", "Hernández", "López",
    "González", "Pérez", "Sánchez", "Ramírez", "Torres",
    // Arabic
    "Al-Sayed", "Haddad", "Khalil", "Mansour", "Nasser",
    "Saleh", "Aziz", "Hamdan", "Rahman", "Abboud",
    // Russian
    "Ivanov", "Smirnov", "Kuznetsov", "Popov", "Sokolov",
    "Lebedev", "Kozlov", "Novikov", "Morozov", "Volkova",
    // Chinese
    "Wang", "Li", "Zhang", "Liu", "Chen",
    "Yang", "Huang", "Zhao", "Wu", "Zhou",
    // Indian
    "Sharma", "Patel", "Singh", "Kumar", "Gupta",
    "Reddy", "Iyer", "Nair", "Mehta", "Rao",
};
// clang-format on

constexpr std::array<absl::string_view, 12> kCompanyKinds = {
    "Trading",  "Logistics", "Holdings", "Industries",   "Consulting",   "Foods",
    "Textiles", "Shipping",  "Imports",  "Technologies", "Construction", "Partners",
};

// "" for a company named without a legal form, as many payments write it.
constexpr std::array<absl::string_view, 6> kLegalForms = {"LLC", "Ltd", "GmbH", "Inc", "S.A.", ""};

// FNV-1a, 64 bits, then a murmur3 finalizer so that every bit range below is well mixed
// (FNV-1a alone leaves the high bits weak for short, similar ids such as "ACC00012").
uint64_t Hash(std::string_view s) {
  uint64_t h = 14695981039346656037ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::string BenchPartyName(std::string_view account_id) {
  const uint64_t h = Hash(account_id);
  const absl::string_view surname = kSurnames[(h >> 8) % kSurnames.size()];
  if (h % 4 == 0) {
    const absl::string_view kind = kCompanyKinds[(h >> 24) % kCompanyKinds.size()];
    const absl::string_view form = kLegalForms[(h >> 40) % kLegalForms.size()];
    return form.empty() ? absl::StrCat(surname, " ", kind)
                        : absl::StrCat(surname, " ", kind, " ", form);
  }
  return absl::StrCat(kGivenNames[(h >> 24) % kGivenNames.size()], " ", surname);
}

const std::string* ListedBeneficiaryName(uint64_t index, const std::vector<std::string>& listed) {
  if (listed.empty() || index % kListedNameEvery != 0) return nullptr;
  return &listed[(index / kListedNameEvery) % listed.size()];
}

}  // namespace vigil::cli
