#!/usr/bin/env python3
"""Checks the size limits of docs/architecture.md ("Sizes"): no function in core/train longer than 60 lines, no
function in widgets/ longer than 120, no source file in widgets/ longer than 500 lines. Exit 1 with one line per file or function over its limit.

    python3 tests/check_sizes.py [REPOSITORY]

A function is measured from the line of its opening brace at namespace level to its closing brace; braces in
comments, strings and character literals are not counted."""
import pathlib
import re
import sys

repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
FUNCTION_LINES = 60
WIDGET_FILE_LINES = 500
WIDGET_FUNCTION_LINES = 120  # a view's rebuild or constructor: its parts are their own functions past this
# What opens a scope rather than a function body: namespace, class, struct, union, enum, extern "C" (literals are
# blanked, so extern "C" reads as extern followed by spaces).
SCOPE = re.compile(r"^\s*(template\s*<[^{]*>\s*)?(namespace|class|struct|union|enum|extern)\b[^()]*$|^\s*namespace\b")


def code_only(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    text = re.sub(r'R"([^(\s]*)\((.|\n)*?\)\1"', lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    pattern = re.compile(r'//[^\n]*|/\*(.|\n)*?\*/|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'')
    text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return re.sub(r"(?m)^[ \t]*#.*$", "", text)  # preprocessor lines (continued ones are rare in this code)


def long_functions(path):
    """(first line, length, head) of each function body longer than FUNCTION_LINES, at namespace or class level."""
    source = path.read_text().split("\n")
    code = code_only(path.read_text())
    found = []
    stack = []  # per open brace: "scope" (namespace, class), "body" (a function's, with its line) or "inner"
    preceding = ""  # the code since the last ; { or }
    line = 1
    for char in code:
        if char == "\n":
            line += 1
        if char == "{":
            if any(kind != "scope" for kind, _ in stack):
                stack.append(("inner", line))
            elif SCOPE.search(preceding):
                stack.append(("scope", line))
            elif preceding.rstrip().endswith("=") or not preceding.strip():
                stack.append(("inner", line))  # an initializer or a bare block, not a function
            else:
                stack.append(("body", line))
            preceding = ""
        elif char == "}":
            if stack:
                kind, first = stack.pop()
                length = line - first + 1
                if kind == "body" and length > FUNCTION_LINES:
                    found.append((first, length, source[first - 1].strip()[:70]))
            preceding = ""
        elif char == ";":
            preceding = ""
        else:
            preceding += char
    return found


def main():
    problems = []
    for path in sorted((repo / "core" / "train").glob("*.cpp")) + sorted((repo / "core" / "train").glob("*.h")):
        for start, length, head in long_functions(path):
            problems.append(f"{path.relative_to(repo)}:{start}: function of {length} lines "
                            f"(limit {FUNCTION_LINES}): {head}")
    for path in sorted((repo / "widgets").glob("*.cpp")) + sorted((repo / "widgets").glob("*.h")):
        if path.suffix == ".cpp":
            for start, length, head in long_functions(path):
                if length > WIDGET_FUNCTION_LINES:
                    problems.append(f"{path.relative_to(repo)}:{start}: function of {length} lines "
                                    f"(limit {WIDGET_FUNCTION_LINES}): {head}")
        count = len(path.read_text().splitlines())
        if count > WIDGET_FILE_LINES:
            problems.append(f"{path.relative_to(repo)}: {count} lines (limit {WIDGET_FILE_LINES}): split it by "
                            "responsibility")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print("sizes: every core/train function within", FUNCTION_LINES, "lines, every widgets/ function within",
          WIDGET_FUNCTION_LINES, "and every widgets/ file within", WIDGET_FILE_LINES)


if __name__ == "__main__":
    main()
