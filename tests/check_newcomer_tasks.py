#!/usr/bin/env python3
"""Holds docs/architecture.md's "Three tasks a newcomer meets" to the code. For each task (add a noise kind, a
per-layer metric shown live, an optimizer) the doc lists the files it touches. This check fails, naming the task
and the file, when
  - a file the list names does not exist (names with a placeholder such as <name> are skipped),
  - a file the list names lacks the symbol that makes it part of the task (ANCHORS below),
  - a file of core/, app/ or widgets/ that the list does not name holds what the task adds to (MARKERS below: it
    names an individual noise kind, declares a reported meter, or names an individual optimizer), so a newcomer
    following the list would miss it.

    python3 tests/check_newcomer_tasks.py [REPOSITORY]
"""
import pathlib
import re
import sys

repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
SECTION = "## Three tasks a newcomer meets"
TASKS = {  # the bold title's first words -> (marker of what the task adds to, its meaning, {file: anchor symbol})
    "Add a noise kind": (
        re.compile(r"\bnoise::k[A-Z]\w*"), "names an individual noise kind",
        {"core/record/noise.h": "kNoiseVocabulary", "core/tasks/perturbation.cpp": "perturb_text"}),
    "Add a per-layer metric shown live": (
        re.compile(r"\badd_meter\s*\([^;]*metric::k\w+"), "declares a meter reported as a metric",
        {"core/record/metrics.h": "kMetricVocabulary", "core/train/layerwise_trainer.cpp": "add_meter",
         "widgets/lambda_view.cpp": "addItem"}),
    "Add an optimizer": (
        re.compile(r"\bOptimizerName::\w+"), "names an individual optimizer",
        {"core/config/choices.h": "OptimizerName", "core/optim/factory.cpp": "make_optimizer",
         "core/config/footprint.cpp": "OptimizerName", "core/config/experiment_config.cpp": "OptimizerConfig"}),
}
# Files that define the machinery a task uses rather than taking part in the task.
MACHINERY = {"core/train/trainer.h", "core/train/trainer.cpp", "core/train/meters.h"}
PATH = re.compile(r"`([\w./<>-]+/[\w./<>-]+\.(?:h|cpp|json|txt|py))`")


def task_lists(text):
    """{task title: [paths]} from the section's bold titles and the backticked paths under each."""
    if SECTION not in text:
        sys.exit(f"docs/architecture.md: no section \"{SECTION}\"")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    lists = {}
    for part in re.split(r"\n(?=\*\*)", section):
        title = re.match(r"\*\*([^*]+?)[:*]", part)
        if title:
            lists[title.group(1).split(" (")[0].strip()] = PATH.findall(part)
    return lists


def code_files():
    for folder in ("core", "app", "widgets"):
        for path in sorted((repo / folder).rglob("*")):
            if path.suffix in (".h", ".cpp") and path.is_file():
                yield path.relative_to(repo).as_posix()


def main():
    lists = task_lists((repo / "docs" / "architecture.md").read_text())
    problems = []
    for title, (marker, meaning, anchors) in TASKS.items():
        if title not in lists:
            problems.append(f"docs/architecture.md: the task \"{title}\" is missing")
            continue
        listed = set(lists[title])
        for path in sorted(listed):
            if "<" not in path and not (repo / path).exists():
                problems.append(f"{title}: docs/architecture.md lists {path}, which does not exist")
        for path, symbol in anchors.items():
            if path not in listed:
                problems.append(f"{title}: docs/architecture.md does not list {path}")
            elif not re.search(r"\b" + re.escape(symbol) + r"\b", (repo / path).read_text()):
                problems.append(f"{title}: {path} no longer has {symbol}; update the list")
        for path in code_files():
            if path in listed or path in MACHINERY:
                continue
            match = marker.search((repo / path).read_text())
            if match:
                problems.append(f"{title}: {path} {meaning} ({match.group(0)!r}) but is not in the task's list in "
                                "docs/architecture.md: list it, or take the choice from the vocabulary")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print("newcomer tasks:", ", ".join(f"{t} ({len(lists[t])} files)" for t in TASKS),
          "list every file that takes part")


if __name__ == "__main__":
    main()
