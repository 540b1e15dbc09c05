#include "vigil/screening/name_normalizer.h"

#include <unicode/normalizer2.h>
#include <unicode/parseerr.h>
#include <unicode/translit.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>
#include <unicode/utypes.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/const_init.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {
namespace {

// ---------------------------------------------------------------------------------------------
// Built-in options.

// Honorifics and titles that lists and payments put before names. Name parts that look like
// particles (al, el, bin, ibn, abu, abd, de, van, von) are deliberately absent: they tell
// people apart ("Abu Bakr" is not "Bakr"). Also absent: titles that are also given names
// (imam, amir, hafiz, qari, sayyid/seyed, sri) and generational suffixes (jr, sr), which
// distinguish a father from his son.
constexpr std::string_view kHonorifics[] = {
    "mr",    "mrs",    "ms",    "miss",   "mx",      "dr",      "prof",    "sir",  "dame",
    "lord",  "lady",   "rev",   "sheikh", "shaikh",  "sheik",   "shaykh",  "haji", "hajji",
    "hadji", "mullah", "mulla", "maulvi", "maulavi", "mawlawi", "maulana",
    // Military and police ranks, which lists give in a Title field and payments sometimes
    // carry in the name ("Colonel Adib SHABAN", "Gen. Faizullah Khan NOORZAI"). Ranks that are
    // also words of company names ("General Trading", "Major Shipping", "Captain Cook
    // Holdings") are left out: removing them would make generic company names equal.
    "gen", "colonel", "col", "maj", "capt", "lieutenant", "lt", "brigadier", "admiral", "adm",
    "cmdr", "sergeant", "sgt",
};

// Legal forms, as their abbreviations appear after steps 1-3 ("S.A." -> "sa", "A.Ş." -> "as",
// "ООО" -> "ooo"). Taken from the abbreviations that ISO 20275's Entity Legal Forms list gives
// for the jurisdictions most frequent in OFAC, UN and EU entity entries (US, UK, Commonwealth,
// EU, Switzerland, Russia and the CIS, Gulf states, Turkey, Southeast Asia). Left out: forms
// that are also common name tokens or words of a name ("ad", "se", "de", "cia") and
// multi-token forms whose parts are ambiguous alone (Polish "sp. z o.o.").
constexpr std::string_view kLegalForms[] = {
    // English-speaking jurisdictions.
    "llc",
    "ltd",
    "limited",
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "plc",
    "llp",
    "lp",
    "pte",
    "pty",
    "pvt",
    // Continental Europe.
    "gmbh",
    "ag",
    "kg",
    "sa",
    "sas",
    "sarl",
    "srl",
    "spa",
    "sl",
    "bv",
    "nv",
    "as",
    "asa",
    "oy",
    "oyj",
    "sro",
    "kft",
    "zrt",
    "doo",
    "lda",
    "ltda",
    // Latin America (S.A. de C.V., S.A.B. de C.V.).
    "cv",
    "sab",
    // Russia and the CIS (OOO, ZAO, OAO, PAO, and their English JSC forms; Ukrainian TOV).
    "jsc",
    "ojsc",
    "cjsc",
    "pjsc",
    "oao",
    "zao",
    "ooo",
    "pao",
    "tov",
    // Middle East, Turkey and Southeast Asia (free-zone establishments, W.L.L., S.A.E.,
    // Ltd. Sti., Sdn. Bhd.).
    "fze",
    "fzco",
    "fzc",
    "fz",
    "wll",
    "sae",
    "sti",
    "sdn",
    "bhd",
};

// Spelling variants of names frequent on sanctions lists, canonical form first. Criteria: every
// member is an attested romanization of the same name in the same script (Arabic, Cyrillic,
// Hangul or Han), as found in OFAC/UN/EU alias lists or in the systems themselves (BGN/PCGN,
// ISO 9 as ICU writes it, ICAO 9303 passports, Revised Romanization, McCune-Reischauer,
// Wade-Giles, Cantonese); translations into other languages (Alejandro for Alexander) are not
// variants. Tokens that romanize more than one name in common use are left out ("wong" is
// both 王 and 黄, "cheng" both 郑 and 程, "jun" both 전 and 준). Groups are disjoint (Create
// checks it).
const std::vector<std::vector<std::string_view>>& DefaultVariants() {
  static const auto* const kVariants = new std::vector<std::vector<std::string_view>>{
      // Arabic and Persian given names and names of listed organizations.
      {"muhammad", "mohammed", "mohamed", "mohammad", "muhammed", "mohamad", "muhamad", "muhamed",
       "mohamud", "mohd"},
      {"ahmad", "ahmed", "ahmet"},
      {"hussein", "husain", "hussain", "husayn", "husein", "hosein", "hossein"},
      {"hassan", "hasan"},
      {"abdullah", "abdallah", "abdulla", "abdellah"},
      {"abdul", "abdel", "abd"},
      {"abdulrahman", "abdelrahman", "abdurrahman", "abdalrahman", "abdirahman"},
      {"abdulaziz", "abdelaziz", "abdalaziz"},
      {"yusuf", "yousef", "youssef", "yousif", "yusef", "yousuf", "yussuf", "youssouf"},
      {"usama", "osama"},
      {"khalid", "khaled"},
      {"mahmoud", "mahmud", "mahmood"},
      {"omar", "umar", "omer"},
      {"ali", "aly"},
      {"ibrahim", "ebrahim", "ibraheem"},
      {"mustafa", "mustapha", "moustafa", "mostafa"},
      {"mansour", "mansur", "mansoor"},
      {"saeed", "said", "saied", "saeid"},
      {"jamal", "gamal"},
      {"tariq", "tarek", "tareq", "tarik"},
      {"faisal", "faysal", "feisal"},
      {"hamza", "hamzah"},
      {"hamid", "hameed", "hamed"},
      {"rashid", "rasheed", "rachid"},
      {"majid", "majeed"},
      {"nasser", "naser", "nasir", "nassir"},
      {"qasim", "qasem", "qassim", "kasim", "kassem", "ghasem"},
      {"sulaiman", "suleiman", "sulayman", "soliman", "soleiman", "suleyman"},
      {"yahya", "yehia", "yahia"},
      {"zakaria", "zakariya", "zakariyya"},
      {"bashir", "basheer", "bachir"},
      {"karim", "kareem"},
      {"jafar", "jaafar", "jaffar"},
      {"salih", "saleh"},
      {"adel", "adil"},
      {"walid", "waleed"},
      {"muhsin", "mohsen"},
      {"hizballah", "hezbollah", "hizbullah", "hizbollah"},
      {"qaida", "qaeda"},
      // Russian, Ukrainian and other Cyrillic given names (BGN/PCGN, ISO 9, ICAO, common).
      {"alexander", "aleksandr", "aleksander", "alexandr", "alexandre", "aleksandar", "oleksandr",
       "alexandros"},
      {"alexey", "aleksey", "alexei", "aleksei", "aleksej", "alexej"},
      {"dmitry", "dmitri", "dmitriy", "dmitrij", "dmitrii"},
      {"sergey", "sergei", "sergej", "sergiy", "sergii", "serhiy", "serhii"},
      {"yuri", "yury", "yuriy", "yurii", "jurij", "iurii"},
      {"andrey", "andrei", "andrej", "andriy", "andrii"},
      {"nikolay", "nikolai", "nikolaj"},
      {"mikhail", "mihail"},
      {"evgeny", "yevgeny", "evgeniy", "yevgeniy", "evgenij", "evgenii", "evgeni", "yevgeni"},
      {"vyacheslav", "viacheslav"},
      {"arkady", "arkadiy", "arkadi", "arkadij"},
      {"gennady", "gennadiy", "gennadi", "gennadij"},
      {"anatoly", "anatoliy", "anatoli", "anatolij"},
      {"vitaly", "vitaliy", "vitali", "vitalij"},
      {"valery", "valeriy", "valeri", "valerij"},
      {"grigory", "grigoriy", "grigori", "grigorij"},
      {"vasily", "vasiliy", "vasili", "vasilij", "vassily"},
      {"pyotr", "petr"},
      {"fyodor", "fedor", "feodor"},
      {"artyom", "artem", "artiom"},
      {"ilya", "ilia", "ilja"},
      {"elena", "yelena"},
      {"tatiana", "tatyana", "tatjana"},
      {"natalia", "natalya", "natalja", "nataliya"},
      {"yulia", "yuliya", "iuliia"},
      // Korean surnames and name syllables: Revised Romanization (what this normalizer
      // writes for Hangul), McCune-Reischauer (North Korean entries) and customary spellings.
      // "li" is here because 이/리 and Chinese 李 are one surname. Left out: pairs whose
      // Revised Romanization is a common short word or another language's name
      // (고 go/Ko, 안 an/Ahn, 임 im/Lim, 유 yu/Yoo, 손 son/Sohn, 서 seo/Suh).
      {"kim", "gim"},
      {"lee", "li", "yi", "rhee", "ri"},
      {"park", "pak", "bak"},
      {"choi", "choe", "chwe"},
      {"jong", "jeong", "jung", "chong", "chung"},
      {"un", "eun"},
      {"kang", "gang"},
      {"yoon", "yun"},
      {"shin", "sin"},
      {"kwon", "gwon"},
      {"moon", "mun"},
      {"cho", "jo"},
      {"baek", "paek", "paik"},
      {"sung", "seong"},
      {"hyon", "hyeon", "hyun"},
      {"chol", "cheol", "chul"},
      {"kyong", "gyeong", "kyung", "kyeong"},
      {"kwang", "gwang"},
      {"hyok", "hyeok", "hyuk"},
      {"sok", "seok"},
      // Chinese surnames: pinyin, Wade-Giles and Cantonese spellings of one character.
      {"zhang", "chang", "cheung"},
      {"chen", "chan"},
      {"zhou", "chou", "chow"},
      {"huang", "hwang"},
      {"liu", "lau"},
      {"zhao", "chao"},
      {"xu", "hsu"},
      {"jiang", "chiang"},
      {"guo", "kuo", "kwok"},
      {"deng", "teng"},
      {"xie", "hsieh"},
      {"cai", "tsai"},
  };
  return *kVariants;
}

// ---------------------------------------------------------------------------------------------
// ICU state.

// Transliterates everything but Han and Hangul (handled before it) to ASCII.
//  - Arabic tāʾ marbūṭa (ة) ends a name as the vowel "a" (Usama, Hamza, Fatima); Any-Latin
//    writes it "t", as in the construct state, which names do not use.
//  - The rule between Any-Latin and Latin-ASCII deletes the apostrophe-like marks (step 3)
//    while they are still distinguishable: Latin-ASCII would turn ʺ into '"', a separator, and
//    leaves ʿ ʾ as they are.
constexpr char16_t kToAsciiRules[] =
    u"::Russian-Latin/BGN;\n"
    u"\u0629 > a;\n"
    u"::Any-Latin;\n"
    u"[\u02B9\u02BA\u02BC\u02BE\u02BF\u2018\u2019] > ;\n"
    u"::Latin-ASCII;\n";
// Han runs: pinyin with surname readings, syllables separated by spaces, tones removed.
constexpr char kHanToAsciiId[] = "Han-Latin/Names; Latin-ASCII";

// The process-wide originals, built once. Every thread transliterates with its own clones
// (ThreadState) and never with these.
struct IcuPrototypes {
  std::unique_ptr<icu::Transliterator> to_ascii;
  std::unique_ptr<icu::Transliterator> han_to_ascii;
  const icu::Normalizer2* nfkc_casefold = nullptr;  // Owned by ICU; thread-safe.
  absl::Status status;
};

IcuPrototypes MakeIcuPrototypes() {
  IcuPrototypes p;
  UErrorCode err = U_ZERO_ERROR;
  UParseError parse_error;
  p.to_ascii.reset(icu::Transliterator::createFromRules(
      "vigil-name-to-ascii", icu::UnicodeString(kToAsciiRules), UTRANS_FORWARD, parse_error, err));
  if (U_FAILURE(err) || p.to_ascii == nullptr) {
    p.status = absl::InternalError(
        absl::StrCat("ICU cannot create the name transliterator: ", u_errorName(err)));
    return p;
  }
  p.han_to_ascii.reset(icu::Transliterator::createInstance(
      icu::UnicodeString(kHanToAsciiId, -1, US_INV), UTRANS_FORWARD, err));
  if (U_FAILURE(err) || p.han_to_ascii == nullptr) {
    p.status = absl::InternalError(
        absl::StrCat("ICU cannot create ", kHanToAsciiId, ": ", u_errorName(err)));
    return p;
  }
  p.nfkc_casefold = icu::Normalizer2::getNFKCCasefoldInstance(err);
  if (U_FAILURE(err) || p.nfkc_casefold == nullptr) {
    p.status =
        absl::InternalError(absl::StrCat("ICU cannot load NFKC_Casefold data: ", u_errorName(err)));
  }
  return p;
}

const IcuPrototypes& Prototypes() {
  // Never destroyed: threads' clones may outlive static destruction.
  static const IcuPrototypes* const kPrototypes = new IcuPrototypes(MakeIcuPrototypes());
  return *kPrototypes;
}

// Serializes cloning. translit.h: "Transliterators are not immutable, so they must be
// synchronized when shared between threads", and clone() reads the prototype. A clone happens
// once per thread, so the lock costs nothing that matters.
ABSL_CONST_INIT absl::Mutex clone_mu(absl::kConstInit);

// One thread's transliterators and scratch buffers.
//
// Why thread_local rather than a pool: Transliterator::transliterate is not safe to call
// concurrently on one instance, so each call needs an instance of its own. A pool guarded by a
// mutex would take a lock on every non-ASCII name, and contend when screening workers run in
// parallel; a thread-local clone costs no synchronization after the first use. It is not
// keyed by normalizer because the transliterators are the same for every normalizer (options
// only affect steps 4 and 5), so no clone can outlive or mismatch the object it serves. The
// cost is one set of clones (about 50 KiB of heap, measured) per thread that ever normalizes
// non-ASCII text, freed at thread exit.
struct ThreadState {
  std::unique_ptr<icu::Transliterator> to_ascii;
  std::unique_ptr<icu::Transliterator> han_to_ascii;
  // Scratch buffers, kept to reuse their capacity from one name to the next.
  icu::UnicodeString decoded;
  icu::UnicodeString folded;
  icu::UnicodeString prepared;
  icu::UnicodeString han_run;
  std::string ascii;
};

// REQUIRES: Prototypes().status.ok() (NameNormalizer::Create checked it).
ThreadState& GetThreadState() {
  thread_local std::unique_ptr<ThreadState> state;
  if (state == nullptr) {
    const IcuPrototypes& p = Prototypes();
    auto s = std::make_unique<ThreadState>();
    {
      absl::MutexLock lock(&clone_mu);
      s->to_ascii.reset(p.to_ascii->clone());
      s->han_to_ascii.reset(p.han_to_ascii->clone());
    }
    // clone() fails only when memory is exhausted.
    VIGIL_CHECK(s->to_ascii != nullptr && s->han_to_ascii != nullptr);
    state = std::move(s);
  }
  return *state;
}

// ---------------------------------------------------------------------------------------------
// Steps 1 and 2: non-ASCII text to ASCII.

bool IsVowelUncertainScript(UScriptCode script) {
  switch (script) {
    case USCRIPT_ARABIC:
    case USCRIPT_HEBREW:
    case USCRIPT_SYRIAC:
    case USCRIPT_THAANA:
    case USCRIPT_THAI:
    case USCRIPT_LAO:
      return true;
    default:
      return false;
  }
}

void AppendAscii(std::string_view ascii, icu::UnicodeString& out) {
  for (const char c : ascii) out.append(static_cast<char16_t>(c));
}

// Revised Romanization (Korean Ministry of Culture, 2000) of syllables read one by one:
// initials, medial vowels and finals in Unicode's jamo order (U+AC00 + (19 * 21 * 28)).
// Finals take their word-final value (ㄱ -> k, ㄹ -> l), since a syllable here is read alone.
constexpr std::string_view kHangulInitials[19] = {"g",  "kk", "n", "d",  "tt", "r", "m",
                                                  "b",  "pp", "s", "ss", "",   "j", "jj",
                                                  "ch", "k",  "t", "p",  "h"};
constexpr std::string_view kHangulVowels[21] = {"a",  "ae", "ya", "yae", "eo", "e",  "yeo",
                                                "ye", "o",  "wa", "wae", "oe", "yo", "u",
                                                "wo", "we", "wi", "yu",  "eu", "ui", "i"};
constexpr std::string_view kHangulFinals[28] = {"",  "k",  "k", "k", "n", "n", "n", "t", "l", "k",
                                                "m", "l",  "l", "l", "p", "l", "m", "p", "p", "t",
                                                "t", "ng", "t", "t", "k", "t", "p", "t"};
constexpr UChar32 kHangulFirst = 0xAC00;
constexpr UChar32 kHangulLast = 0xD7A3;

bool IsHangulSyllable(UChar32 c) { return c >= kHangulFirst && c <= kHangulLast; }

// Appends " <romanization> " of one Hangul syllable. A surname whose romanization would be a
// single letter gets its customary spelling (header, step 2).
void AppendHangulSyllable(UChar32 c, bool surname, icu::UnicodeString& out) {
  if (surname) {
    const char* customary = nullptr;
    switch (c) {
      case 0xC774:  // 이
        customary = " yi ";
        break;
      case 0xC624:  // 오
        customary = " oh ";
        break;
      case 0xC6B0:  // 우
        customary = " woo ";
        break;
      default:
        break;
    }
    if (customary != nullptr) {
      AppendAscii(customary, out);
      return;
    }
  }
  const int index = c - kHangulFirst;
  out.append(u' ');
  AppendAscii(kHangulInitials[index / (21 * 28)], out);
  AppendAscii(kHangulVowels[(index / 28) % 21], out);
  AppendAscii(kHangulFinals[index % 28], out);
  out.append(u' ');
}

// Transliterates the Han run in state.han_run and appends its syllables joined: " <joined> ".
// In the name's first Han run the first syllable, the surname, stays apart:
// " <surname> <rest joined> ". A later run is a given name written apart from its surname
// ("习 近平" -> "xi jinping"). The run is transliterated whole rather than character by
// character so that ICU's dictionary can pick readings from context.
void FlushHanRun(ThreadState& state, bool& first_run) {
  if (state.han_run.isEmpty()) return;
  state.han_to_ascii->transliterate(state.han_run);
  icu::UnicodeString& out = state.prepared;
  out.append(u' ');
  const int32_t n = state.han_run.length();
  int32_t i = 0;
  if (first_run) {
    while (i < n && state.han_run.charAt(i) == u' ') ++i;
    for (; i < n && state.han_run.charAt(i) != u' '; ++i) out.append(state.han_run.charAt(i));
    out.append(u' ');
    first_run = false;
  }
  for (; i < n; ++i) {
    if (state.han_run.charAt(i) != u' ') out.append(state.han_run.charAt(i));
  }
  out.append(u' ');
  state.han_run.remove();
}

// Decodes "utf8" into state.decoded, invalid bytes becoming spaces (step 1).
void DecodeUtf8(std::string_view utf8, ThreadState& state) {
  state.decoded.remove();
  const auto* bytes = reinterpret_cast<const uint8_t*>(utf8.data());
  const int32_t length = static_cast<int32_t>(utf8.size());  // A piece: see kMaxPieceBytes.
  int32_t i = 0;
  while (i < length) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    state.decoded.append(c < 0 ? UChar32{' '} : c);
  }
}

// Fills state.prepared from state.folded: Hangul romanized, Han runs transliterated, every
// other code point copied. Returns whether a letter of a vowel-uncertain script was seen.
bool PrepareScripts(ThreadState& state) {
  state.prepared.remove();
  state.han_run.remove();
  bool vowels_uncertain = false;
  bool first_han_run = true;
  bool first_hangul_run = true;
  bool previous_hangul = false;
  const char16_t* units = state.folded.getBuffer();
  const int32_t n = state.folded.length();
  int32_t i = 0;
  while (i < n) {
    UChar32 c;
    U16_NEXT(units, i, n, c);
    if (previous_hangul && !IsHangulSyllable(c)) {
      previous_hangul = false;
      first_hangul_run = false;
    }
    if (c < 0x80) {
      FlushHanRun(state, first_han_run);
      state.prepared.append(c);
      continue;
    }
    if (IsHangulSyllable(c)) {
      FlushHanRun(state, first_han_run);
      AppendHangulSyllable(c, /*surname=*/first_hangul_run && !previous_hangul, state.prepared);
      previous_hangul = true;
      continue;
    }
    UErrorCode err = U_ZERO_ERROR;
    const UScriptCode script = uscript_getScript(c, &err);
    if (script == USCRIPT_HAN) {
      state.han_run.append(c);
      continue;
    }
    FlushHanRun(state, first_han_run);
    if (!vowels_uncertain && u_isalpha(c) && IsVowelUncertainScript(script)) {
      vowels_uncertain = true;
    }
    state.prepared.append(c);
  }
  FlushHanRun(state, first_han_run);
  return vowels_uncertain;
}

bool IsAllAscii(const icu::UnicodeString& s) {
  const char16_t* units = s.getBuffer();
  return std::all_of(units, units + s.length(), [](char16_t u) { return u < 0x80; });
}

// Appends the ASCII form of one piece of non-ASCII input to state.ascii. Returns whether a
// letter of a vowel-uncertain script was seen.
bool PieceToAscii(std::string_view utf8, const icu::Normalizer2& nfkc_casefold,
                  ThreadState& state) {
  DecodeUtf8(utf8, state);
  UErrorCode err = U_ZERO_ERROR;
  nfkc_casefold.normalize(state.decoded, state.folded, err);
  // normalize() fails only on memory exhaustion or a bogus input string; the unnormalized
  // text still transliterates, only fullwidth and presentation forms are then lost.
  if (U_FAILURE(err)) state.folded = state.decoded;
  const bool vowels_uncertain = PrepareScripts(state);
  // Pure Han or Hangul input, and Latin that only needed folding, are ASCII by now.
  if (!IsAllAscii(state.prepared)) state.to_ascii->transliterate(state.prepared);
  const char16_t* units = state.prepared.getBuffer();
  const int32_t n = state.prepared.length();
  state.ascii.push_back(' ');
  for (int32_t i = 0; i < n; ++i) {
    // What ICU could not make ASCII separates tokens (surrogate halves included).
    state.ascii.push_back(units[i] < 0x80 ? static_cast<char>(units[i]) : ' ');
  }
  return vowels_uncertain;
}

// Non-ASCII input is transliterated in pieces of at most this many bytes, cut at an ASCII
// space where there is one: it bounds ICU's buffers (indexed by int32_t) whatever the input,
// and a real name never reaches it.
constexpr size_t kMaxPieceBytes = 64 * 1024;

// The end of the piece that starts at "begin".
size_t PieceEnd(std::string_view utf8, size_t begin) {
  if (utf8.size() - begin <= kMaxPieceBytes) return utf8.size();
  const size_t limit = begin + kMaxPieceBytes;
  for (size_t i = limit; i > begin + kMaxPieceBytes / 2; --i) {
    if (utf8[i - 1] == ' ') return i;
  }
  size_t end = limit;  // No space: cut before a UTF-8 lead byte, at most 3 bytes back.
  while (end > limit - 3 && (static_cast<uint8_t>(utf8[end]) & 0xC0) == 0x80) --end;
  return end;
}

// Steps 1 and 2 for input with a byte >= 0x80: state.ascii receives ASCII text.
bool ToAscii(std::string_view utf8, ThreadState& state) {
  const icu::Normalizer2& nfkc_casefold = *Prototypes().nfkc_casefold;
  state.ascii.clear();
  bool vowels_uncertain = false;
  for (size_t begin = 0; begin < utf8.size();) {
    const size_t end = PieceEnd(utf8, begin);
    vowels_uncertain |= PieceToAscii(utf8.substr(begin, end - begin), nfkc_casefold, state);
    begin = end;
  }
  return vowels_uncertain;
}

// ---------------------------------------------------------------------------------------------
// Step 3: ASCII text to tokens.

// What a byte is to the tokenizer; bytes >= 0x80 never reach it, and would separate.
enum class ByteClass : uint8_t { kSeparator, kLetter, kDigit, kApostrophe };

constexpr std::array<ByteClass, 256> MakeByteClasses() {
  std::array<ByteClass, 256> classes{};  // kSeparator
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = ByteClass::kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) classes[c] = ByteClass::kLetter;
  for (int c = '0'; c <= '9'; ++c) classes[c] = ByteClass::kDigit;
  classes['\''] = ByteClass::kApostrophe;
  classes['`'] = ByteClass::kApostrophe;
  return classes;
}
constexpr std::array<ByteClass, 256> kByteClasses = MakeByteClasses();

ByteClass ClassOf(char c) { return kByteClasses[static_cast<uint8_t>(c)]; }

// Writes the tokens of "text" into tokens[0..n) and returns n; elements from n on are left
// for reuse. A piece is a maximal run of letters, digits and apostrophes; its token is the
// piece lower-cased without apostrophes. A one-letter piece that follows a run of one-letter
// pieces after exactly one '.' joins that run's token ("S.A." -> "sa").
size_t Tokenize(std::string_view text, std::vector<std::string>& tokens) {
  size_t n = 0;
  bool previous_is_initials = false;  // The last token is one letter, or joined initials.
  size_t previous_end = 0;            // Where the last token's piece ended in "text".
  const size_t size = text.size();
  size_t i = 0;
  while (true) {
    while (i < size && ClassOf(text[i]) == ByteClass::kSeparator) ++i;
    if (i == size) break;
    const size_t start = i;
    while (i < size && ClassOf(text[i]) != ByteClass::kSeparator) ++i;
    const bool one_letter = i - start == 1 && ClassOf(text[start]) == ByteClass::kLetter;
    if (one_letter && previous_is_initials && start == previous_end + 1 &&
        text[previous_end] == '.') {
      tokens[n - 1].push_back(static_cast<char>(text[start] | 0x20));  // Lower case.
      previous_end = i;
      continue;
    }
    // Copy the piece, then lower-case it and drop apostrophes in place: one copy into the
    // string's existing capacity, and a loop over a local pointer the compiler keeps in
    // registers (push_back per byte reloads the string's fields on every byte).
    if (n == tokens.size()) tokens.emplace_back();
    std::string& token = tokens[n];
    token.assign(text.data() + start, i - start);
    char* const bytes = token.data();
    size_t length = 0;
    for (size_t k = 0; k < token.size(); ++k) {
      const char c = bytes[k];
      switch (ClassOf(c)) {
        case ByteClass::kLetter:
          bytes[length++] = static_cast<char>(c | 0x20);
          break;
        case ByteClass::kApostrophe:
          break;
        default:
          bytes[length++] = c;
      }
    }
    token.resize(length);
    if (length == 0) continue;  // Apostrophes only.
    ++n;
    previous_is_initials = one_letter;
    previous_end = i;
  }
  return n;
}

// Scratch space for one entry per token: on the stack for up to kStackTokens tokens (every
// real name), so that NormalizeInto allocates nothing; on the heap beyond.
constexpr size_t kStackTokens = 32;
template <typename T>
class PerToken {
 public:
  explicit PerToken(size_t n) {
    if (n > kStackTokens) heap_.resize(n);
  }
  T& operator[](size_t i) { return heap_.empty() ? stack_[i] : heap_[i]; }
  T* begin() { return heap_.empty() ? stack_.data() : heap_.data(); }

 private:
  std::array<T, kStackTokens> stack_;
  std::vector<T> heap_;
};

// Writes tokens[0..n), sorted, joined by single spaces into "key".
void WriteSortedKey(const std::vector<std::string>& tokens, size_t n, std::string& key) {
  PerToken<const std::string*> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = &tokens[i];
  std::sort(order.begin(), order.begin() + n,
            [](const std::string* a, const std::string* b) { return *a < *b; });
  key.clear();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) key.push_back(' ');
    key.append(*order[i]);
  }
}

absl::Status ValidateOptionToken(std::string_view what, std::string_view token) {
  const bool valid = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " \"", ToAbsl(token),
                                                 "\" is not a lower-case ASCII token ([a-z0-9]+)"));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

NormalizerOptions NormalizerOptions::Defaults() {
  NormalizerOptions options;
  for (const std::string_view w : kHonorifics) options.stopwords.emplace_back(w);
  for (const std::string_view w : kLegalForms) options.stopwords.emplace_back(w);
  for (const std::vector<std::string_view>& group : DefaultVariants()) {
    options.variants.emplace_back(group.begin(), group.end());
  }
  return options;
}

struct NameNormalizer::Impl {
  // What steps 4 and 5 do to one token. A token may be both a stopword and a variant: when
  // every token is a stopword, none is removed, and variants then apply.
  struct TokenRule {
    bool stopword = false;
    std::string canonical;  // The variant group's first member; empty if none applies.
  };
  // Every stopword and every non-canonical variant: one hash lookup per token serves both
  // steps. Constant after Create, so pointers to its values stay valid.
  absl::flat_hash_map<std::string, TokenRule> rules;

  // Steps 3 to 5 over ASCII "text", into "out" (all but vowels_uncertain).
  void TokensFromAscii(std::string_view text, NormalizedName& out) const;
};

void NameNormalizer::Impl::TokensFromAscii(std::string_view text, NormalizedName& out) const {
  std::vector<std::string>& tokens = out.tokens;
  const size_t n = Tokenize(text, tokens);

  PerToken<const TokenRule*> rule(n);
  size_t kept = 0;  // Tokens that are not stopwords.
  for (size_t i = 0; i < n; ++i) {
    const auto it = rules.find(tokens[i]);
    rule[i] = it == rules.end() ? nullptr : &it->second;
    kept += rule[i] != nullptr && rule[i]->stopword ? 0 : 1;
  }
  const bool remove_stopwords = kept > 0;  // Step 4: unless every token is one.
  size_t w = 0;
  for (size_t r = 0; r < n; ++r) {
    const TokenRule* token_rule = rule[r];
    if (token_rule != nullptr && token_rule->stopword && remove_stopwords) continue;
    if (w != r) std::swap(tokens[w], tokens[r]);  // Keeps both strings' capacity.
    if (token_rule != nullptr && !token_rule->canonical.empty()) {
      tokens[w].assign(token_rule->canonical);  // Step 5.
    }
    ++w;
  }
  tokens.resize(w);

  out.text.clear();
  for (size_t i = 0; i < w; ++i) {
    if (i > 0) out.text.push_back(' ');
    out.text.append(tokens[i]);
  }
  WriteSortedKey(tokens, w, out.sorted_key);
}

absl::StatusOr<std::shared_ptr<const NameNormalizer>> NameNormalizer::Create(
    NormalizerOptions options) {
  VIGIL_RETURN_IF_ERROR(Prototypes().status);
  auto impl = std::make_unique<Impl>();
  for (const std::string& word : options.stopwords) {
    VIGIL_RETURN_IF_ERROR(ValidateOptionToken("stopword", word));
    impl->rules[word].stopword = true;
  }
  absl::flat_hash_map<std::string, size_t> group_of;  // Token -> index of its group.
  for (size_t g = 0; g < options.variants.size(); ++g) {
    const std::vector<std::string>& group = options.variants[g];
    if (group.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("variant group ", g, " is empty"));
    }
    for (const std::string& token : group) {
      VIGIL_RETURN_IF_ERROR(ValidateOptionToken("variant", token));
      const auto [it, inserted] = group_of.emplace(token, g);
      if (!inserted && it->second != g) {
        return absl::InvalidArgumentError(
            absl::StrCat("variant \"", token, "\" is in groups ", it->second, " and ", g));
      }
      if (token != group.front()) impl->rules[token].canonical = group.front();
    }
  }
  return std::shared_ptr<const NameNormalizer>(new NameNormalizer(std::move(impl)));
}

NameNormalizer::NameNormalizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NameNormalizer::~NameNormalizer() = default;

NormalizedName NameNormalizer::Normalize(std::string_view utf8) const {
  NormalizedName out;
  NormalizeInto(utf8, out);
  return out;
}

void NameNormalizer::NormalizeInto(std::string_view utf8, NormalizedName& out) const {
  const bool ascii =
      std::all_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; });
  if (ascii) {
    out.vowels_uncertain = false;
    impl_->TokensFromAscii(utf8, out);
    return;
  }
  ThreadState& state = GetThreadState();
  out.vowels_uncertain = ToAscii(utf8, state);
  impl_->TokensFromAscii(state.ascii, out);
}

std::string VowelInsensitiveKey(std::string_view token) {
  std::string key;
  key.reserve(token.size());
  for (const char c : token) {
    switch (c) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
      case 'y':
      case 'w':
        continue;
      default:
        if (key.empty() || key.back() != c) key.push_back(c);
    }
  }
  return key;
}

}  // namespace vigil::screening
