#!/usr/bin/env python3
"""check_doc_refs.py — every test a document cites as "test name" [file.cpp:LINE] is at that line.

docs/seeds.md backs each row with tests cited by name and line ("tile fill: ..." [test_topology.cpp:333]); a test
inserted above one moves the line and the citation points at another test. This check fails on such drift: each
[file:LINE] must land on a TEST_CASE line, and where the citation quotes the test's name (or a part of it, with
leading or trailing ellipses), on the test of that name. --fix rewrites each line to its named test's.

    python3 scripts/check_doc_refs.py [--fix] [DOC.md ...]      # default: docs/seeds.md
Python standard library only.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_DIRS = ["tests/unit", "tests/cli", "tests/validation", "tests/browser", "tests/fuzz"]
REF = re.compile(r'(?:"([^"]+?)"\s*)?\[([\w./-]+\.(?:cpp|mjs|sh)):(\d+)\]')


def find_file(name):
    for d in TEST_DIRS:
        path = os.path.join(ROOT, d, name)
        if os.path.isfile(path):
            return path
    return None


def key_of(name):
    """The part of a quoted name to look for: whitespace collapsed, ellipses and quotes' edges trimmed, 50 chars."""
    k = re.sub(r"\s+", " ", name).strip().strip("…").strip(".").strip()
    return k[:50]


def main():
    fix = "--fix" in sys.argv
    docs = [a for a in sys.argv[1:] if a != "--fix"] or [os.path.join(ROOT, "docs", "seeds.md")]
    lines_of, problems, checked, moved = {}, [], 0, 0
    for doc in docs:
        text = open(doc, encoding="utf-8").read()

        def check(m):
            nonlocal checked, moved
            name, fname, line = m.group(1), m.group(2), int(m.group(3))
            path = find_file(fname)
            if path is None:
                problems.append(f"{os.path.relpath(doc, ROOT)}: [{fname}:{line}]: no such test file")
                return m.group(0)
            if path not in lines_of:
                lines_of[path] = open(path, encoding="utf-8").read().split("\n")
            lines = lines_of[path]
            checked += 1
            tests = [i + 1 for i, l in enumerate(lines) if "TEST_CASE(" in l]
            if name:
                key = key_of(name)
                named = [i for i in tests if key in lines[i - 1].replace('\\"', '"')]
                if not named:
                    problems.append(f"{os.path.relpath(doc, ROOT)}: \"{key}\" [{fname}:{line}]: no TEST_CASE of that name")
                    return m.group(0)
                if line not in named:
                    best = min(named, key=lambda i: abs(i - line))
                    if fix:
                        moved += 1
                        return m.group(0).replace(f"{fname}:{line}]", f"{fname}:{best}]")
                    problems.append(f"{os.path.relpath(doc, ROOT)}: \"{key}\" [{fname}:{line}]: the test is at line {best}")
            elif line not in tests:
                problems.append(f"{os.path.relpath(doc, ROOT)}: [{fname}:{line}]: line {line} is not a TEST_CASE")
            return m.group(0)

        new = REF.sub(check, text)
        if fix and new != text:
            open(doc, "w", encoding="utf-8").write(new)
    for p in problems:
        print(p)
    print(f"check_doc_refs.py: {checked} test citations, {len(problems)} wrong" + (f", {moved} re-pointed" if fix else ""))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
