#!/usr/bin/python3
"""Independent oracle for vigil's RFC 9162 Merkle tree code (src/vigil/audit/merkle_tree.*).

Written straight from the definitions in RFC 9162 section 2.1, as plain recursion over lists of
leaves, with none of the C++ code's bit arithmetic or subtree addressing:

  MTH({})      = HASH()
  MTH({d(0)})  = HASH(0x00 || d(0))
  MTH(D_n)     = HASH(0x01 || MTH(D[0:k]) || MTH(D[k:n]))   k = largest power of two < n
  PATH(m, D_n) and PROOF(m, D_n) = SUBPROOF(m, D_n, true)  (sections 2.1.3.1 and 2.1.4.1)

Leaf i is the ASCII bytes "leaf-<i>". Writes testdata/audit/merkle_vectors.json:

  /usr/bin/python3 tools/audit/merkle_vectors.py > testdata/audit/merkle_vectors.json

SHA-256 always; SM3 through hashlib.new("sm3") when this Python's OpenSSL provides it, else the
algorithm is listed under "skipped" and left out (the C++ test then fails, since it expects both).
Pairs beyond the exhaustive small ones come from a fixed 64-bit LCG, not Python's random, so the
output does not depend on the Python version.
"""

import functools
import hashlib
import json
import sys

LEAF_FORMAT = "leaf-%d"

# Tree sizes with a root in the output: every size up to 70, then sizes around powers of two.
ROOT_SIZES = list(range(0, 71)) + [127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025,
                                   4095, 4096, 4097]
# Every (index, size) and (old, new) pair with size <= this is listed.
EXHAUSTIVE_MAX = 20
# Then this many pseudo-random pairs with sizes up to RANDOM_MAX_SIZE.
RANDOM_PAIRS = 40
RANDOM_MAX_SIZE = 4097


def make_hash(name):
    """Returns HASH(bytes) -> bytes for "sha256" or "sm3", or None when unavailable."""
    try:
        hashlib.new(name, b"")
    except ValueError:
        return None
    return lambda data: hashlib.new(name, data).digest()


def largest_power_of_two_below(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class Tree:
    """D[0:n] for leaves "leaf-0".."leaf-<n-1>", with the RFC's functions over ranges of it."""

    def __init__(self, hash_fn, size):
        self.hash = hash_fn
        self.leaves = [(LEAF_FORMAT % i).encode("ascii") for i in range(size)]

    @functools.lru_cache(maxsize=None)
    def mth(self, lo, hi):
        """MTH(D[lo:hi]), RFC 9162 2.1.1. The cache only avoids recomputing equal ranges."""
        n = hi - lo
        if n == 0:
            return self.hash(b"")
        if n == 1:
            return self.hash(b"\x00" + self.leaves[lo])
        k = largest_power_of_two_below(n)
        return self.hash(b"\x01" + self.mth(lo, lo + k) + self.mth(lo + k, hi))

    def path(self, m, lo, hi):
        """PATH(m, D[lo:hi]), RFC 9162 2.1.3.1; m is relative to lo."""
        n = hi - lo
        if n == 1:
            return []
        k = largest_power_of_two_below(n)
        if m < k:
            return self.path(m, lo, lo + k) + [self.mth(lo + k, hi)]
        return self.path(m - k, lo + k, hi) + [self.mth(lo, lo + k)]

    def subproof(self, m, lo, hi, b):
        """SUBPROOF(m, D[lo:hi], b), RFC 9162 2.1.4.1; m is relative to lo."""
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = largest_power_of_two_below(n)
        if m <= k:
            return self.subproof(m, lo, lo + k, b) + [self.mth(lo + k, hi)]
        return self.subproof(m - k, lo + k, hi, False) + [self.mth(lo, lo + k)]

    def proof(self, m, n):
        """PROOF(m, D[0:n])."""
        return self.subproof(m, 0, n, True)


def lcg(seed):
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield state >> 33


def pairs():
    """(a, b) with 0 <= a < b (inclusion: index, size) and 1 <= a <= b (consistency)."""
    inclusion = [(i, n) for n in range(1, EXHAUSTIVE_MAX + 1) for i in range(n)]
    consistency = [(m, n) for n in range(1, EXHAUSTIVE_MAX + 1) for m in range(1, n + 1)]
    rng = lcg(9162)
    for _ in range(RANDOM_PAIRS):
        n = EXHAUSTIVE_MAX + 1 + next(rng) % (RANDOM_MAX_SIZE - EXHAUSTIVE_MAX)
        inclusion.append((next(rng) % n, n))
        consistency.append((1 + next(rng) % n, n))
    return inclusion, consistency


def vectors(hash_fn):
    tree = Tree(hash_fn, max(ROOT_SIZES + [RANDOM_MAX_SIZE]))
    hexes = lambda hashes: [h.hex() for h in hashes]
    inclusion, consistency = pairs()
    return {
        "leaf_hashes": [tree.mth(i, i + 1).hex() for i in range(4)],
        "roots": [{"size": n, "root": tree.mth(0, n).hex()} for n in ROOT_SIZES],
        "inclusion": [{"index": i, "size": n, "proof": hexes(tree.path(i, 0, n))}
                      for i, n in inclusion],
        "consistency": [{"old_size": m, "new_size": n, "proof": hexes(tree.proof(m, n))}
                        for m, n in consistency],
    }


def write(out, doc):
    """JSON with one record per line, so a regenerated file diffs readably."""
    out.write("{\n")
    out.write('  "generator": %s,\n' % json.dumps(doc["generator"]))
    out.write('  "leaf_format": %s,\n' % json.dumps(doc["leaf_format"]))
    out.write('  "skipped": %s,\n' % json.dumps(doc["skipped"]))
    out.write('  "algorithms": {\n')
    names = list(doc["algorithms"])
    for a, name in enumerate(names):
        algo = doc["algorithms"][name]
        out.write("    %s: {\n" % json.dumps(name))
        out.write('      "leaf_hashes": %s,\n' % json.dumps(algo["leaf_hashes"]))
        keys = ["roots", "inclusion", "consistency"]
        for k, key in enumerate(keys):
            out.write('      "%s": [\n' % key)
            records = algo[key]
            for r, record in enumerate(records):
                comma = "," if r + 1 < len(records) else ""
                out.write("        %s%s\n" % (json.dumps(record, separators=(",", ":")), comma))
            out.write("      ]%s\n" % ("," if k + 1 < len(keys) else ""))
        out.write("    }%s\n" % ("," if a + 1 < len(names) else ""))
    out.write("  }\n}\n")


def main():
    doc = {
        "generator": "/usr/bin/python3 tools/audit/merkle_vectors.py",
        "leaf_format": LEAF_FORMAT,
        "skipped": [],
        "algorithms": {},
    }
    for name in ("sha256", "sm3"):
        hash_fn = make_hash(name)
        if hash_fn is None:
            doc["skipped"].append(name)
            print("merkle_vectors.py: hashlib has no %s; skipping it" % name, file=sys.stderr)
            continue
        doc["algorithms"][name] = vectors(hash_fn)
    write(sys.stdout, doc)


if __name__ == "__main__":
    main()
