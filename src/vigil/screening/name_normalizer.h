// NameNormalizer: turns a name as a payment or a list writes it, in any script, into the form
// screening compares: lower-case ASCII tokens without punctuation, titles or legal forms, with
// common spelling variants mapped to one form.
//
// Steps, in order (docs/screening.md):
//  1. Invalid UTF-8 bytes become spaces (never an error: a payment's name is screened as best
//     it can be, not refused here). Non-ASCII text is then put in Unicode NFKC_Casefold form:
//     fullwidth letters, ligatures and Arabic presentation forms become plain letters, and
//     invisible characters (soft hyphen, zero-width joiners) are dropped.
//  2. Text in other scripts is transliterated to Latin with ICU ("Any-Latin", then
//     "Latin-ASCII"): Cyrillic, Greek, Arabic, Hebrew, Thai, Han (pinyin), Hangul, ...
//     - Cyrillic goes through ICU's BGN/PCGN Russian table first, the romanization sanctions
//       lists use: Шойгу -> "shoygu" and Юрий -> "yuriy", where Any-Latin's ISO 9 would give
//       "sojgu" and "urij".
//     - Arabic: a final ة is written "a" (أسامة -> "asama"), not Any-Latin's "t".
//     - Han runs (ICU "Han-Latin/Names", which reads surnames as surnames): the first
//       syllable (the surname) is its own token and the rest of the run is joined, as pinyin
//       writes names: 习近平 -> "xi jinping". Only the name's first Han run holds a surname;
//       a later run is joined whole (习 近平 -> "xi jinping" too).
//     - Hangul: one token per syllable, in Revised Romanization computed here rather than by
//       ICU (whose Hangul-Latin writes final consonants as g/d/b: 박 -> "bag", not "bak"), so
//       that 김정은 -> "gim jeong eun" meets "Kim Jong-un". The first syllable of the name's
//       first Hangul run is the surname; where Revised Romanization would make it one letter,
//       the customary spelling is used so that it cannot be taken for an initial: 이 -> "yi",
//       오 -> "oh", 우 -> "woo" (elsewhere 이 stays "i").
//     ASCII input skips ICU entirely.
//  3. Case folding to lower case; apostrophes (' ’ ‘ ʼ ʿ ʾ `, and the ʹ ʺ that romanize the
//     Cyrillic soft and hard signs) are deleted ("O'Brien" -> "obrien"); every other
//     character that is not [a-z0-9] separates tokens; runs collapse. Single letters joined by
//     single dots form one token, so that dotted abbreviations meet their undotted spelling
//     ("S.A." -> "sa", "J.P. Morgan" -> "jp morgan"); "S. A." stays two tokens.
//  4. Stopwords (honorifics and legal forms: mr, dr, sheikh, llc, ltd, gmbh, co, ...) are
//     removed, unless every token is a stopword: then none is removed ("Mr" stays "mr").
//  5. Name variants: a token listed in the variant table is replaced by its canonical form
//     (mohammed, mohamed, muhammad -> "muhammad"; aleksandr, alexander -> "alexander"; ...).
//
// The same normalizer must be applied to list names and to queries.
//
// Thread safety: Normalize may be called concurrently on one NameNormalizer. Each thread that
// normalizes non-ASCII text keeps its own copy of the ICU transliterators (created on its
// first such name, freed when the thread exits).
#ifndef VIGIL_SCREENING_NAME_NORMALIZER_H_
#define VIGIL_SCREENING_NAME_NORMALIZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::screening {

struct NormalizerOptions {
  // Tokens removed (compared after steps 1-3, so give them in lower-case ASCII: [a-z0-9]+).
  std::vector<std::string> stopwords;
  // Groups of spellings of one name; every member of a group (after steps 1-3) is replaced by
  // the group's first member. A token may be in at most one group; a group may not be empty.
  std::vector<std::vector<std::string>> variants;

  // The built-in honorifics, titles and legal forms, and the built-in variant groups
  // (Arabic, Russian, Korean and Chinese romanizations of common names).
  static NormalizerOptions Defaults();
};

struct NormalizedName {
  // The tokens, in the order the name writes them.
  std::vector<std::string> tokens;
  // The tokens joined by single spaces.
  std::string text;
  // The tokens sorted (byte order) and joined by single spaces: equal for names that differ
  // only in token order ("ZAWAHIRI, Ayman al-" and "Ayman al Zawahiri").
  std::string sorted_key;
  // True when the name had letters of a script whose transliteration leaves vowels out or
  // guesses them (Arabic, Hebrew, Syriac, Thaana, Thai, Lao): matching then also compares
  // vowel-insensitive keys (VowelInsensitiveKey).
  bool vowels_uncertain = false;
};

class NameNormalizer {
 public:
  // Fails (kInternal) only if ICU's transliterators cannot be created (missing ICU data), or
  // (kInvalidArgument) if a token is in two variant groups, a group is empty, or an option is
  // not lower-case ASCII ([a-z0-9]+).
  static absl::StatusOr<std::shared_ptr<const NameNormalizer>> Create(NormalizerOptions options);

  ~NameNormalizer();
  NormalizedName Normalize(std::string_view utf8) const;
  // The same, reusing "out"'s storage. With ASCII input it allocates only where "out" lacks
  // the capacity: a call after one with as many tokens, each as long, allocates nothing.
  void NormalizeInto(std::string_view utf8, NormalizedName& out) const;

 private:
  struct Impl;
  explicit NameNormalizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "token" without the letters a, e, i, o, u, y, w, and with runs of one repeated letter in
// what is left collapsed: "mohamed" -> "mhmd", "mahmwd" -> "mhmd", "hassan" -> "hsn",
// "ali" -> "l", "ly" -> "l". The key under which vowel-uncertain transliterations meet their
// Latin spellings; "" when nothing is left. "token" is a normalized token (lower-case ASCII);
// other bytes are kept as they are.
std::string VowelInsensitiveKey(std::string_view token);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_NAME_NORMALIZER_H_
