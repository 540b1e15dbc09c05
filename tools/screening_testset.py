#!/usr/bin/env python3
"""Labelled test set for sanctions-name screening, built from the OFAC SDN 2019 sample.

Reads   testdata/sanctions/ofac_sdn_legacy_csv_2019/sdn.csv and alt.csv (legacy OFAC CSV)
Writes  testdata/screening/labelled_queries.csv   header: query,expected_entry_id,category
        testdata/screening/PROVENANCE.md          what, from which files, command, counts

Each row is a name a payment might carry. Positive rows are derived from one SDN primary name
or alias and carry that entry's ent_num in expected_entry_id; negative rows (expected_entry_id
empty) are names that must match nothing on the list. Categories:

  exact, typo, dropped_middle, swapped, title, transliteration, case_punct   (positives)
  negative_near, negative_common                                             (negatives)

PROVENANCE.md (written by this script) defines each category. The Cyrillic and Arabic-script
renderings and the spelling-variant groups are this script's own synthetic tables, not
authoritative transliterations.

Run from the repository root (any working directory works; paths are found from this file):

    /usr/bin/python3 tools/screening_testset.py
    /usr/bin/python3 tools/screening_testset.py --trace /tmp/screening_trace.csv

--trace additionally writes, outside the outputs above, one line per query with its source
name and the transformation applied. Standard library only; the seed is fixed, so re-running
rewrites byte-identical files. Rows are sorted by category, then by generation index.
"""

import argparse
import collections
import csv
import hashlib
import io
import os
import random
import re
import sys

SEED = 20190115
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC_REL = "testdata/sanctions/ofac_sdn_legacy_csv_2019"
OUT_REL = "testdata/screening"
COMMAND = "/usr/bin/python3 tools/screening_testset.py"

# Rows wanted per category (fewer where the list does not allow).
TARGETS = {
    "exact": 135,
    "typo": 135,
    "dropped_middle": 135,
    "swapped": 135,
    "title": 135,
    "transliteration": 135,
    "case_punct": 135,
    "negative_near": 350,
    "negative_common": 350,
}
POSITIVE_CATEGORIES = ["exact", "typo", "dropped_middle", "swapped", "title",
                       "transliteration", "case_punct"]
MIN_LETTERS = 6
GENERIC_MIN_ENTRIES = 8  # negative_near entities: a word used by this many entries is generic
# negative_near entities: names with these words (armed groups, parties, states, ...) are not
# used, since a generic remainder such as "Islamic Revolutionary Guard ..." still identifies them.
NOT_COMMERCIAL_WORDS = {
    "islamic", "islami", "jihad", "revolutionary", "guard", "corps", "army", "brigade",
    "brigades", "movement", "front", "liberation", "martyrs", "peoples", "republic", "party",
    "state", "mujahideen", "mujahidin", "ansar", "hizballah", "hezbollah", "hamas", "qaida",
    "taliban", "militia", "battalion", "battalions", "forces", "ministry", "government",
    "committee", "resistance", "jamaat", "jemaah", "lashkar", "jaish", "tehrik", "caliphate",
    "mujahid", "mujahedin", "fighters", "emirate", "intelligence", "security", "military",
    "defense", "defence", "police", "cartel", "organization", "group", "network",
    "harakat", "islamiya", "islamiyya", "islamiyah", "muqawama", "hizb", "jabhat", "tanzim",
    "kataib", "saraya", "liwa", "ittihad", "sham", "organisation", "division", "directorate",
    "iderat", "agency", "bureau", "department", "office", "council", "administration",
}

# ----------------------------------------------------------------------------------------------
# Word tables
# ----------------------------------------------------------------------------------------------

# Honorifics / titles (individuals) and legal forms (entities), lower case, periods removed.
TITLE_WORDS = {
    "mr", "mrs", "ms", "miss", "dr", "sheikh", "shaykh", "shaikh", "sheik", "haji", "hajji",
    "general", "gen", "colonel", "col", "brigadier", "major", "captain", "capt", "prof",
    "professor", "mullah", "mulla", "maulawi", "mawlawi", "maulvi", "molavi", "mawlana",
    "maulana", "qari", "imam", "sir",
}
LEGAL_WORDS = {
    "llc", "ltd", "limited", "gmbh", "sa", "co", "company", "inc", "incorporated", "corp",
    "corporation", "plc", "ag", "jsc", "ojsc", "ooo", "oao", "zao", "pjsc", "cjsc", "ltda",
    "limitada", "sas", "bv", "nv", "srl", "spa", "cv", "pvt", "fze", "fzco", "fzc", "llp",
    "pte", "bhd", "kg", "sarl", "wll", "cia",
}
STOPWORDS = TITLE_WORDS | LEGAL_WORDS
# Wider net, only to decide whether an entity name already has a legal form (`title` then never
# adds one): more national forms and the words of spelled-out ones.
LEGAL_DETECT = LEGAL_WORDS | {
    "tov", "ao", "pao", "pjs", "ca", "ac", "ci", "scs", "sca", "eu", "rl", "sapi", "sab", "sac",
    "saa", "sro", "doo", "ad", "dd", "kft", "zrt", "lda", "eirl", "eireli", "sal", "bsc", "qsc",
    "psc", "sdn", "fzllc", "dmcc", "lp", "se", "oy", "ab", "asa", "snc", "sl", "slu", "mchj",
    "obshchestvo", "aktsionernoe", "otvetstvennostyu", "tovarystvo", "sirketi", "sociedad",
    "anonima", "compania", "cia", "bhd", "pt", "tbk", "kk", "kabushiki", "kaisha",
    "gongsi", "youxian",
}
# Function words and particles: ignored by the negatives' token-containment check (ignoring
# them makes that check stricter) and never dropped or swapped on their own.
FUNCTION_WORDS = {
    "the", "and", "for", "of", "in", "de", "del", "la", "las", "los", "el", "al", "y", "e",
    "da", "do", "dos", "das", "di", "van", "von", "der", "den", "bin", "ben", "ibn", "bint",
    "abu", "abou", "abd", "abdul", "abdel", "ul", "ur", "ud", "umm", "ould", "ait", "en", "et",
    "und", "an", "at", "as", "ash", "ad", "ar", "az",
}
PARTICLES = {"al", "el", "bin", "ben", "ibn", "bint", "abu", "abou", "abd", "abdul", "abdel",
             "de", "del", "la", "las", "los", "y", "da", "do", "dos", "das", "di", "van", "von",
             "der", "den", "ul", "ur", "ud", "umm", "ould", "ait"}

# Spelling-variant groups (synthetic, this script's own): used for the alternative-romanization
# part of `transliteration`, and (first member = canonical form) by every normalization below.
VARIANT_GROUPS = [
    ["muhammad", "mohammed", "mohamed", "mohammad", "muhammed", "mohamad"],
    ["ahmad", "ahmed"],
    ["husayn", "hussein", "husain", "hussain", "hossein"],
    ["hasan", "hassan"],
    ["yusuf", "youssef", "yousef", "yousuf", "yusef"],
    ["aleksandr", "alexander", "aleksander", "alexandr"],
    ["dmitriy", "dmitri", "dmitry"],
    ["sergey", "sergei", "sergiy"],
    ["andrey", "andrei", "andriy"],
    ["aleksey", "alexei", "aleksei", "alexey"],
    ["yuriy", "yuri", "yury"],
    ["nikolay", "nikolai"],
    ["yevgeniy", "yevgeny", "evgeny", "evgeniy"],
    ["vitaliy", "vitaly", "vitali"],
    ["anatoliy", "anatoly", "anatoli"],
    ["gennadiy", "gennady", "gennadi"],
    ["valeriy", "valery", "valeri"],
    ["arkadiy", "arkady", "arkadi"],
    ["vyacheslav", "viacheslav"],
    ["yelena", "elena"],
    ["natalya", "natalia"],
    ["tatyana", "tatiana"],
    ["viktor", "victor"],
    ["konstantin", "constantin"],
    ["abdallah", "abdullah", "abdulla"],
    ["umar", "omar"],
    ["usama", "osama", "usamah"],
    ["said", "saeed", "saied"],
    ["abdul", "abdel", "abdoul"],
    ["khalid", "khaled"],
    ["mahmud", "mahmoud", "mahmood"],
    ["mustafa", "mostafa", "moustafa"],
    ["ibrahim", "ebrahim"],
    ["ismail", "ismael"],
    ["sulayman", "suleiman", "sulaiman", "soliman"],
    ["abu", "abou"],
    ["faisal", "faysal", "feisal"],
    ["nasir", "nasser", "naser"],
    ["rahman", "rehman"],
    ["ayman", "aiman"],
    ["hamid", "hamed"],
    ["muhsin", "mohsen", "mohsin"],
    ["qasim", "qassem", "kassem", "kasim"],
    ["uthman", "othman", "osman"],
    ["karim", "kareem"],
    ["rashid", "rasheed", "rachid"],
    ["majid", "majeed"],
    ["walid", "waleed"],
    ["salih", "saleh"],
    ["jafar", "jaafar"],
    ["hamza", "hamzah"],
    ["tariq", "tarek", "tareq"],
    ["adil", "adel"],
    ["salim", "saleem"],
    ["yahya", "yehia", "yahia"],
    ["musa", "moussa", "mousa"],
    ["zakariya", "zakaria", "zakariyya"],
]
CANON = {}
for _g in VARIANT_GROUPS:
    for _m in _g:
        assert _m not in CANON, _m
        CANON[_m] = _g[0]

# --- Latin -> Russian Cyrillic (synthetic). Longest match first; context rules in ru_word(). ---
RU_MULTI = [("shch", "щ"), ("kh", "х"), ("zh", "ж"), ("ch", "ч"), ("sh", "ш"), ("ts", "ц"),
            ("yu", "ю"), ("ya", "я"), ("yo", "ё"), ("ye", "е")]
RU_SINGLE = {"a": "а", "b": "б", "v": "в", "g": "г", "d": "д", "e": "е", "z": "з", "i": "и",
             "k": "к", "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "r": "р", "s": "с",
             "t": "т", "u": "у", "f": "ф", "h": "х", "c": "к", "q": "к", "w": "в", "x": "кс",
             "j": "дж", "'": "ь"}

# --- Latin -> Arabic script (synthetic). Whole words first, then a consonant skeleton. ---
AR_WORDS = {}
for _names, _ar in [
    (["muhammad", "mohammed", "mohamed", "mohammad", "muhammed", "mohamad"], "محمد"),
    (["ahmad", "ahmed"], "أحمد"), (["ali"], "علي"), (["hasan", "hassan"], "حسن"),
    (["husayn", "hussein", "husain", "hussain"], "حسين"), (["ibrahim", "ebrahim"], "إبراهيم"),
    (["umar", "omar"], "عمر"), (["khalid", "khaled"], "خالد"),
    (["mustafa", "mostafa", "moustafa"], "مصطفى"), (["mahmud", "mahmoud"], "محمود"),
    (["yusuf", "youssef", "yousef", "yousuf"], "يوسف"), (["said", "saeed"], "سعيد"),
    (["salih", "saleh"], "صالح"), (["rahman", "rehman"], "رحمن"), (["aziz"], "عزيز"),
    (["karim", "kareem"], "كريم"), (["hamid"], "حميد"), (["jamal"], "جمال"),
    (["ismail"], "إسماعيل"), (["sulayman", "suleiman", "sulaiman"], "سليمان"),
    (["musa"], "موسى"), (["yahya"], "يحيى"), (["hamza", "hamzah"], "حمزة"),
    (["abbas"], "عباس"), (["nasir", "nasser"], "ناصر"), (["faisal"], "فيصل"),
    (["usama", "osama"], "أسامة"), (["qasim"], "قاسم"), (["uthman", "othman"], "عثمان"),
    (["abu", "abou"], "أبو"), (["abd"], "عبد"), (["bin", "ibn"], "بن"), (["bint"], "بنت"),
    (["allah", "ullah", "llah"], "الله"), (["abdallah", "abdullah", "abdulla"], "عبد الله"),
    (["salim"], "سالم"), (["rashid"], "راشد"), (["bashir"], "بشير"), (["jamil"], "جميل"),
    (["khalil"], "خليل"), (["majid"], "ماجد"), (["walid"], "وليد"), (["hisham"], "هشام"),
    (["amin"], "أمين"), (["tariq"], "طارق"), (["adil", "adel"], "عادل"), (["habib"], "حبيب"),
    (["mansur", "mansour"], "منصور"), (["salman"], "سلمان"), (["anwar"], "أنور"),
    (["samir"], "سمير"), (["nabil"], "نبيل"), (["zayd", "zaid"], "زيد"),
    (["fatima"], "فاطمة"), (["hadi"], "هادي"), (["saif", "sayf"], "سيف"), (["bakr"], "بكر"),
    (["din"], "دين"), (["ayman"], "أيمن"), (["salah"], "صلاح"), (["hafiz"], "حافظ"),
]:
    for _n in _names:
        AR_WORDS[_n] = _ar
AR_DIGRAPHS = {"sh": "ش", "kh": "خ", "th": "ث", "dh": "ذ", "gh": "غ", "ch": "تش", "ph": "ف"}
AR_CONS = {"b": "ب", "t": "ت", "j": "ج", "h": "ه", "d": "د", "r": "ر", "z": "ز", "s": "س",
           "f": "ف", "q": "ق", "k": "ك", "l": "ل", "m": "م", "n": "ن", "w": "و", "y": "ي",
           "g": "ج", "p": "ب", "v": "ف", "x": "كس", "c": "ك"}
AR_ARTICLE = {"al", "el", "ad", "ar", "as", "ash", "az", "at", "an", "ul", "ur", "ud", "us",
              "un"}
AR_ABDUL = {"abdul", "abdel", "abdoul", "abdol"}

# --- Name lexicons used to guess a name's culture (synthetic heuristics). ---
ARABIC_LEX = set(AR_WORDS) | AR_ABDUL | {
    "abdulaziz", "abdelaziz", "abdulrahman", "abdelkader", "abdelkarim", "fawzi", "fathi",
    "ghazi", "hafez", "hamdan", "hani", "ihab", "imad", "jalal", "jihad", "kamal", "mazen",
    "munir", "nidal", "raed", "riad", "sabri", "sami", "sayyid", "shadi", "sharif", "taha",
    "talal", "wael", "yasser", "yasir", "yasin", "zuhair", "marwan", "bilal", "anas", "hamad",
    "rami", "badr", "fahd", "fahad", "ghassan", "haitham", "issam", "jasim", "jassim", "khamis",
    "muhsin", "nur", "nour", "qadir", "radwan", "ramadan", "riyad", "sadiq", "safwan", "tahir",
    "zakariya", "hamed", "mohsen", "faris", "fares", "naji", "rida", "ridha", "usamah", "saad",
    "sa'd", "saleem", "mahmood", "abdallah", "mubarak", "nasrallah", "khalaf", "barakat",
    "turki", "saud", "sultan", "hamoud", "hammoud", "shaker", "ayad", "iyad", "jaber", "jabir",
    "maher", "muhyi", "rashed", "ja'far", "jafar", "zubayr", "zubair", "tawfiq", "azzam",
}
RU_GIVEN_LEX = {
    "aleksandr", "alexander", "andrei", "andrey", "sergei", "sergey", "vladimir", "dmitri",
    "dmitry", "dmitriy", "igor", "oleg", "ivan", "yuri", "yuriy", "viktor", "nikolai",
    "nikolay", "mikhail", "alexei", "aleksey", "aleksei", "yevgeny", "yevgeniy", "evgeny",
    "evgeniy", "pavel", "boris", "konstantin", "vitaly", "vitaliy", "anatoly", "anatoliy",
    "gennady", "gennadiy", "valery", "valeriy", "arkady", "arkadiy", "denis", "artem",
    "maxim", "maksim", "roman", "ruslan", "vadim", "elena", "yelena", "olga", "natalia",
    "natalya", "tatiana", "tatyana", "svetlana", "irina", "anna", "vyacheslav", "kirill",
    "leonid", "stanislav", "grigory", "grigoriy", "ilya", "timur", "petr", "pyotr", "fedor",
    "semen", "vasily", "vasiliy", "yaroslav", "ekaterina", "yekaterina", "lyudmila", "galina",
}
HISPANIC_GIVEN_LEX = {
    "jose", "juan", "carlos", "luis", "jorge", "maria", "antonio", "jesus", "manuel",
    "alberto", "miguel", "mario", "oscar", "angel", "arturo", "ramon", "javier", "fernando",
    "francisco", "eduardo", "alejandro", "enrique", "hector", "rafael", "pedro", "ricardo",
    "roberto", "julio", "raul", "sergio", "gustavo", "guillermo", "armando", "rodrigo",
    "hernan", "alfonso", "alfredo", "joaquin", "ignacio", "ana", "rosa", "luz", "gloria",
    "martha", "blanca", "diego", "pablo", "andres", "cesar", "ruben", "gerardo", "jaime",
    "orlando", "fabio", "hugo", "nelson", "octavio", "william", "ernesto", "gilberto",
    "rigoberto", "humberto", "wilson", "edgar", "jhon", "john", "fredy", "freddy", "alvaro",
    "gabriel", "teresa", "carmen", "patricia", "claudia", "adriana", "sandra", "beatriz",
    "marco", "mauricio", "leonardo", "rene", "rolando", "felipe", "benjamin", "ismael",
}
KOREAN_SURNAMES = {"kim", "ri", "pak", "choe", "jang", "kang", "han", "jon", "o", "yun", "choi",
                   "paek", "sin", "hyon", "ko", "ryu", "jo", "mun", "song", "chang", "cho",
                   "kwon", "ho", "pyon", "yang", "chu", "hong", "yu", "ju", "kye", "ryom", "rim"}
CHINESE_SURNAMES = {"wang", "li", "zhang", "liu", "chen", "yang", "huang", "zhao", "wu", "zhou",
                    "xu", "sun", "ma", "zhu", "hu", "guo", "he", "lin", "luo", "gao", "zheng",
                    "liang", "xie", "song", "tang", "han", "feng", "deng", "cao", "peng", "qi",
                    "shi", "yu", "dong", "jiang", "cai", "wei", "xue", "ye", "yan", "pan", "du"}
SOUTH_ASIAN_MUSLIM_LEX = {"khan", "gul", "ullah", "jan", "shah", "haji", "agha", "zai", "mir",
                          "wali", "nur", "din", "uddin", "ud", "mullah", "hafiz", "asad",
                          "sardar", "zaman", "niaz", "akhtar", "qadir", "iqbal", "javed",
                          "tahir", "rehman", "ghulam", "bakht", "sher", "shir"}
BALKAN_SURNAME = re.compile(r"(ic|vic|ovic|evic|ski|ska)$")
SLAVIC_STRONG = re.compile(r"(ov|ova|ev|eva|sky|skiy|skii|skaya|skiy|enko|chuk|vich)$")
SLAVIC_WEAK = re.compile(r"(in|ina|yn|yna|ykh|ikh|ko|uk|yuk)$")
PATRONYMIC = re.compile(r"(ovich|evich|ovna|evna|ichna|yich)$")

# --- Given names and surnames by culture (common names; for the negatives). ---
GIVEN = {  # culture -> (male, female)
    "english": (["James", "John", "Robert", "Michael", "William", "David", "Richard", "Joseph",
                 "Thomas", "Charles", "Daniel", "Matthew", "Andrew", "Steven", "Kevin", "Brian",
                 "George", "Peter", "Paul", "Mark", "Oliver", "Henry", "Edward", "Samuel",
                 "Jonathan", "Timothy"],
                ["Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan",
                 "Jessica", "Sarah", "Karen", "Emily", "Laura", "Rachel", "Emma", "Olivia",
                 "Hannah", "Grace", "Helen", "Claire", "Rebecca", "Victoria", "Charlotte"]),
    "hispanic": (["Alejandro", "Andres", "Diego", "Esteban", "Ignacio", "Joaquin", "Mateo",
                  "Nicolas", "Pablo", "Ricardo", "Santiago", "Sebastian", "Rodrigo", "Gustavo",
                  "Patricio", "Tomas", "Emilio", "Gonzalo", "Marcelo", "Agustin", "Facundo",
                  "Lorenzo"],
                 ["Beatriz", "Camila", "Carmen", "Daniela", "Fernanda", "Gabriela",
                  "Guadalupe", "Isabel", "Julieta", "Leticia", "Lorena", "Lucia", "Marcela",
                  "Paula", "Rocio", "Sofia", "Valentina", "Ximena", "Cristina", "Adriana",
                  "Florencia", "Paloma"]),
    "arabic": (["Adnan", "Bassam", "Fadi", "Ghassan", "Hatem", "Imad", "Jawad", "Laith",
                "Maher", "Nader", "Rami", "Samer", "Tamer", "Wael", "Yasser", "Ziad", "Mazen",
                "Raed", "Fouad", "Munir", "Nizar", "Wissam", "Haitham", "Kamal", "Shadi",
                "Ammar"],
               ["Amal", "Dalia", "Farah", "Hala", "Layla", "Mona", "Nadia", "Rania", "Salma",
                "Yasmin", "Zeinab", "Hanan", "Suha", "Lina", "Reem", "Noor", "Dina", "Ghada"]),
    "slavic": (["Anton", "Artem", "Boris", "Denis", "Fedor", "Gleb", "Grigory", "Ilya",
                "Kirill", "Konstantin", "Leonid", "Maksim", "Matvey", "Nikita", "Pavel",
                "Roman", "Ruslan", "Semyon", "Stanislav", "Timofey", "Vadim", "Yaroslav",
                "Zakhar", "Egor", "Bogdan", "Lev"],
               ["Alina", "Anastasia", "Daria", "Ekaterina", "Irina", "Ksenia", "Lyudmila",
                "Marina", "Nadezhda", "Oksana", "Polina", "Svetlana", "Valentina", "Vera",
                "Yulia", "Zoya", "Galina", "Larisa", "Veronika", "Sofia"]),
    "chinese": (["Wei", "Lei", "Jun", "Hao", "Qiang", "Tao", "Yong", "Jianguo", "Zhiwei",
                 "Haoran", "Jiahao", "Mingyu", "Xiaoming", "Guowei", "Zhenyu", "Bo"],
                ["Fang", "Jing", "Min", "Yan", "Hui", "Lihua", "Yuxuan", "Zihan", "Xinyi",
                 "Shuang", "Ping", "Hong", "Meiling", "Xiaoyan", "Yuting", "Jiayi"]),
    "korean": (["Min Jun", "Ji Hoon", "Do Yun", "Jae Won", "Sung Min", "Young Ho", "Dong Hyun",
                "Sang Woo", "Hyun Woo", "Tae Yang", "Joon Ho", "Seung Hyun", "Jin Woo",
                "Kyu Tae", "Byung Hoon"],
               ["Seo Yeon", "Ha Eun", "Su Bin", "Hye Jin", "Eun Ji", "Ji Woo", "Yoo Jin",
                "Soo Ah", "Mi Rae", "Da Eun", "Ye Jin", "Na Yeon", "Bo Ram"]),
    "indian": (["Aarav", "Aditya", "Amit", "Anil", "Arjun", "Deepak", "Gaurav", "Harish",
                "Karan", "Manish", "Nikhil", "Pranav", "Rahul", "Rajesh", "Sanjay", "Suresh",
                "Vikram", "Vivek"],
               ["Ananya", "Deepika", "Divya", "Kavya", "Lakshmi", "Meera", "Neha", "Pooja",
                "Priya", "Radhika", "Shreya", "Sunita"]),
    "german": (["Lukas", "Jonas", "Felix", "Maximilian", "Tobias", "Florian", "Stefan",
                "Jurgen", "Klaus", "Wolfgang", "Dieter", "Matthias"],
               ["Anna", "Lena", "Katharina", "Julia", "Sabine", "Ursula", "Monika", "Heike",
                "Johanna", "Greta", "Birgit", "Petra"]),
    "french": (["Antoine", "Baptiste", "Clement", "Etienne", "Guillaume", "Julien", "Louis",
                "Mathieu", "Olivier", "Pierre", "Thibault", "Vincent"],
               ["Camille", "Chloe", "Elodie", "Helene", "Manon", "Nathalie", "Sophie",
                "Juliette", "Margaux", "Amelie"]),
    "japanese": (["Haruto", "Yuto", "Sota", "Riku", "Kaito", "Takumi", "Hiroshi", "Kenji",
                  "Akira", "Daiki", "Kazuki", "Shota"],
                 ["Yuki", "Hina", "Yui", "Aoi", "Naoko", "Sakura", "Emi", "Mei", "Haruka",
                  "Ayumi"]),
    "nigerian": (["Chinedu", "Emeka", "Oluwaseun", "Adebayo", "Tunde", "Ifeanyi", "Obinna",
                  "Babajide", "Kelechi", "Chukwuma", "Uche", "Segun"],
                 ["Ngozi", "Chiamaka", "Folake", "Yetunde", "Funmilayo", "Amaka", "Nkechi",
                  "Adaeze", "Bisola", "Temitope"]),
    "turkish": (["Mehmet", "Emre", "Burak", "Cem", "Deniz", "Oguz", "Serkan", "Volkan",
                 "Hakan", "Kerem", "Tolga", "Umut"],
                ["Elif", "Zeynep", "Merve", "Ayse", "Fatma", "Selin", "Ebru", "Gizem", "Derya",
                 "Esra"]),
    "balkan": (["Dragan", "Milan", "Zoran", "Goran", "Nenad", "Milos", "Bojan", "Marko",
                "Nikola", "Vuk", "Dusan", "Predrag", "Srdjan", "Zeljko"],
               ["Jelena", "Milica", "Ivana", "Marija", "Snezana", "Dragana", "Tijana",
                "Vesna", "Jasmina", "Maja"]),
    "persian": (["Arash", "Babak", "Behnam", "Dariush", "Farhad", "Kaveh", "Kourosh", "Navid",
                 "Omid", "Payam", "Ramin", "Shahram", "Siavash", "Pouya"],
                ["Azadeh", "Leila", "Mahsa", "Parisa", "Shirin", "Niloufar", "Golnaz",
                 "Roya", "Samira", "Yasaman"]),
}
SURNAMES = {
    "english": ["Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson",
                "Anderson", "Taylor", "Moore", "Jackson", "White", "Harris", "Clark", "Lewis",
                "Walker", "Hall", "Young", "Allen", "Wright", "Scott", "Green", "Baker",
                "Adams", "Nelson", "Hill", "Campbell", "Mitchell", "Roberts", "Carter",
                "Phillips", "Evans", "Turner", "Parker", "Collins", "Edwards", "Stewart",
                "Morris", "Murphy", "Cook", "Rogers", "Morgan", "Cooper", "Peterson", "Reed",
                "Bailey", "Kelly", "Howard", "Richardson", "Watson", "Brooks", "Bennett",
                "Hughes", "Price", "Sanders", "Foster", "O'Brien", "O'Connor", "McDonald"],
    "hispanic": ["Castillo", "Navarro", "Dominguez", "Ortega", "Delgado", "Castro", "Ortiz",
                 "Rubio", "Marin", "Sanz", "Iglesias", "Medina", "Garrido", "Cortes", "Santos",
                 "Lozano", "Guerrero", "Cano", "Prieto", "Mendez", "Calvo", "Gallego", "Vidal",
                 "Leon", "Marquez", "Cabrera", "Campos", "Vega", "Carrasco", "Caballero",
                 "Nieto", "Aguilar", "Pascual", "Santana", "Herrero", "Montero", "Lorenzo",
                 "Hidalgo", "Gimenez", "Ibanez", "Ferrer", "Duran", "Soler", "Velazquez",
                 "Benitez", "Quintero", "Arias", "Bravo"],
    "arabic": ["Haddad", "Khoury", "Mansour", "Hamdan", "Najjar", "Darwish", "Fakhoury",
               "Ghanem", "Halabi", "Jaber", "Kassab", "Masri", "Nassar", "Rizk", "Sabbagh",
               "Shami", "Tamimi", "Zoubi", "Awad", "Bitar", "Daher", "Farouk", "Hijazi",
               "Karam", "Malouf", "Obeid", "Rahal", "Sayegh", "Tannous", "Yassin", "Zaher",
               "Qasem", "Haidar", "Shehadeh", "Khatib", "Nabulsi", "Asfour", "Sarraf"],
    "slavic": ["Smirnov", "Kuznetsov", "Popov", "Vasiliev", "Sokolov", "Mikhailov", "Novikov",
               "Fedorov", "Morozov", "Volkov", "Alekseev", "Lebedev", "Semenov", "Egorov",
               "Pavlov", "Kozlov", "Stepanov", "Nikolaev", "Orlov", "Andreev", "Makarov",
               "Zakharov", "Zaitsev", "Soloviev", "Borisov", "Yakovlev", "Grigoriev",
               "Romanov", "Vorobiev", "Sergeev", "Frolov", "Belov", "Gusev", "Titov", "Kuzmin",
               "Baranov", "Kiselev", "Tarasov", "Belyaev", "Komarov"],
    "chinese": ["Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou",
                "Xu", "Sun", "Ma", "Zhu", "Hu", "Guo", "He", "Lin", "Luo", "Gao", "Zheng",
                "Liang", "Xie", "Song", "Tang", "Han", "Feng", "Deng", "Cao", "Peng"],
    "korean": ["Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim",
               "Han", "Oh", "Seo", "Shin", "Kwon", "Hwang", "Ahn", "Song", "Yoo", "Hong"],
    "indian": ["Sharma", "Verma", "Gupta", "Patel", "Reddy", "Nair", "Iyer", "Mehta", "Joshi",
               "Kapoor", "Malhotra", "Chopra", "Desai", "Bhat", "Rao", "Pillai", "Menon",
               "Agarwal", "Banerjee", "Chatterjee", "Mukherjee", "Das", "Saxena", "Trivedi",
               "Kulkarni", "Sinha", "Yadav", "Pandey", "Mishra"],
    "german": ["Muller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner",
               "Becker", "Schulz", "Hoffmann", "Koch", "Richter", "Klein", "Wolf", "Schroder",
               "Neumann", "Schwarz", "Zimmermann", "Braun", "Kruger", "Hartmann", "Lange",
               "Werner", "Krause", "Lehmann"],
    "french": ["Martin", "Bernard", "Dubois", "Petit", "Durand", "Leroy", "Moreau", "Simon",
               "Laurent", "Lefebvre", "Michel", "Fournier", "Girard", "Bonnet", "Dupont",
               "Lambert", "Fontaine", "Rousseau", "Blanc", "Guerin", "Faure", "Mercier",
               "Chevalier", "Gauthier"],
    "japanese": ["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto",
                 "Nakamura", "Kobayashi", "Kato", "Yoshida", "Yamada", "Sasaki", "Yamaguchi",
                 "Matsumoto", "Inoue", "Kimura", "Hayashi", "Shimizu", "Mori"],
    "nigerian": ["Okafor", "Adeyemi", "Okonkwo", "Balogun", "Eze", "Nwosu", "Adeleke",
                 "Ogunleye", "Chukwu", "Olawale", "Onyeka", "Afolabi", "Oyelaran", "Nnamdi",
                 "Obi", "Akinola", "Ibekwe", "Okoro", "Adewale", "Uzor"],
    "turkish": ["Yilmaz", "Kaya", "Demir", "Sahin", "Celik", "Yildiz", "Yildirim", "Ozturk",
                "Aydin", "Ozdemir", "Arslan", "Dogan", "Kilic", "Aslan", "Cetin", "Kara",
                "Koc", "Kurt", "Ozkan", "Simsek"],
    "balkan": ["Jovanovic", "Petrovic", "Nikolic", "Markovic", "Djordjevic", "Stojanovic",
               "Ilic", "Stankovic", "Pavlovic", "Popovic", "Kovacevic", "Babic", "Horvat",
               "Knezevic", "Vukovic", "Tomic", "Lazic", "Savic", "Radovanovic", "Kostic"],
    "persian": ["Ahmadi", "Hosseini", "Karimi", "Rahimi", "Moradi", "Mohammadi", "Rezaei",
                "Jafari", "Sadeghi", "Heidari", "Kazemi", "Ebrahimi", "Ghorbani", "Mousavi",
                "Rostami", "Nazari", "Shirazi", "Tehrani", "Farahani", "Yazdani"],
}
# Culture of an SDN person (see culture_of) -> culture whose names replace theirs.
NEAR_CULTURE = {"slavic": "slavic", "balkan": "balkan", "arabic": "arabic", "hispanic": "hispanic",
                "korean": "korean", "chinese": "chinese", "persian": "persian",
                "other": "english"}

COMPANY_PREFIXES = [
    "Northwind", "Blue River", "Silver Oak", "Green Valley", "Redwood", "Stonebridge",
    "Harborview", "Clearwater", "Bright Horizon", "Evergreen", "Summit Peak", "Lakeside",
    "Ironwood", "Pinecrest", "Westfield", "Eastgate", "Crescent Bay", "Riverside", "Sunrise",
    "Meadowbrook", "Oakmont", "Falcon Ridge", "Cedar Point", "Brightwater", "Kingsley",
    "Ashford", "Whitmore", "Bluestone", "Fairview", "Highland", "Copperfield", "Windmill",
    "Orchard Hill", "Starling", "Bayside", "Hillcrest", "Maplewood", "Foxglove", "Larkspur",
    "Thornbury", "Willowbank", "Granite Bay", "Amber Coast", "Seaview", "Birchwood",
]
COMPANY_INDUSTRIES = [
    "Trading", "Logistics", "Holdings", "Consulting", "Foods", "Textiles", "Software",
    "Imports", "Marine Services", "Engineering", "Capital", "Packaging", "Pharma",
    "Electronics", "Furniture", "Construction", "Agro", "Paper Mills", "Freight",
    "Energy Solutions", "Print Works", "Dental Supplies", "Bakery", "Travel", "Realty",
    "Garden Centre", "Ceramics", "Apparel", "Dairy", "Auto Parts",
]
COMPANY_FORMS = ["LLC", "Ltd", "Ltd.", "Inc.", "GmbH", "S.A.", "Co.", "PLC", "B.V.", "S.r.l.",
                 "AG", "SAS", "Pty Ltd", "Limited", "Corp."]
# Replacement words for entity near-misses (a different entity that shares other words).
ENTITY_SWAP_WORDS = [
    "Atlantic", "Baltic", "Nordic", "Andean", "Pacific", "Alpine", "Coastal", "Meridian",
    "Horizon", "Summit", "Harbor", "Granite", "Crescent", "Falcon", "Cedar", "Silver",
    "Emerald", "Sapphire", "Orion", "Polaris", "Lisbon", "Geneva", "Chile", "Norway", "Peru",
    "Vienna", "Toronto", "Madrid", "Textiles", "Bakery", "Furniture", "Dairy", "Ceramics",
    "Software", "Apparel", "Orchard", "Lighthouse", "Juniper", "Maple", "Willow",
]
NEW_TITLES = {
    "M": ["Mr", "Mr.", "Dr", "Dr.", "General", "Colonel", "Prof."],
    "M_muslim": ["Mr", "Mr.", "Dr", "Dr.", "Sheikh", "Sheikh", "Haji", "General", "Colonel"],
    "F": ["Mrs", "Ms", "Ms.", "Dr.", "Prof."],
    "": ["Dr", "Dr.", "General", "Prof.", "Colonel"],
}
NEW_LEGAL_FORMS = ["LLC", "Ltd", "Ltd.", "GmbH", "S.A.", "Co."]
# Equivalent spellings of a legal form already present at the end of an entity's name.
LEGAL_RESPELL = [
    (r"\bCO\.,? LTD\.?$", "Company Limited"),
    (r"\bS\.A\. DE C\.V\.$", "SA de CV"),
    (r"\bS\.A\.S\.$", "SAS"),
    (r"\bS\.A\.$", "SA"),
    (r"\bLTDA\.?$", "Limitada"),
    (r"\bLTD\.?$", "Limited"),
    (r"\bLIMITED$", "Ltd."),
    (r"\bL\.L\.C\.$", "LLC"),
    (r"\bLLC\.?$", "L.L.C."),
    (r"\bCO\.$", "Company"),
    (r"\bCOMPANY$", "Co."),
    (r"\bINC\.?$", "Incorporated"),
    (r"\bCORP\.?$", "Corporation"),
    (r"\bCORPORATION$", "Corp."),
    (r"\bGMBH$", "G.m.b.H."),
    (r"\bJSC$", "J.S.C."),
    (r"\bPLC$", "P.L.C."),
    (r"\bC\.A\.$", "CA"),
]

# QWERTY neighbours (rows staggered by 0, 0.25, 0.75 keys).
_ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
_POS = {ch: (r, c + (0, 0.25, 0.75)[r]) for r, row in enumerate(_ROWS) for c, ch in enumerate(row)}
KEY_NEIGHBOURS = {
    a: sorted(b for b, (rb, xb) in _POS.items()
              if b != a and ((rb == ra and abs(xb - xa) == 1) or
                             (abs(rb - ra) == 1 and abs(xb - xa) <= 0.75)))
    for a, (ra, xa) in _POS.items()
}

# ----------------------------------------------------------------------------------------------
# Loading and normalization
# ----------------------------------------------------------------------------------------------

Name = collections.namedtuple("Name", "idx ent text kind etype program gender")


def clean(field):
    field = field.strip()
    return "" if field in ("-0-", "-0") else field


def load_names(src_dir):
    names = []
    etypes = {}
    with open(os.path.join(src_dir, "sdn.csv"), newline="", encoding="utf-8") as f:
        sdn = list(csv.reader(f))
    with open(os.path.join(src_dir, "alt.csv"), newline="", encoding="utf-8") as f:
        alt = list(csv.reader(f))
    meta = {}
    for row in sdn:
        ent = row[0].strip()
        etype = clean(row[2]) or "entity"
        remarks = clean(row[11])
        gender = ("F" if "Gender Female" in remarks else "M" if "Gender Male" in remarks else "")
        meta[ent] = (etype, clean(row[3]), gender)
        etypes[ent] = etype
        names.append((ent, " ".join(clean(row[1]).split()), "primary"))
    for row in alt:
        names.append((row[0].strip(), " ".join(clean(row[3]).split()), clean(row[2]) or "aka"))
    out = []
    for i, (ent, text, kind) in enumerate(names):
        if not text or ent not in meta:
            continue
        etype, program, gender = meta[ent]
        out.append(Name(i, ent, text, kind, etype, program, gender))
    return out, len(sdn), len(alt)


def norm_tokens(s, joined=False, stop=True):
    """Lower case; apostrophes and periods deleted; other non-alphanumerics split tokens
    (hyphens are deleted instead when joined=True); spelling variants mapped to one form;
    titles and legal forms removed (unless nothing else is left)."""
    s = s.lower()
    s = re.sub(r"['`\u2019.]", "", s)
    if joined:
        s = s.replace("-", "")
    toks = [CANON.get(t, t) for t in re.split(r"[^0-9a-z]+", s) if t]
    if stop:
        kept = [t for t in toks if t not in STOPWORDS]
        if kept:
            toks = kept
    return toks


def key_of(s, joined=False):
    return " ".join(sorted(norm_tokens(s, joined)))


def letters(s):
    return sum(1 for ch in s if ch.isalpha())


def smart_title(s):
    """'AL-TIKRITI' -> 'Al-Tikriti', "BA'ASYIR" -> "Ba'asyir", "O'NEIL" -> "O'Neil"."""
    out = []
    for i, ch in enumerate(s):
        if not ch.isalpha():
            out.append(ch)
            continue
        prev = s[i - 1] if i >= 1 else " "
        start = prev in " -."
        if prev == "'":
            before = s[i - 2] if i >= 2 else " "
            start = before in " -" or (before.isalpha() and (i < 3 or s[i - 3] in " -"))
        out.append(ch.upper() if start else ch.lower())
    return "".join(out)


def levenshtein(a, b):
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def deletes1(t):
    return {t[:i] + t[i + 1:] for i in range(len(t))}


class ListIndex:
    """What the checks need to know about the list's names."""

    def __init__(self, names):
        self.keys = collections.defaultdict(set)        # key -> ents (split and joined keys)
        self.ent_keys = collections.defaultdict(set)    # ent -> keys of its names
        self.ent_tokens = collections.defaultdict(set)  # ent -> every token of its names
        self.token_ents = collections.defaultdict(set)  # token -> ents
        self.name_toksets = collections.defaultdict(list)  # ent -> [frozenset per name]
        self.by_ent = collections.defaultdict(list)
        for n in names:
            self.by_ent[n.ent].append(n)
            for joined in (False, True):
                k = key_of(n.text, joined)
                if k:
                    self.keys[k].add(n.ent)
                    self.ent_keys[n.ent].add(k)
                for t in norm_tokens(n.text, joined, stop=False):
                    self.ent_tokens[n.ent].add(t)
                    self.token_ents[t].add(n.ent)
            self.name_toksets[n.ent].append(frozenset(norm_tokens(n.text)))
        self.del_index = collections.defaultdict(set)  # deletion variant -> tokens (len >= 5)
        for t in self.token_ents:
            if len(t) >= 5:
                self.del_index[t].add(t)
                for d in deletes1(t):
                    self.del_index[d].add(t)

    def other_ents_with_key(self, q, ent):
        """Entries other than ent that have a name with the same normalized token multiset."""
        out = set()
        for joined in (False, True):
            out |= self.keys.get(key_of(q, joined), set())
        out.discard(ent)
        return out

    def subsumed_by_other(self, q, ent):
        """Another entry has one name containing every token of q."""
        qs = set(norm_tokens(q))
        if not qs:
            return True
        cands = None
        for t in qs:
            e = self.token_ents.get(t, set())
            cands = set(e) if cands is None else cands & e
        for e in (cands or set()) - {ent}:
            if any(qs <= ts for ts in self.name_toksets[e]):
                return True
        return False

    def fuzzy_ents(self, t):
        if len(t) < 5:
            return self.token_ents.get(t, set())
        cands = set(self.del_index.get(t, set()))
        for d in deletes1(t):
            cands |= self.del_index.get(d, set())
        out = set()
        for c in cands:
            out |= self.token_ents[c]
        return out

    def negative_ok(self, q):
        """Conservative check that q matches no entry (see PROVENANCE.md)."""
        for joined in (False, True):
            if key_of(q, joined) in self.keys:
                return False
            long_toks = [t for t in set(norm_tokens(q, joined))
                         if len(t) >= 3 and t not in FUNCTION_WORDS]
            if not long_toks:
                return False
            common = None
            for t in long_toks:
                e = self.fuzzy_ents(t)
                common = set(e) if common is None else common & e
                if not common:
                    break
            if common:
                return False
        return True


# ----------------------------------------------------------------------------------------------
# Person names
# ----------------------------------------------------------------------------------------------


def person_parts(n):
    """('LAST', 'First Middle') for an individual's 'LAST, First Middle' name, else None."""
    if n.etype != "individual" or n.text.count(",") != 1:
        return None
    last, given = (p.strip() for p in n.text.split(","))
    if not last or not given or given.endswith("-") and len(given.split()) == 1:
        return None
    return last, given


def natural_tokens(n):
    """(given tokens, surname tokens) in natural order, surname title-cased; a trailing
    particle of the given part ('Ayman al-') is joined to the surname ('al-Zawahiri')."""
    p = person_parts(n)
    if not p:
        return None
    last, given = p
    g = given.split()
    s = smart_title(last).split()
    if g[-1].endswith("-"):
        s[0] = g[-1] + s[0]
        g = g[:-1]
    return g, s


def natural_form(n):
    nt = natural_tokens(n)
    if not nt:
        return n.text
    return " ".join(nt[0] + nt[1])


def base_form(n, rng, p_natural=0.5):
    """The name as the list writes it, or (individuals, with probability p_natural) in natural
    order. Returns (text, 'list'|'natural')."""
    if person_parts(n) and rng.random() < p_natural:
        return natural_form(n), "natural"
    return n.text, "list"


def simple(tok):
    return re.sub(r"['`.,]", "", tok.lower()).strip("-")


def culture_of(n):
    nt = natural_tokens(n)
    if not nt:
        return None
    g, s = nt
    gl = [simple(t) for t in g]
    sl = [simple(t) for t in s]
    parts = [x for t in gl + sl for x in t.split("-") if x]
    prog = n.program.upper()
    if (any(PATRONYMIC.search(t) for t in gl) or
            (len(sl) == 1 and SLAVIC_STRONG.search(sl[0]) and not set(parts) & ARABIC_LEX) or
            (len(sl) == 1 and SLAVIC_WEAK.search(sl[0]) and gl and gl[0] in RU_GIVEN_LEX)):
        return "slavic"
    if len(sl) == 1 and BALKAN_SURNAME.search(sl[0]) and not set(parts) & ARABIC_LEX:
        return "balkan"
    if "DPRK" in prog and sl and sl[0] in KOREAN_SURNAMES:
        return "korean"
    if "DPRK" not in prog and len(sl) == 1 and sl[0] in CHINESE_SURNAMES and len(gl) <= 2 \
            and not set(gl) & (ARABIC_LEX | HISPANIC_GIVEN_LEX):
        return "chinese"
    spanish_surname = len(sl) >= 2 or any(re.search(r"(ez|es|os|as|ia|io|ero|ado|ino)$", t)
                                          for t in sl)
    if not set(parts) & (ARABIC_LEX | SOUTH_ASIAN_MUSLIM_LEX) and (
            set(gl) & HISPANIC_GIVEN_LEX or
            (any(x in prog for x in ("SDNT", "CUBA", "VENEZUELA", "NICARAGUA")) and
             spanish_surname)):
        return "hispanic"
    arabic_hits = sum(1 for t in parts if t in ARABIC_LEX or t in PARTICLES - {"de", "del", "la",
                                                                               "y", "da"})
    if any(x in prog for x in ("IRAN", "IFSR", "IRGC", "NPWMD", "HRIT-IR")) and \
            sl and sl[-1].endswith("i") and arabic_hits <= 1:
        return "persian"
    if arabic_hits >= 1 or set(parts) & SOUTH_ASIAN_MUSLIM_LEX:
        return "arabic"
    return "other"


def is_arabic_looking(n):
    nt = natural_tokens(n)
    if not nt:
        return False
    parts = [x for t in nt[0] + nt[1] for x in simple(t).split("-") if x]
    hits = sum(1 for t in parts if t in ARABIC_LEX or t in {"al", "el", "bin", "ibn", "abu"})
    prog = n.program.upper()
    middle_east = any(x in prog for x in ("SDGT", "SDT", "IRAQ", "SYRIA", "LIBYA", "YEMEN",
                                          "FTO", "LEBANON", "FSE-SY", "HRIT-SY"))
    return (hits >= 2 or (hits >= 1 and middle_east)) and culture_of(n) == "arabic"


def gender_of(n):
    if n.gender:
        return n.gender
    nt = natural_tokens(n)
    if not nt:
        return ""
    g, s = nt
    gl = [simple(t) for t in g]
    sl = [simple(t) for t in s]
    if any(re.search(r"(ovna|evna|ichna)$", t) for t in gl) or \
            (len(sl) == 1 and re.search(r"(ova|eva|ina|skaya)$", sl[0])):
        return "F"
    if any(re.search(r"(ovich|evich)$", t) for t in gl):
        return "M"
    first = gl[0] if gl else ""
    male = {x.lower() for m, _ in GIVEN.values() for x in m}
    female = {x.lower() for _, f in GIVEN.values() for x in f}
    if first in ARABIC_LEX - {"fatima"} or first in male:
        return "M"
    if first in female:
        return "F"
    return ""


# ----------------------------------------------------------------------------------------------
# Transformations
# ----------------------------------------------------------------------------------------------


def typo_once(s, rng, avoid_span):
    spans = [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z]+", s)]
    ok = [k for k, (a, b) in enumerate(spans) if b - a >= 4]
    if not ok:
        return None
    pref = [k for k in ok if k != avoid_span]
    k = rng.choice(pref or ok)
    a, b = spans[k]
    for _ in range(10):
        op = rng.choice(["substitute", "delete", "double", "transpose"])
        i = rng.randrange(a + 1, b)  # never the token's first letter
        ch = s[i]
        if op == "substitute":
            nb = rng.choice(KEY_NEIGHBOURS[ch.lower()])
            nb = nb.upper() if ch.isupper() else nb
            return s[:i] + nb + s[i + 1:], k, "%s %r->%r at %d" % (op, ch, nb, i)
        if op == "delete":
            return s[:i] + s[i + 1:], k, "%s %r at %d" % (op, ch, i)
        if op == "double":
            return s[:i + 1] + ch + s[i + 1:], k, "%s %r at %d" % (op, ch, i)
        if i + 1 < b and s[i].lower() != s[i + 1].lower():
            return s[:i] + s[i + 1] + s[i] + s[i + 2:], k, "%s %d-%d" % (op, i, i + 1)
    return None


def ru_word(w):
    """One lower-case Latin word (no hyphens) -> Russian Cyrillic, per RU_MULTI / RU_SINGLE
    plus the context rules below."""
    vowels = "aeiouy"
    out = []
    i = 0
    n = len(w)
    soft_done = -1
    while i < n:
        if (w[i] == "y" and 0 < i < n - 1 and w[i - 1] not in vowels and w[i + 1] == "e"
                and soft_done != i):
            out.append("ь")  # 'Yuryevna' -> 'Юрьевна'
            soft_done = i
            continue
        if w[i] == "y" and i == n - 1 and i > 0 and w[i - 1] not in vowels:
            out.append("ий")  # 'Dmitry' -> 'Дмитрий'
            break
        if w.endswith("iy") and i == n - 2:
            out.append("ий")
            break
        if w.endswith("yy") and i == n - 2:
            out.append("ый")
            break
        for lat, cyr in RU_MULTI:
            if w.startswith(lat, i):
                out.append(cyr)
                i += len(lat)
                break
        else:
            ch = w[i]
            prev = w[i - 1] if i else ""
            if ch == "y":
                out.append("й" if prev and prev in vowels else "ы")
            elif ch == "i" and i == n - 1 and prev and prev in "aeou":
                out.append("й")
            else:
                out.append(RU_SINGLE.get(ch, ""))
            i += 1
    return "".join(out)


def to_cyrillic(tokens):
    words = []
    for tok in tokens:
        parts = []
        for part in tok.lower().split("-"):
            cyr = ru_word(part)
            parts.append(cyr[:1].upper() + cyr[1:])
        words.append("-".join(parts))
    return " ".join(words)


def ar_word(w):
    """One lower-case Latin word -> Arabic script: AR_WORDS, else a consonant skeleton (short
    vowels dropped; doubled or word-initial vowels, and some diphthongs, written long)."""
    plain = w.replace("'", "")
    if plain in AR_WORDS:
        return AR_WORDS[plain]
    vowels = "aeiou"
    out = []
    i = 0
    n = len(w)
    if i < n and w[i] == "'":
        out.append("ع")
        i += 1
    if i < n and w[i] in vowels:
        two = w[i:i + 2]
        if two == "aa":
            out.append("آ")
            i += 2
        elif two in ("ou", "oo", "uu"):
            out.append("أو")
            i += 2
        elif two in ("ee", "ii"):
            out.append("إي")
            i += 2
        else:
            out.append({"a": "أ", "e": "إ", "i": "إ", "o": "أ", "u": "أ"}[w[i]])
            i += 1
    while i < n:
        if w[i:] == "ah" and i > 0:
            out.append("ة")
            break
        ch = w[i]
        two = w[i:i + 2]
        nxt2 = w[i + 2] if i + 2 < n else ""
        if ch == "'":
            out.append("ع")
            i += 1
        elif two in AR_DIGRAPHS:
            out.append(AR_DIGRAPHS[two])
            i += 2
        elif two == "aa":
            out.append("ا")
            i += 2
        elif two in ("ee", "ii"):
            out.append("ي")
            i += 2
        elif two in ("oo", "uu", "ou"):
            out.append("و")
            i += 2
        elif two in ("ay", "ai", "ei", "ey") and nxt2 not in vowels + "y":
            out.append("ي")
            i += 2
        elif two in ("aw", "au") and nxt2 not in vowels + "w":
            out.append("و")
            i += 2
        elif ch in vowels:
            if i == n - 1:
                out.append({"a": "ا", "i": "ي", "o": "و", "u": "و", "e": ""}[ch])
            i += 1
        else:
            if not (i > 0 and w[i - 1] == ch):  # a doubled consonant is written once
                out.append(AR_CONS.get(ch, ""))
            i += 1
    return "".join(out)


def to_arabic(tokens):
    parts = []
    for tok in tokens:
        for part in re.sub(r"[.,]", "", tok.lower()).split("-"):
            if part:
                parts.append(part)
    words = []
    pending_al = False
    for i, p in enumerate(parts):
        if p in AR_ARTICLE and i + 1 < len(parts):
            pending_al = True
            continue
        if p in AR_ABDUL:
            words.append("عبد")
            pending_al = True
            continue
        w = ar_word(p)
        if pending_al and not w.startswith("ال"):
            w = "ال" + w
        pending_al = False
        words.append(w)
    return " ".join(w for w in words if w)


def match_case(template, word):
    if template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ----------------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------------


class Builder:
    def __init__(self, names, index):
        self.names = names
        self.index = index
        self.rows = []          # dicts: category, idx, query, ent, subkind, source, detail
        self.seen = set()       # query strings already used
        self.sources = [n for n in names if self.eligible_source(n)]

    def eligible_source(self, n):
        return (not re.search(r"[()/:@#+;\"]", n.text) and letters(n.text) >= MIN_LETTERS and
                bool(norm_tokens(n.text)) and not self.index.other_ents_with_key(n.text, n.ent))

    def add(self, category, query, ent, src, subkind, detail):
        query = " ".join(query.split())
        if not query or query in self.seen:
            return False
        self.seen.add(query)
        idx = sum(1 for r in self.rows if r["category"] == category)
        self.rows.append(dict(category=category, idx=idx, query=query, ent=ent, subkind=subkind,
                              source=src.text if src else "", source_kind=src.kind if src else "",
                              source_type=src.etype if src else "", detail=detail))
        return True

    def positive_ok(self, q_latin, n, same_key=None):
        if letters(q_latin) < MIN_LETTERS:
            return False
        if self.index.other_ents_with_key(q_latin, n.ent):
            return False
        if same_key is True and key_of(q_latin) not in self.index.ent_keys[n.ent]:
            return False
        if same_key is False and key_of(q_latin) in self.index.ent_keys[n.ent]:
            return False
        return True

    def run_quota(self, category, pools, make, rng):
        """pools: [(candidates, count)]. make(n, rng) -> (query, subkind, detail) or None.
        At most one query per entry within a category; a shortfall in one pool is made up
        from the next ones."""
        used = set()
        made = 0
        carry = 0
        for cands, count in pools:
            cands = list(cands)
            rng.shuffle(cands)
            want = count + carry
            got = 0
            for n in cands:
                if got >= want:
                    break
                if n.ent in used:
                    continue
                res = make(n, rng)
                if not res:
                    continue
                query, subkind, detail = res
                if self.add(category, query, n.ent, n, subkind, detail):
                    used.add(n.ent)
                    got += 1
            carry = want - got
            made += got
        return made

    # -- exact ------------------------------------------------------------------------------
    def gen_exact(self, rng):
        def make(n, rng):
            q, form = base_form(n, rng)
            if not self.positive_ok(q, n):
                return None
            return q, n.etype, form
        t = self.by_type()
        return self.run_quota("exact", [(t["individual"], 70), (t["entity"], 50),
                                        (t["vessel"] + t["aircraft"], 15)], make, rng)

    def by_type(self):
        t = collections.defaultdict(list)
        for n in self.sources:
            t[n.etype].append(n)
        return t

    # -- typo -------------------------------------------------------------------------------
    def gen_typo(self, rng):
        def make(n, rng):
            if len(norm_tokens(n.text, stop=False)) < 2:
                return None
            base, form = base_form(n, rng)
            nedits = 1 if rng.random() < 0.6 else 2
            q = base
            details = []
            span = None
            for _ in range(nedits):
                r = typo_once(q, rng, span)
                if not r:
                    return None
                q, span, d = r
                details.append(d)
            if q == base or not self.positive_ok(q, n, same_key=False):
                return None
            return q, "%d edit%s" % (nedits, "s" if nedits > 1 else ""), \
                "%s; %s" % (form, "; ".join(details))
        t = self.by_type()
        return self.run_quota("typo", [(t["individual"], 75), (t["entity"], 52),
                                       (t["vessel"] + t["aircraft"], 8)], make, rng)

    # -- dropped_middle ---------------------------------------------------------------------
    def gen_dropped_middle(self, rng):
        def make(n, rng):
            nt = natural_tokens(n)
            if not nt:
                return None
            g, s = nt
            toks = g + s
            if len(toks) < 3:
                return None
            ok = []
            for j in range(1, len(toks) - 1):
                t = simple(toks[j])
                prev = simple(toks[j - 1])
                if t in PARTICLES or letters(toks[j]) < 2 or "." in toks[j]:
                    continue
                if prev in PARTICLES or prev in AR_ABDUL:
                    continue
                ok.append(j)
            if not ok:
                return None
            in_given = [j for j in ok if j < len(g)]
            j = rng.choice(in_given) if in_given and rng.random() < 0.8 else rng.choice(ok)
            dropped = toks[j]
            if j < len(g) and rng.random() < 0.4:
                last = person_parts(n)[0]
                q = "%s, %s" % (last, " ".join(g[:j] + g[j + 1:]))
                form = "list"
            else:
                q = " ".join(toks[:j] + toks[j + 1:])
                form = "natural"
            if len(norm_tokens(q, stop=False)) < 2 or not self.positive_ok(q, n, same_key=False):
                return None
            if self.index.subsumed_by_other(q, n.ent):
                return None
            return q, "given" if j < len(g) else "surname", "%s; dropped %r" % (form, dropped)
        t = self.by_type()
        return self.run_quota("dropped_middle", [(t["individual"], 135)], make, rng)

    # -- swapped ----------------------------------------------------------------------------
    def gen_swapped(self, rng):
        def seq(s):
            return norm_tokens(s, stop=False)

        def make_person(n, rng):
            nt = natural_tokens(n)
            if not nt:
                return make_other(n, rng)
            g, s = nt
            natural = g + s
            if len(natural) >= 3 and rng.random() < 0.4:
                for _ in range(12):
                    perm = natural[:]
                    rng.shuffle(perm)
                    if perm != natural and perm != s + g:
                        q = " ".join(perm)
                        sub = "permuted"
                        break
                else:
                    return None
            else:
                surname = s if rng.random() < 0.5 else [t.upper() for t in s]
                q = " ".join(surname + g)
                sub = "surname first"
            if seq(q) == seq(" ".join(natural)) or not self.positive_ok(q, n, same_key=True):
                return None
            return q, sub, sub

        def make_other(n, rng):
            toks = n.text.split()
            # legal forms and trailing punctuation stay where they are
            movable = [i for i, t in enumerate(toks)
                       if letters(t) >= 3 and not re.search(r"[,.]$", t) and
                       simple(t) not in STOPWORDS and simple(t) not in FUNCTION_WORDS]
            if len(movable) < 2:
                return None
            if rng.random() < 0.5 or len(movable) > 4:
                a, b = rng.sample(movable, 2)
                new = toks[:]
                new[a], new[b] = new[b], new[a]
                sub = "two tokens exchanged"
            else:
                vals = [toks[i] for i in movable]
                vals = vals[1:] + vals[:1]
                new = toks[:]
                for i, v in zip(movable, vals):
                    new[i] = v
                sub = "tokens rotated"
            q = " ".join(new)
            if seq(q) == seq(n.text) or not self.positive_ok(q, n, same_key=True):
                return None
            return q, sub, sub
        t = self.by_type()
        return self.run_quota("swapped", [(t["individual"], 85), (t["entity"], 50)],
                              lambda n, r: make_person(n, r) if n.etype == "individual"
                              else make_other(n, r), rng)

    # -- title ------------------------------------------------------------------------------
    def gen_title(self, rng):
        def make_person(n, rng):
            p = person_parts(n)
            if not p:
                return None
            last, given = p
            g = given.split()
            if len([t for t in norm_tokens(n.text, stop=False) if t not in TITLE_WORDS]) < 2:
                return None  # 'IBRAHIM, Haji': too little name left besides the title
            gender = gender_of(n)
            if gender == "M" and culture_of(n) in ("arabic", "persian"):
                gender = "M_muslim"
            present = [i for i, t in enumerate(g) if simple(t) in TITLE_WORDS]
            if present and rng.random() < 0.6:
                i = present[0]
                choices = [x for x in NEW_TITLES[gender] if simple(x) != simple(g[i])]
                new = rng.choice(choices)
                detail = "replaced %r with %r" % (g[i], new)
                g = g[:i] + [new] + g[i + 1:]
                title_first = False
            else:
                new = rng.choice(NEW_TITLES[gender])
                detail = "added %r" % new
                title_first = True
            if rng.random() < 0.7:
                nt = natural_tokens(Name(n.idx, n.ent, "%s, %s" % (last, " ".join(g)), n.kind,
                                         n.etype, n.program, n.gender))
                if not nt:
                    return None
                q = " ".join(([new] if title_first else []) + nt[0] + nt[1])
                form = "natural"
            else:
                q = "%s, %s" % (last, " ".join(([new] if title_first else []) + g))
                form = "list"
            if not self.positive_ok(q, n, same_key=True):
                return None
            return q, "honorific", "%s; %s" % (form, detail)

        def make_entity(n, rng):
            toks = set(norm_tokens(n.text, stop=False))
            has_form = (toks & LEGAL_DETECT or re.search(r"(?:^|\s)(?:[A-Za-z]\.){2,}", n.text)
                        or re.search(r"\bS\. (?:EN|DE)\b", n.text, flags=re.I))
            if has_form:
                for pat, rep in LEGAL_RESPELL:
                    m = re.search(pat, n.text, flags=re.I)
                    if m:
                        q = n.text[:m.start()] + rep
                        if q != n.text and self.positive_ok(q, n, same_key=True):
                            return q, "legal form respelled", "%r -> %r" % (m.group(0), rep)
                        return None
                return None  # has a legal form that is not at the end: leave it alone
            if toks & NOT_COMMERCIAL_WORDS:
                return None  # no legal form for armed groups, parties, ministries, ...
            form = rng.choice(NEW_LEGAL_FORMS)
            sep = ", " if rng.random() < 0.25 else " "
            q = n.text + sep + form
            if not self.positive_ok(q, n, same_key=True):
                return None
            return q, "legal form added", "appended %r" % form
        t = self.by_type()
        titled = [n for n in t["individual"] if person_parts(n) and
                  any(simple(x) in TITLE_WORDS for x in person_parts(n)[1].split())]
        return self.run_quota("title", [(titled, 20), (t["individual"], 60), (t["entity"], 55)],
                              lambda n, r: make_person(n, r) if n.etype == "individual"
                              else make_entity(n, r), rng)

    # -- transliteration --------------------------------------------------------------------
    def gen_transliteration(self, rng):
        inds = self.by_type()["individual"]

        def clean_tokens(n):
            nt = natural_tokens(n)
            if not nt:
                return None
            toks = nt[0] + nt[1]
            if any("." in t or not re.fullmatch(r"[A-Za-z'\-]+", t) for t in toks):
                return None
            return toks

        def make_cyr(n, rng):
            toks = clean_tokens(n)
            if not toks or culture_of(n) != "slavic":
                return None
            latin = " ".join(toks)
            if not self.positive_ok(latin, n):
                return None
            return to_cyrillic(toks), "Cyrillic", "from %r" % latin

        def make_ar(n, rng):
            toks = clean_tokens(n)
            if not toks or not is_arabic_looking(n):
                return None
            latin = " ".join(toks)
            if not self.positive_ok(latin, n):
                return None
            return to_arabic(toks), "Arabic script", "from %r" % latin

        def make_rom(n, rng):
            base, form = base_form(n, rng)
            hits = [m for m in re.finditer(r"(?<!['A-Za-z])[A-Za-z]+(?!['A-Za-z])", base)
                    if m.group(0).lower() in CANON]
            if not hits:
                return None
            m = rng.choice(hits)
            old = m.group(0)
            group = next(g for g in VARIANT_GROUPS if old.lower() in g)
            new = match_case(old, rng.choice([x for x in group if x != old.lower()]))
            q = base[:m.start()] + new + base[m.end():]
            if q == base or not self.positive_ok(q, n, same_key=True):
                return None
            return q, "Latin romanization", "%s; %r -> %r" % (form, old, new)

        made = 0
        # Each sub-kind gets its own pool; one query per entry across the whole category.
        used = set()
        for sub, make, count in [("cyr", make_cyr, 45), ("ar", make_ar, 45),
                                 ("rom", make_rom, 45)]:
            cands = [n for n in inds if n.ent not in used]
            if sub == "rom":
                cands = [n for n in self.sources
                         if n.etype == "individual" and n.ent not in used]
            rng.shuffle(cands)
            got = 0
            for n in cands:
                if got >= count:
                    break
                if n.ent in used:
                    continue
                res = make(n, rng)
                if res and self.add("transliteration", res[0], n.ent, n, res[1], res[2]):
                    used.add(n.ent)
                    got += 1
            made += got
        return made

    # -- case_punct -------------------------------------------------------------------------
    def gen_case_punct(self, rng):
        def transforms(s):
            out = []
            if re.search(r"[A-Za-z]-[A-Za-z]", s):
                out.append(("hyphen to space", lambda x: re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])",
                                                                 " ", x)))
            if "'" in s:
                out.append(("apostrophe removed", lambda x: x.replace("'", "")))
            if re.search(r"[,.]", s):
                out.append(("commas/periods removed",
                            lambda x: re.sub(r"\s+", " ", re.sub(r"[,.]", " ", x)).strip()
                            if "," in x else x.replace(".", "")))
            return out

        extra = [
            ("double space", lambda x, r: x.replace(" ", "  ", 1) if " " in x else x),
            ("trailing period", lambda x, r: x + "." if not x.endswith(".") else x + ".."),
            ("space around hyphen", lambda x, r: re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", " - ",
                                                        x, count=1)),
            ("tokens hyphenated", lambda x, r: re.sub(r"(?<=[A-Za-z]) (?=[A-Za-z])", "-", x,
                                                      count=1)),
            ("space after comma removed", lambda x, r: x.replace(", ", ",", 1)),
        ]
        cases = [("lower case", str.lower), ("upper case", str.upper),
                 ("title case", smart_title)]

        def make(n, rng):
            base, form = base_form(n, rng)
            steps = []
            q = base
            punct = transforms(base)
            if punct and rng.random() < 0.75:
                name, f = rng.choice(punct)
                q = f(q)
                steps.append(name)
            else:
                name, f = rng.choice(extra)
                q2 = f(q, rng)
                if q2 != q:
                    q = q2
                    steps.append(name)
            if not steps or rng.random() < 0.5:
                for _ in range(3):
                    name, f = rng.choice(cases)
                    if f(q) != q:
                        q = f(q)
                        steps.append(name)
                        break
            if not steps or q == base:
                return None
            if not self.positive_ok(q, n, same_key=True):
                return None
            return q, steps[0], "%s; %s" % (form, ", ".join(steps))
        t = self.by_type()
        with_punct = lambda lst: [n for n in lst if re.search(r"[-',.]", n.text)]
        without = lambda lst: [n for n in lst if not re.search(r"[-',.]", n.text)]
        return self.run_quota("case_punct", [
            (with_punct(t["individual"]), 45), (without(t["individual"]), 25),
            (with_punct(t["entity"]), 35), (without(t["entity"]), 20),
            (t["vessel"] + t["aircraft"], 10)], make, rng)

    # -- negatives --------------------------------------------------------------------------
    def gen_negative_near(self, rng):
        idx = self.index
        inds = [n for n in self.sources if natural_tokens(n)]
        ents = [n for n in self.sources if n.etype == "entity"]

        def far(new, olds):
            a = simple(new)
            return all(levenshtein(a, simple(o)) >= 3 and CANON.get(a, a) !=
                       CANON.get(simple(o), simple(o)) for o in olds)

        def entry_given_and_surnames(n):
            gs, ss = set(), set()
            for m in idx.by_ent[n.ent]:
                nt = natural_tokens(m)
                if nt:
                    gs.update(t for t in nt[0])
                    ss.update(t for t in nt[1])
                else:
                    gs.update(m.text.split())
            return gs, ss

        def make_person(n, rng, mode):
            g, s = natural_tokens(n)
            if not g:
                return None
            culture = culture_of(n)
            lists = NEAR_CULTURE.get(culture, "english")
            gender = gender_of(n) or "M"
            all_g, all_s = entry_given_and_surnames(n)
            if mode == "given":
                pool = GIVEN[lists][1 if gender == "F" else 0]
                k = 1
                if lists in ("hispanic", "arabic") and len(g) >= 2 \
                        and rng.random() < 0.5:
                    k = 2
                picks = rng.sample(pool, k)
                if not all(far(p_, all_g | all_s) for pp in picks for p_ in pp.split()):
                    return None
                new_g, new_s = " ".join(picks).split(), s
                detail = "given %r -> %r" % (" ".join(g), " ".join(new_g))
            else:
                pool = SURNAMES[lists]
                k = 2 if lists == "hispanic" and len(s) >= 2 else 1
                picks = rng.sample(pool, k)
                if lists == "slavic" and gender == "F":
                    picks = [p_ + "a" if re.search(r"(ov|ev|in)$", p_) else p_ for p_ in picks]
                if lists == "arabic" and simple(s[0]).startswith("al-") and rng.random() < 0.6:
                    picks[0] = "al-" + picks[0]
                if not all(far(x, all_s | all_g) for p_ in picks for x in
                           re.split(r"[- ]", p_) if simple(x) not in PARTICLES):
                    return None
                new_g, new_s = g, picks
                detail = "surname %r -> %r" % (" ".join(s), " ".join(new_s))
            if rng.random() < 0.6:
                q = " ".join(new_g + new_s)
                form = "natural"
            else:
                q = "%s, %s" % (" ".join(new_s).upper(), " ".join(new_g))
                form = "list"
            return q, "%s (%s names)" % ("new given name" if mode == "given" else
                                         "new surname", lists), "%s; %s" % (form, detail)

        # A word is "generic" when entity names of at least GENERIC_MIN_ENTRIES entries use it
        # (bank, trading, national, iran, ...); the rest are distinctive.
        word_ents = collections.defaultdict(set)
        for n in ents:
            for t in set(norm_tokens(n.text, stop=False)):
                word_ents[t].add(n.ent)

        def generic(t):
            return len(word_ents.get(t, ())) >= GENERIC_MIN_ENTRIES

        def make_entity(n, rng):
            # Only names of 2-4 content words of which exactly one is distinctive; that one is
            # replaced, so the near-miss shares only generic words ("BANCO NACIONAL DE CUBA" ->
            # "BANCO NACIONAL DE CHILE").
            toks = n.text.split()
            if set(norm_tokens(n.text, stop=False)) & NOT_COMMERCIAL_WORDS:
                return None
            content = [i for i, t in enumerate(toks)
                       if simple(t) not in STOPWORDS and simple(t) not in FUNCTION_WORDS]
            if not 2 <= len(content) <= 4:
                return None
            distinctive = [i for i in content
                           if not all(generic(x) for x in norm_tokens(toks[i], stop=False))]
            if len(distinctive) != 1:
                return None
            i = distinctive[0]
            if letters(toks[i]) < 4 or not re.fullmatch(r"[A-Za-z'\-]+", toks[i]):
                return None
            word = rng.choice(ENTITY_SWAP_WORDS)
            if not far(word, toks):
                return None
            new = toks[:]
            new[i] = match_case(toks[i], word)
            return (" ".join(new), "entity: distinctive word replaced",
                    "%r -> %r" % (toks[i], new[i]))

        made = 0
        used = set()
        for mode, pool, count in [("given", inds, 140), ("surname", inds, 125),
                                  ("entity", ents, 85)]:
            cands = list(pool)
            rng.shuffle(cands)
            got = 0
            for n in cands:
                if got >= count:
                    break
                if (n.ent, mode) in used:
                    continue
                res = make_entity(n, rng) if mode == "entity" else make_person(n, rng, mode)
                if not res:
                    continue
                q, sub, detail = res
                if letters(q) < MIN_LETTERS or not idx.negative_ok(q):
                    continue
                if self.add("negative_near", q, "", n, sub, detail):
                    used.add((n.ent, mode))
                    got += 1
            made += got
        return made

    def gen_negative_common(self, rng):
        idx = self.index
        cultures = sorted(GIVEN)
        made = 0
        tries = 0
        want_people, want_companies = 230, 120
        people = companies = 0
        while (people < want_people or companies < want_companies) and tries < 20000:
            tries += 1
            if people < want_people and (companies >= want_companies or rng.random() < 0.66):
                kind = "person"
                c = rng.choice(cultures)
                gender = rng.choice([0, 1])
                given = rng.choice(GIVEN[c][gender])
                sur = rng.choice(SURNAMES[c])
                if c == "slavic" and gender == 1 and re.search(r"(ov|ev|in)$", sur):
                    sur += "a"
                r = rng.random()
                if c == "hispanic" and r < 0.4:
                    sur = sur + " " + rng.choice([x for x in SURNAMES[c] if x != sur])
                if c in ("english", "german", "french") and r < 0.15:
                    given = given + " " + rng.choice([x for x in GIVEN[c][gender]
                                                      if x != given])
                if rng.random() < 0.2:
                    q = "%s, %s" % (sur.upper(), given)
                    form = "list"
                else:
                    q = "%s %s" % (given, sur)
                    form = "natural"
                sub = "person (%s)" % c
                detail = form
            else:
                kind = "company"
                r = rng.random()
                form = rng.choice(COMPANY_FORMS)
                if r < 0.7:
                    q = "%s %s %s" % (rng.choice(COMPANY_PREFIXES),
                                      rng.choice(COMPANY_INDUSTRIES), form)
                elif r < 0.85:
                    c = rng.choice(["english", "german", "french", "hispanic", "indian"])
                    q = "%s & Sons %s" % (rng.choice(SURNAMES[c]), form)
                else:
                    c = rng.choice(cultures)
                    q = "%s %s %s" % (rng.choice(SURNAMES[c]), rng.choice(COMPANY_INDUSTRIES),
                                      form)
                if rng.random() < 0.3:
                    q = q.upper()
                sub = "company"
                detail = ""
            if letters(q) < MIN_LETTERS or not idx.negative_ok(q):
                continue
            if self.add("negative_common", q, "", None, sub, detail):
                made += 1
                if kind == "person":
                    people += 1
                else:
                    companies += 1
        return made


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def write_provenance(path, rows, counts, sub_counts, n_sdn, n_alt, src_dir, csv_path):
    total = len(rows)
    npos = sum(1 for r in rows if r["ent"])
    lines = []
    w = lines.append
    w("# testdata/screening")
    w("")
    w("Generated by `%s` (seed %d; standard library only; re-running rewrites the same bytes)."
      % (COMMAND, SEED))
    w("Do not edit by hand: change `tools/screening_testset.py` and re-run it.")
    w("")
    w("| file | what it is |")
    w("|---|---|")
    w("| labelled_queries.csv | %d labelled screening queries (%d positive, %d negative); "
      "CSV, UTF-8, LF, header `query,expected_entry_id,category`; sorted by category, then by "
      "generation index |" % (total, npos, total - npos))
    w("")
    w("`expected_entry_id` is the SDN `ent_num` the query should match (the entry whose primary "
      "name or alias it was derived from); it is empty for queries that should match nothing.")
    w("")
    w("## Source")
    w("")
    w("Derived from the OFAC SDN 2019 sample in `testdata/sanctions/ofac_sdn_legacy_csv_2019/` "
      "(see `testdata/sanctions/PROVENANCE.md`): `sdn.csv` (%d entries: primary names, SDN_Type, "
      "Program, and `Gender` from Remarks) and `alt.csv` (%d aliases: aka/fka/nka). "
      "`add.csv` and `sdn_comments.csv` are not read." % (n_sdn, n_alt))
    w("")
    w("    %s  sdn.csv" % sha256(os.path.join(src_dir, "sdn.csv")))
    w("    %s  alt.csv" % sha256(os.path.join(src_dir, "alt.csv")))
    w("    %s  labelled_queries.csv (output)" % sha256(csv_path))
    w("")
    w("## Categories")
    w("")
    w("| category | rows | expected_entry_id | how the query is made |")
    w("|---|---:|---|---|")
    desc = {
        "exact": "a primary name or alias as written; individuals' `LAST, First Middle` "
                 "rewritten in natural order `First Middle Last` (surname title-cased) about "
                 "half the time. Individuals, entities, vessels and aircraft.",
        "typo": "1 edit (60%) or 2 edits (40%, in different tokens where possible): "
                "QWERTY-neighbour substitution, deletion, doubled letter or adjacent "
                "transposition, only in letter runs of >= 4 letters and never at a run's first "
                "letter; names of >= 2 tokens; the result must not normalize to any name of "
                "the entry.",
        "dropped_middle": "individuals with >= 3 name tokens (natural order) lose one token "
                          "that is neither first nor last (a middle given name 80% of the time "
                          "where there is one; never a particle such as al, bin, de); natural "
                          "order, or list order when the dropped token was a given name.",
        "swapped": "individuals: surname first without the comma (`al-Zawahiri Ayman`, "
                   "surname title- or upper-cased) or, for >= 3 tokens, a random permutation; "
                   "entities: two content words exchanged, or (<= 4 content words) the "
                   "content words rotated (legal forms and punctuated tokens stay put).",
        "title": "individuals: an honorific prepended (Mr, Mrs, Ms, Dr, General, Colonel, "
                 "Prof., and Sheikh or Haji for Arabic/Persian-looking men; by gender where "
                 "Remarks or the name suggest one) or an "
                 "honorific already in the name (Haji, Mullah, Dr., ...; about 20 rows) replaced "
                 "by another; individuals need >= 2 name tokens besides titles; "
                 "entities without a legal form (and not an armed group, party, ministry, ...) "
                 "get one appended (LLC, Ltd, Ltd., GmbH, S.A., Co.); entities whose name "
                 "already ends in a legal form get that same form "
                 "spelled another way (LTD. -> Limited, S.A. -> SA, LLC -> L.L.C., ...), never "
                 "a different one.",
        "transliteration": "individuals only (no vessels, aircraft or entities): Slavic-looking "
                           "names rendered in Cyrillic, Arabic-looking names in Arabic script, "
                           "and names with a common given name respelled in another Latin "
                           "romanization (Mohammed <-> Muhammad, Aleksandr <-> Alexander, ...). "
                           "SYNTHETIC: see below.",
        "case_punct": "lower/upper/title case, hyphen -> space (`al-Zawahiri` -> "
                      "`al Zawahiri`), apostrophe removed (`Sa'id` -> `Said`), commas and "
                      "periods removed, or extra punctuation/spacing (double space, trailing "
                      "period, spaces around a hyphen, two tokens hyphenated, no space after "
                      "the comma); one or two of these.",
        "negative_near": "a name close to an SDN name but of someone else: an individual's "
                         "surname kept with the given name(s) replaced by common given name(s) "
                         "of the same apparent culture, or the given names kept with the "
                         "surname replaced by a common surname of that culture (replacements "
                         "are >= 3 edits from every name token of the entry; names of no "
                         "recognised culture get English names); or an entity name of 2-4 "
                         "content words (no armed-group, party or state words) of which "
                         "exactly one is distinctive (words used by "
                         "fewer than %d entries' entity names), that word replaced "
                         "(`BANCO NACIONAL DE CUBA` -> `BANCO NACIONAL DE CHILE`-style)."
                         % GENERIC_MIN_ENTRIES,
        "negative_common": "ordinary names built from this script's lists of common given "
                           "names and surnames of %d cultures (%s), some in `LAST, First` "
                           "order, and " % (len(GIVEN), ", ".join(sorted(GIVEN))) +
                           "company names (`Northwind Trading LLC`, `Blue River Logistics "
                           "Ltd`, `<surname> & Sons GmbH`, ...); persons about 2/3, companies 1/3.",
    }
    for cat in sorted(counts):
        pos = "entry ent_num" if not cat.startswith("negative") else "empty"
        w("| `%s` | %d | %s | %s |" % (cat, counts[cat], pos, desc[cat]))
    w("| total | %d | | |" % total)
    w("")
    w("Sub-kinds (not in the CSV; `--trace FILE` writes them per row):")
    w("")
    for cat in sorted(sub_counts):
        items = ", ".join("%s %d" % (k, v) for k, v in sorted(sub_counts[cat].items()))
        w("- `%s`: %s" % (cat, items))
    w("")
    w("## Synthetic transliterations")
    w("")
    w("The Cyrillic and Arabic-script queries in `transliteration` are **synthetic**: produced by "
      "this script's own letter tables, not taken from any official or authoritative "
      "transliteration, and often not how the person's name is actually written in that script.")
    w("")
    w("- Cyrillic: a Latin -> Russian table, digraphs first (shch->щ, kh->х, zh->ж, ch->ч, "
      "sh->ш, ts->ц, yu->ю, ya->я, yo->ё, ye->е), word-final iy->ий / yy->ый, y after a vowel "
      "->й, ye after a consonant ->ье (Yuryevna->Юрьевна), word-final y after a "
      "consonant ->ий (Dmitry->Дмитрий), other y ->ы, final i after a vowel ->й, ' ->ь, then "
      "one letter each. Which names are "
      "'Slavic-looking' is a heuristic on surname endings (-ov, -eva, -sky, -enko, ...) and "
      "patronymics (-ovich, -evna, ...).")
    w("- Arabic script: about 50 common names from a word table (محمد, أحمد, حسين, عبد, الله, "
      "...); any other word as a consonant skeleton (short vowels inside a word dropped; word-initial "
      "vowels as أ/إ; doubled vowels and ai/ay/aw/ou as ا/ي/و; final -ah as ة; doubled "
      "consonants written once; al-/el- joined to the next word as ال). 'Arabic-looking' is a "
      "heuristic on a lexicon of common Arabic name words and the SDN program.")
    w("- Latin romanizations: the script's own variant groups (Mohammed/Muhammad/Mohamed/..., "
      "Aleksandr/Alexander, Yusuf/Youssef, Hussein/Husain, Dmitri/Dmitry, ...).")
    w("")
    w("## Checks applied")
    w("")
    w("Normalization used by the checks: lower case; apostrophes and periods deleted; every other "
      "non-alphanumeric character separates tokens (and, as a second form, hyphens deleted "
      "instead); spelling-variant groups mapped to one form; titles and legal forms removed.")
    w("")
    w("- Sources: names with `()/:@#+;` are not used, nor names with fewer than %d letters, nor "
      "names whose normalized token multiset is also a name of another entry (so every "
      "positive has one right answer). At most one query per entry within a category."
      % MIN_LETTERS)
    w("- Positives: the query (for Cyrillic/Arabic, its Latin source) has >= %d letters and its "
      "normalized token multiset is not that of another entry's name; `exact`, `swapped`, "
      "`title`, `case_punct` and the Latin romanizations normalize to the source entry's own "
      "key; `typo` and `dropped_middle` must not (they would be exact after normalization); a "
      "`dropped_middle` query is also discarded if one name of another entry contains all its "
      "tokens." % MIN_LETTERS)
    w("- Negatives (conservative; candidates failing it are discarded): no SDN primary name or "
      "alias has the same normalized token multiset, and no single SDN entry (all its names "
      "together) contains every token of >= 3 letters of the query (function words such as "
      "`the`, `and`, `al`, `bin`, `de` ignored), where tokens of >= 5 letters also count as "
      "present when the entry has a token that one deletion from each side makes equal (one "
      "substitution, insertion, deletion or adjacent transposition; so `Mohamad`/`Mohammad`-"
      "style near-spellings are caught). A query with no token of >= 3 letters is discarded.")
    w("- All query strings are distinct.")
    w("")
    w("## Caveats")
    w("")
    w("- Negatives are checked against this 2019 sample only; a `negative_common` or "
      "`negative_near` name may belong to a real person or company, and may be on later lists.")
    w("- `negative_near` names are meant to be similar to list names; a fuzzy matcher that "
      "scores them high is behaving as expected on similarity, but they are not the listed "
      "party.")
    w("- Culture, gender and 'Slavic/Arabic-looking' are guessed from the name and program; "
      "some guesses are wrong (e.g. a replacement given name of another culture).")
    w("- Natural order is derived mechanically from `LAST, First` (the surname title-cased; a "
      "trailing particle such as `Inayat-ur-` joined to the surname).")
    w("")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", help="also write a per-row trace CSV here (outside the repo)")
    args = ap.parse_args(argv)

    src_dir = os.path.join(REPO, SRC_REL)
    out_dir = os.path.join(REPO, OUT_REL)
    names, n_sdn, n_alt = load_names(src_dir)
    index = ListIndex(names)
    b = Builder(names, index)

    for cat in POSITIVE_CATEGORIES + ["negative_near", "negative_common"]:
        rng = random.Random("%d/%s" % (SEED, cat))
        getattr(b, "gen_" + cat)(rng)

    rows = sorted(b.rows, key=lambda r: (r["category"], r["idx"]))
    counts = collections.Counter(r["category"] for r in rows)
    sub_counts = collections.defaultdict(collections.Counter)
    for r in rows:
        sub_counts[r["category"]][r["subkind"]] += 1

    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "labelled_queries.csv")
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["query", "expected_entry_id", "category"])
    for r in rows:
        wr.writerow([r["query"], r["ent"], r["category"]])
    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())
    write_provenance(os.path.join(out_dir, "PROVENANCE.md"), rows, counts, sub_counts, n_sdn,
                     n_alt, src_dir, csv_path)

    if args.trace:
        with open(args.trace, "w", encoding="utf-8", newline="") as f:
            tw = csv.writer(f, lineterminator="\n")
            tw.writerow(["row", "category", "index", "query", "expected_entry_id", "subkind",
                         "source_name", "source_kind", "source_type", "detail"])
            for i, r in enumerate(rows, 1):
                tw.writerow([i, r["category"], r["idx"], r["query"], r["ent"], r["subkind"],
                             r["source"], r["source_kind"], r["source_type"], r["detail"]])

    print("wrote %s" % os.path.relpath(csv_path, REPO))
    print("wrote %s" % os.path.relpath(os.path.join(out_dir, "PROVENANCE.md"), REPO))
    for cat in sorted(counts):
        print("  %-16s %5d" % (cat, counts[cat]))
    print("  %-16s %5d" % ("total", len(rows)))
    short = [c for c in TARGETS if counts[c] < TARGETS[c]]
    if short:
        print("below target: %s" % ", ".join("%s %d/%d" % (c, counts[c], TARGETS[c])
                                             for c in short))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
