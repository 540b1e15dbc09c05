#!/usr/bin/python3
"""Checks the code against the module table, src/vigil/modules.tsv.

The table is the one place that says which modules exist, where each lives, what it owns and
which modules its code may include. This checks that:

  - the table is well formed and in dependency order (each module's dependencies are listed
    above it, so the dependencies cannot form a cycle);
  - every directory under src/vigil/ holding code is a module of the table (or inside one);
  - every `#include "vigil/..."` in src/vigil/ names the including module itself or one it may
    depend on; test code (*_test, *_benchmark, *_fuzzer, testing_*, *test_util*) may also
    include the `testing` module, anything below its module's dependencies and the table's
    extra test modules;
  - no module includes another module's internal/ headers, and no production file includes a
    test-support header;
  - docs/architecture.md's Modules table is the one this script writes from the table, and its
    Documents section lists every document under docs/ (as `docs/<file>`).

Usage:
  tools/check_layering.py [--root DIR]               check (exit 1 naming every problem)
  tools/check_layering.py [--root DIR] --write-docs  rewrite docs/architecture.md's table
"""

import argparse
import os
import re
import sys

TABLE = "src/vigil/modules.tsv"
ARCHITECTURE = "docs/architecture.md"
BEGIN = "<!-- modules: generated from src/vigil/modules.tsv by tools/check_layering.py --write-docs -->"
END = "<!-- end of modules -->"
SOURCE = re.compile(r"\.(h|cc|cu|cuh)$")
TEST_CODE = re.compile(r"(_test|_benchmark|_fuzzer)\.(h|cc|cu|cuh)$|^testing_|test_util")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"vigil/([^"]+)"', re.M)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


class Module:
    def __init__(self, name, directory, uses, test_uses, external, owns, line):
        self.name = name
        self.directory = directory
        self.uses = uses
        self.test_uses = test_uses
        self.external = external
        self.owns = owns
        self.line = line


def words(cell):
    return [] if cell == "-" else cell.split()


def read_table(root, problems):
    path = os.path.join(root, TABLE)
    modules = []
    try:
        text = read(path)
    except OSError as e:
        problems.append(f"{TABLE}: cannot read: {e.strerror}")
        return modules
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 6:
            problems.append(f"{TABLE}:{number}: {len(cells)} tab-separated columns, expected 6 "
                            "(module, directory, uses, test uses, external, owns)")
            continue
        name, directory, uses, test_uses, external, owns = cells
        modules.append(Module(name, directory, words(uses), words(test_uses),
                              "" if external == "-" else external, owns, number))
    seen = {}
    for m in modules:
        if m.name in seen:
            problems.append(f"{TABLE}:{m.line}: module {m.name} is listed twice")
        for dep in m.uses + m.test_uses:
            if dep == m.name:
                problems.append(f"{TABLE}:{m.line}: {m.name} lists itself as a dependency")
            elif dep not in seen and not any(o.name == dep for o in modules):
                problems.append(f"{TABLE}:{m.line}: {m.name} depends on {dep}, which is no module")
            elif dep in m.uses and dep not in seen:
                problems.append(f"{TABLE}:{m.line}: {m.name} depends on {dep}, listed below it: "
                                "the table must be in dependency order (a dependency above its "
                                "users), which rules out cycles")
        if not os.path.isdir(os.path.join(root, "src/vigil", m.directory)):
            problems.append(f"{TABLE}:{m.line}: {m.name}'s directory src/vigil/{m.directory} "
                            "does not exist")
        seen[m.name] = m
    return modules


def module_of(modules, relative):
    """The module owning src/vigil/<relative>: the one with the longest matching directory."""
    best = None
    for m in modules:
        if relative == m.directory or relative.startswith(m.directory + "/"):
            if best is None or len(m.directory) > len(best.directory):
                best = m
    return best


def below(modules_by_name, name):
    """Every module `name` reaches through its dependencies."""
    out, stack = set(), list(modules_by_name[name].uses)
    while stack:
        dep = stack.pop()
        if dep in out or dep not in modules_by_name:
            continue
        out.add(dep)
        stack.extend(modules_by_name[dep].uses)
    return out


def check_includes(root, modules, problems):
    by_name = {m.name: m for m in modules}
    code_root = os.path.join(root, "src/vigil")
    unlisted = set()
    for directory, subdirs, files in os.walk(code_root):
        subdirs.sort()
        for file in sorted(files):
            if not SOURCE.search(file):
                continue
            path = os.path.join(directory, file)
            relative = os.path.relpath(path, code_root)
            owner = module_of(modules, relative)
            if owner is None:
                unlisted.add(os.path.dirname(relative).split("/")[0] or relative)
                continue
            test_code = bool(TEST_CODE.search(file))
            allowed = {owner.name, *owner.uses}
            if test_code:
                allowed |= below(by_name, owner.name) | {"testing", *owner.test_uses}
            text = read(path)
            for match in INCLUDE.finditer(text):
                included = match.group(1)
                line = text.count("\n", 0, match.start()) + 1
                where = f"src/vigil/{relative}:{line}"
                target = module_of(modules, included)
                if target is None:
                    problems.append(f"{where}: includes vigil/{included}, which is in no module "
                                    f"of {TABLE}")
                    continue
                if target.name not in allowed:
                    kind = "tests of " if test_code else ""
                    problems.append(f"{where}: includes vigil/{included}, but {kind}{owner.name} "
                                    f"may not depend on {target.name} ({TABLE})")
                    continue
                inside = included[len(target.directory) + 1:]
                if target.name != owner.name and ("internal/" in inside):
                    problems.append(f"{where}: includes vigil/{included}, an internal header of "
                                    f"{target.name}; use its public interface")
                if not test_code and TEST_CODE.search(os.path.basename(included)):
                    problems.append(f"{where}: production code includes the test-support header "
                                    f"vigil/{included}")
    for name in sorted(unlisted):
        problems.append(f"src/vigil/{name}: holds code but is no module of {TABLE}")


def modules_section(modules):
    lines = [BEGIN, "", "| module | owns | depends on |", "| --- | --- | --- |"]
    for m in modules:
        depends = ", ".join(m.uses + ([m.external] if m.external else [])) or "—"
        name = f"`{m.name}`" if m.directory == m.name else f"`{m.name}` (src/vigil/{m.directory})"
        lines.append(f"| {name} | {m.owns} | {depends} |")
    lines += ["", END]
    return "\n".join(lines)


def check_docs(root, modules, problems, write):
    path = os.path.join(root, ARCHITECTURE)
    try:
        page = read(path)
    except OSError as e:
        problems.append(f"{ARCHITECTURE}: cannot read: {e.strerror}")
        return
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        problems.append(f"{ARCHITECTURE}: lacks the generated modules table (between '{BEGIN}' "
                        f"and '{END}')")
        return
    wanted = modules_section(modules)
    current = page[start:end + len(END)]
    if current != wanted:
        if write:
            page = page[:start] + wanted + page[end + len(END):]
            with open(path, "w", encoding="utf-8") as f:
                f.write(page)
        else:
            problems.append(f"{ARCHITECTURE}: the modules table differs from {TABLE}: "
                            "tools/check_layering.py --write-docs")
    listed = ""
    section = page.find("\n## Documents")
    if section >= 0:
        next_heading = page.find("\n## ", section + 1)
        listed = page[section:] if next_heading < 0 else page[section:next_heading]
    docs = os.path.join(root, "docs")
    for file in sorted(os.listdir(docs)) if os.path.isdir(docs) else []:
        if file == "architecture.md" or not (file.endswith((".md", ".yaml"))):
            continue
        if f"`docs/{file}`" not in listed:
            problems.append(f"{ARCHITECTURE}: its Documents section does not list docs/{file}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the repository (default: this script's)")
    parser.add_argument("--write-docs", action="store_true",
                        help="rewrite docs/architecture.md's modules table from the table")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    problems = []
    modules = read_table(root, problems)
    if not problems:
        check_includes(root, modules, problems)
        check_docs(root, modules, problems, args.write_docs)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"{len(problems)} layering problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
