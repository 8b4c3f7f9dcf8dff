#!/usr/bin/env python3
"""Checks the size limits of docs/architecture.md ("Sizes"): no source file in core/, app/ or widgets/ longer than 500
lines; no function in core/ longer than 60 lines, in app/ longer than 80, in widgets/ longer than WIDGET_FUNCTION_LINES.
Exit 1 with one line per file or function over its limit.

    python3 tests/check_sizes.py [REPOSITORY]

A function is measured from the line of its opening brace at namespace level to its closing brace; braces in
comments, strings and character literals are not counted."""
import pathlib
import re
import sys

repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
FILE_LINES = 500  # one file per job: past this, split it by responsibility
# Per folder: the longest function allowed. core/ reads like pytorch/examples' train()/test(); app/ holds the
# commands' and the window's entry points; a view's rebuild or constructor in widgets/ draws or builds its parts
# in functions of their own past its limit.
FUNCTION_LINES = {"core": 60, "app": 80, "widgets": 100}
# What opens a scope rather than a function body: namespace, class, struct, union, enum, extern "C" (literals are
# blanked, so extern "C" reads as extern followed by spaces).
SCOPE = re.compile(r"^\s*(template\s*<[^{]*>\s*)?(namespace|class|struct|union|enum|extern)\b[^()]*$|^\s*namespace\b")


def code_only(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    text = re.sub(r'R"([^(\s]*)\((.|\n)*?\)\1"', lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    pattern = re.compile(r'//[^\n]*|/\*(.|\n)*?\*/|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'')
    text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return re.sub(r"(?m)^[ \t]*#.*$", "", text)  # preprocessor lines (continued ones are rare in this code)


def long_functions(path, limit):
    """(first line, length, head) of each function body longer than `limit`, at namespace or class level."""
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
                if kind == "body" and length > limit:
                    found.append((first, length, source[first - 1].strip()[:70]))
            preceding = ""
        elif char == ";":
            preceding = ""
        else:
            preceding += char
    return found


def sources(folder):
    return sorted(path for path in (repo / folder).rglob("*") if path.suffix in (".h", ".cpp") and path.is_file())


def main():
    problems = []
    for folder, limit in FUNCTION_LINES.items():
        for path in sources(folder):
            name = path.relative_to(repo)
            for start, length, head in long_functions(path, limit):
                problems.append(f"{name}:{start}: function of {length} lines (limit {limit} in {folder}/): {head}")
            count = len(path.read_text().splitlines())
            if count > FILE_LINES:
                problems.append(f"{name}: {count} lines (limit {FILE_LINES}): split it by responsibility")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print("sizes: every file of core/, app/ and widgets/ within", FILE_LINES, "lines; every function within",
          ", ".join(f"{limit} lines in {folder}/" for folder, limit in FUNCTION_LINES.items()))


if __name__ == "__main__":
    main()
