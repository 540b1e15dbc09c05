#!/usr/bin/python3
"""Tests of tools/check_layering.py on small trees built here: each wrong-way include, reach
into internal/ headers, unlisted directory, table out of order and stale page must fail, naming
the file and line; a tree that keeps the rules passes."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import check_layering  # noqa: E402

TABLE = """# module\tdirectory\tuses\ttest uses\texternal\towns
common\tcommon\t-\t-\tabseil\tbasics
core\tcore\tcommon\t-\t-\tthe transaction
rules\trules\tcore\t-\tyaml-cpp\tthe policy
testing\ttesting\tcommon\t-\t-\ttest helpers
"""


class Tree:
    def __init__(self, root):
        self.root = root

    def write(self, relative, text):
        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class CheckLayeringTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tree = Tree(self.dir.name)
        self.tree.write("src/vigil/modules.tsv", TABLE)
        self.tree.write("src/vigil/common/status.h", "#pragma once\n")
        self.tree.write("src/vigil/core/transaction.h", '#include "vigil/common/status.h"\n')
        self.tree.write("src/vigil/core/internal/money.h", "#pragma once\n")
        self.tree.write("src/vigil/rules/policy.cc",
                        '#include "vigil/core/transaction.h"\n#include <string>\n')
        self.tree.write("src/vigil/rules/policy_test.cc",
                        '#include "vigil/common/status.h"\n#include "vigil/testing/fake.h"\n')
        self.tree.write("src/vigil/testing/fake.h", '#include "vigil/common/status.h"\n')
        self.tree.write("docs/policy.md", "# Policies\n")
        self.tree.write("docs/architecture.md", "# Architecture\n\n<!-- modules -->\n")
        self.write_docs()

    def tearDown(self):
        self.dir.cleanup()

    def run_check(self, *args):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = check_layering.main(["--root", self.dir.name, *args])
        return code, err.getvalue()

    def write_docs(self):
        section = check_layering.modules_section(
            check_layering.read_table(self.dir.name, []))
        self.tree.write("docs/architecture.md",
                        f"# Architecture\n\n{section}\n\n## Documents\n\n`docs/policy.md`\n")

    def test_a_tree_that_keeps_the_rules_passes(self):
        code, err = self.run_check()
        self.assertEqual(code, 0, err)

    def test_a_wrong_way_include_fails_naming_file_and_line(self):
        self.tree.write("src/vigil/core/money.cc",
                        '#include "vigil/common/status.h"\n\n#include "vigil/rules/policy.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("src/vigil/core/money.cc:3: includes vigil/rules/policy.h, but core may "
                      "not depend on rules", err)

    def test_only_direct_dependencies_count_for_production_code(self):
        # rules uses core, core uses common: rules' code may not name common itself.
        self.tree.write("src/vigil/rules/list.cc", '#include "vigil/common/status.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("src/vigil/rules/list.cc:1: includes vigil/common/status.h, but rules may "
                      "not depend on common", err)

    def test_tests_may_use_testing_and_what_lies_below(self):
        # policy_test.cc (setUp) includes common, below rules' dependencies, and testing.
        code, err = self.run_check()
        self.assertEqual(code, 0, err)
        self.tree.write("src/vigil/core/transaction_test.cc", '#include "vigil/rules/policy.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("tests of core may not depend on rules", err)

    def test_production_code_may_not_include_testing(self):
        self.tree.write("src/vigil/rules/policy.cc", '#include "vigil/testing/fake.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("rules may not depend on testing", err)

    def test_another_modules_internal_header_fails(self):
        self.tree.write("src/vigil/rules/policy.cc", '#include "vigil/core/internal/money.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("an internal header of core", err)
        # Its own internal headers are a module's to use.
        self.tree.write("src/vigil/rules/policy.cc", '#include "vigil/core/transaction.h"\n')
        self.tree.write("src/vigil/core/money.cc", '#include "vigil/core/internal/money.h"\n')
        code, err = self.run_check()
        self.assertEqual(code, 0, err)

    def test_a_directory_that_is_no_module_fails(self):
        self.tree.write("src/vigil/cluster/node.cc", "int x;\n")
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("src/vigil/cluster: holds code but is no module", err)

    def test_a_dependency_listed_below_its_user_fails(self):
        self.tree.write("src/vigil/modules.tsv", TABLE.replace(
            "common\tcommon\t-", "common\tcommon\tcore"))
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("common depends on core, listed below it", err)

    def test_a_stale_page_fails_and_write_docs_repairs_it(self):
        self.tree.write("src/vigil/modules.tsv", TABLE.replace("the policy", "the policies"))
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("the modules table differs", err)
        code, err = self.run_check("--write-docs")
        self.assertEqual(code, 0, err)
        code, err = self.run_check()
        self.assertEqual(code, 0, err)

    def test_a_document_the_page_does_not_list_fails(self):
        self.tree.write("docs/cluster.md", "# Cluster\n")
        code, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("does not list docs/cluster.md", err)


if __name__ == "__main__":
    unittest.main()
