#!/usr/bin/env python3
"""No function of the library or its programs is longer than LIMIT lines.

A function is read as the project writes them: its signature starts at the beginning of a line,
its body opens with "{" alone on a line and closes with "}" alone on a line. Its length counts
from that "{" to that "}". Long functions are split into steps with names of their own
(docs/architecture.md); a table of data is not a function and is not counted.

  check_function_length.py [ROOT] [--limit N]

Prints one line per function over the limit and "N functions, N over LIMIT lines"; exit status
1 when one is over.
"""
import argparse
import os
import re
import sys

LIMIT = 80
FOLDERS = ("lib", "src")
NAME = re.compile(r"(\w+)\s*\(")


def functions(path):
    """(name, first line, length) of every function defined in a C file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            start = i - 1
            while start > 0 and not re.match(r"[A-Za-z_]", lines[start]):
                start -= 1
            match = NAME.search(" ".join(lines[start:i]))
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            if match:
                yield match.group(1), start + 1, end - i + 1
            i = end
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=".")
    ap.add_argument("--limit", type=int, default=LIMIT)
    args = ap.parse_args()
    count = over = 0
    for folder in FOLDERS:
        for top, _, files in os.walk(os.path.join(args.root, folder)):
            for name in sorted(files):
                if not name.endswith(".c"):
                    continue
                path = os.path.join(top, name)
                for fn, line, length in functions(path):
                    count += 1
                    if length > args.limit:
                        over += 1
                        print(f"{os.path.relpath(path, args.root)}:{line}: {fn}() is {length} lines "
                              f"(at most {args.limit}): split it into named steps")
    print(f"{count} functions, {over} over {args.limit} lines")
    if count == 0:
        print("no function found: wrong ROOT?")
        return 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
