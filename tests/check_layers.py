#!/usr/bin/env python3
"""Checks every #include of core/ against the table in docs/architecture.md: a folder may include itself and
the folders listed on its row; a folder marked "no" under LibTorch includes no torch, ATen or c10 header; nothing
in core includes Qt; widgets/ includes no LibTorch and of core only core/record; app/ includes of core only the
folders docs/architecture.md lists after "app/ includes of core only:" (the session door and the plain layers), and
no LibTorch header, directly or through a header of core, except in the files listed after "LibTorch in app/:".
Exit 1 with one line per violation.

    python3 tests/check_layers.py [REPOSITORY]"""
import pathlib
import re
import sys

repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
TORCH = re.compile(r'#\s*include\s*[<"](torch|ATen|c10)/')
QT = re.compile(r'#\s*include\s*[<"](Q[A-Za-z]+|qcustomplot\.h)')
CORE = re.compile(r'#\s*include\s*"core/([^"]+)"')


def read_table():
    rows = {}
    text = (repo / "docs" / "architecture.md").read_text()
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("folder", "---") or not re.fullmatch(r"[a-z_]+", cells[0]):
            continue
        allowed = {name.strip() for name in cells[1].split(",") if name.strip()}
        rows[cells[0]] = (allowed, cells[2] == "yes")
    if not rows:
        sys.exit("tests/check_layers.py: no layer table found in docs/architecture.md")
    return rows


def folder_of(relative):  # "core/train/x.h" -> "train"; "core/runtime.h" -> "runtime"
    parts = pathlib.PurePosixPath(relative).parts
    return parts[1] if len(parts) > 2 else pathlib.PurePosixPath(parts[1]).stem


def torch_bearing_headers():
    """Every header of core that includes LibTorch, itself or through another header of core."""
    includes, direct = {}, set()
    for path in (repo / "core").rglob("*.h"):
        relative = path.relative_to(repo / "core").as_posix()
        text = path.read_text()
        includes[relative] = set(CORE.findall(text))
        if any(TORCH.search(line) for line in text.splitlines()):
            direct.add(relative)
    bearing, changed = set(direct), True
    while changed:
        changed = False
        for header, targets in includes.items():
            if header not in bearing and targets & bearing:
                bearing.add(header)
                changed = True
    return bearing


def check_app():
    """app/ reaches the engine through its torch-free headers; the files that still need LibTorch are listed."""
    text = (repo / "docs" / "architecture.md").read_text()
    listed = re.search(r"LibTorch in app/:(.*?)(?:\n\n|$)", text, re.S)
    if not listed:
        return ["docs/architecture.md: no 'LibTorch in app/:' list"]
    excepted = set(re.findall(r"`(app/[^`]+)`", listed.group(1)))
    door = re.search(r"app/ includes of core only:(.*?)\.\n", text, re.S)
    if not door:
        return ["docs/architecture.md: no 'app/ includes of core only:' list"]
    app_folders = set(re.findall(r"`([a-z_]+)`", door.group(1)))
    bearing = torch_bearing_headers()
    problems = []
    for path in sorted((repo / "app").rglob("*")):
        relative = path.relative_to(repo).as_posix()
        if path.suffix not in (".h", ".cpp") or relative in excepted:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            included = CORE.search(line)
            if TORCH.search(line):
                problems.append(f"{relative}:{number}: app/ includes LibTorch (not listed in docs/architecture.md)")
            elif included and included.group(1) in bearing:
                problems.append(f"{relative}:{number}: core/{included.group(1)} brings LibTorch into app/ "
                                f"(not listed in docs/architecture.md)")
            if included and relative not in excepted and folder_of("core/" + included.group(1)) not in app_folders:
                problems.append(f"{relative}:{number}: app/ may include core/{included.group(1)} only through "
                                f"core/session (docs/architecture.md: app/ includes of core only)")
    for missing in sorted(name for name in excepted if not (repo / name).exists()):
        problems.append(f"docs/architecture.md lists {missing}, which does not exist")
    return problems


def main():
    rows = read_table()
    problems = []
    sources = sorted(p for p in (repo / "core").rglob("*") if p.suffix in (".h", ".cpp", ".in"))
    for path in sources:
        relative = path.relative_to(repo).as_posix()
        folder = folder_of(relative)
        if folder not in rows:
            problems.append(f"{relative}: folder '{folder}' is not in docs/architecture.md's table")
            continue
        allowed, torch_allowed = rows[folder]
        for number, line in enumerate(path.read_text().splitlines(), 1):
            included = CORE.search(line)
            if included:
                target = folder_of("core/" + included.group(1))
                if target != folder and target not in allowed:
                    problems.append(f"{relative}:{number}: {folder} may not include core/{included.group(1)}")
            if TORCH.search(line) and not torch_allowed:
                problems.append(f"{relative}:{number}: {folder} is torch-free but includes LibTorch")
            if QT.search(line):
                problems.append(f"{relative}:{number}: core includes Qt")
    for path in sorted((repo / "widgets").rglob("*")):
        if path.suffix in (".h", ".cpp"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if TORCH.search(line):
                    problems.append(f"{path.relative_to(repo)}:{number}: widgets include LibTorch")
                included = CORE.search(line)
                if included and folder_of("core/" + included.group(1)) != "record":
                    problems.append(f"{path.relative_to(repo)}:{number}: widgets may include only core/record, "
                                    f"not core/{included.group(1)}")
    problems += check_app()
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} include(s) against docs/architecture.md")
        return 1
    print(f"layers: {len(sources)} files of core, and widgets/ and app/, follow docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
