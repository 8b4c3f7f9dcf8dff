#!/usr/bin/env python3
"""Writes the man pages of both programs and the CLI's bash completion from the programs' own --help, so that
neither can drift from what the programs accept. The build runs it (app/CMakeLists.txt, target `manual`):

    python3 scripts/make_manual.py CLI GUI VERSION DATE OUT_DIR

OUT_DIR/descentlab-cli.1.gz, OUT_DIR/descentlab.1.gz (gzip -9n: no name or time inside) and
OUT_DIR/descentlab-cli.bash-completion. The GUI's help is read with QT_QPA_PLATFORM=offscreen (no display needed).
The icon's PNG is not made here: it is resources/desktop/io.github.descentlab.DescentLab.png, rendered once with
`convert -background none io.github.descentlab.DescentLab.svg -resize 256x256 -depth 8 ...png` (ImageMagick)."""
import gzip
import os
import pathlib
import re
import subprocess
import sys

OPTION = re.compile(r"^  (-[^\s]+(?: [^\s]+)*?)(?:\s{2,}(.*))?$")


def help_text(program, *arguments):
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR="/tmp")
    done = subprocess.run([program, *arguments, "--help"], capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        sys.exit(f"make_manual.py: {program} {' '.join(arguments)} --help failed: {done.stderr.strip()}")
    return done.stdout


def sections(text):
    """CLI11 help: {"": lines before the first section, "Options": [...], "Subcommands": [...], ...}."""
    result, current = {"": []}, ""
    for line in text.splitlines():
        heading = re.fullmatch(r"([A-Z][A-Za-z ]+):", line)
        if heading:
            current = heading.group(1)
            result[current] = []
        else:
            result.setdefault(current, []).append(line)
    return result


def entries(lines):
    """Indented "name  description" entries, a description continued on deeper-indented lines."""
    found = []
    for line in lines:
        if not line.strip():
            continue
        if line.startswith("  ") and not line.startswith(" " * 6):
            match = re.match(r"^  (\S(?:.*?\S)?)(?:\s{2,}(.*))?$", line)
            found.append([match.group(1), match.group(2) or ""])
        elif found:
            found[-1][1] = (found[-1][1] + " " + line.strip()).strip()
    return found


class Command:
    """One command of the CLI: its description, usage, options and subcommands, read from its --help."""

    def __init__(self, program, path):
        self.path = path
        parts = sections(help_text(program, *path))
        head = [line for line in parts[""] if line.strip()]
        self.usage = next((line[len("Usage: "):] for line in head if line.startswith("Usage: ")), "")
        self.description = " ".join(line for line in head if not line.startswith("Usage: "))
        self.options = entries(parts.get("Options", []))
        self.positionals = entries(parts.get("Positionals", []))
        self.footer = "\n".join(parts.get("Exit codes", [])).strip("\n")
        self.children = [Command(program, path + [name]) for name, _ in entries(parts.get("Subcommands", []))]

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def option_names(spec):  # "-h,--help" -> ["-h", "--help"]; "--size TEXT:{quick,full}" -> ["--size"]
    return [name for name in spec.split()[0].split(",") if name.startswith("-")]


def option_item(spec, description):
    names, _, value = spec.partition(" ")
    shown = ", ".join(f"\\fB{roff(name)}\\fR" for name in names.split(","))
    return f".TP\n{shown}{' ' + chr(92) + 'fI' + roff(value) + chr(92) + 'fR' if value else ''}\n{roff(description)}\n"


COMMON_TAIL = """.SH ENVIRONMENT
.TP
.B DESCENTLAB_DATA
The dataset folder; overrides the default below.
.TP
.B DESCENTLAB_THREADS
Torch and BLAS threads when \\fB\\-\\-threads\\fR is not given (default 1).
.TP
.B XDG_DATA_HOME
The user's data folder (default \\fI~/.local/share\\fR): DescentLab keeps its datasets and the window's runs in
\\fI$XDG_DATA_HOME/descentlab\\fR.
.TP
.B XDG_CONFIG_HOME
The user's settings folder (default \\fI~/.config\\fR): the window's layout and recent files are in
\\fI$XDG_CONFIG_HOME/DescentLab/DescentLab.conf\\fR.
.SH FILES
.TP
.I ~/.local/share/descentlab/datasets
The datasets (IMDb, MNIST, Fashion\\-MNIST, Moby\\-Dick), checked against their SHA\\-256 sums. The video
presets need none.
.TP
.I ~/.local/share/descentlab/runs
Where the window writes new runs (\\fBdescentlab \\-\\-runs\\-dir\\fR chooses another folder).
.P
Run from the build tree it was built in, a program keeps the source tree's \\fIdatasets/cache\\fR and
\\fIruns/\\fR in the working folder instead.
"""


def cli_page(root, version, date):
    page = [f'.TH DESCENTLAB\\-CLI 1 "{date}" "DescentLab {version}" "User Commands"',
            ".SH NAME", "descentlab\\-cli \\- train, sweep, probe and compare DescentLab runs without a window",
            ".SH SYNOPSIS", ".B descentlab\\-cli", "[\\fB\\-\\-threads\\fR \\fIN\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
            ".SH DESCRIPTION", roff(root.description),
            "Every command below is also described by \\fBdescentlab\\-cli \\fICOMMAND\\fB \\-\\-help\\fR.",
            ".SH OPTIONS"]
    page += [option_item(*option) for option in root.options]
    page.append(".SH COMMANDS")
    for command in root.walk():
        if command is root or command.children:
            if command is not root:
                page += [f'.SS "descentlab\\-cli {roff(" ".join(command.path))}"', roff(command.description)]
            continue
        page += [f'.SS "descentlab\\-cli {roff(" ".join(command.path))}"', roff(command.description),
                 ".P", f"Usage: \\fB{roff(command.usage)}\\fR"]
        page += [option_item(*positional) for positional in command.positionals]
        page += [option_item(*option) for option in command.options if option[0] != "-h,--help"]
    page += [".SH EXIT STATUS", ".nf", roff(root.footer), ".fi", COMMON_TAIL,
             ".SH EXAMPLES", ".nf",
             roff("descentlab-cli train --preset video-constrained --size quick --out run.h5\n"
                  "descentlab-cli inspect run.h5\n"
                  "descentlab-cli sweep run.h5 --gamma 0,0.5,1 --seeds 3\n"
                  "descentlab-cli data fetch imdb"),
             ".fi", ".SH SEE ALSO", "\\fBdescentlab\\fR(1)"]
    return "\n".join(page) + "\n"


def qt_entries(text, heading):
    part = sections(text).get(heading, [])
    return entries(part)


def gui_page(gui, version, date):
    main_help, report_help = help_text(gui), help_text(gui, "report")
    skip = {"-h, --help", "--help-all"}
    page = [f'.TH DESCENTLAB 1 "{date}" "DescentLab {version}" "User Commands"',
            ".SH NAME", "descentlab \\- watch a transformer descend layer by layer, and how an optimizer shapes its "
            "weights",
            ".SH SYNOPSIS", ".B descentlab", "[\\fIOPTIONS\\fR] [\\fIRUN.h5\\fR|\\fIDIR\\fR...]", ".br",
            ".B descentlab report", "\\fB\\-\\-out\\fR \\fIDIR\\fR [\\fIOPTIONS\\fR] \\fIRUN.h5\\fR|\\fIDIR\\fR...",
            ".SH DESCRIPTION",
            roff(" ".join(line for line in sections(main_help)[""] if line.strip() and not line.startswith("Usage:"))),
            ".P", "Training runs in the background while the views follow it: per\\-layer losses, the Lagrange "
            "multipliers, weight magnitudes and noise\\-robustness sweeps. Help > Tours starts prepared runs with a "
            "caption.",
            ".SH OPTIONS"]
    page += [option_item(spec.replace(", ", ","), description) for spec, description in qt_entries(main_help, "Options")
             if spec not in skip]
    page += [".SH ARGUMENTS"] + [option_item(*argument) for argument in qt_entries(main_help, "Arguments")]
    page += [".SH REPORT", roff(" ".join(line for line in sections(report_help)[""]
                                         if line.strip() and not line.startswith("Usage:")))]
    page += [option_item(spec.replace(", ", ","), description) for spec, description in qt_entries(report_help, "Options")
             if spec not in skip]
    page += [COMMON_TAIL, ".SH SEE ALSO", "\\fBdescentlab\\-cli\\fR(1)"]
    return "\n".join(page) + "\n"


def completion(root, presets):
    """A bash completion for descentlab-cli: its commands, each command's options, and the values an option
    takes where --help lists them ({a,b,c}) or where they are the presets; files elsewhere."""
    commands = list(root.walk())
    known = "|".join(" " + " ".join(command.path) for command in commands if command.path)
    lines = ["# bash completion for descentlab-cli, generated by scripts/make_manual.py from its --help.",
             "_descentlab_cli() {",
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path='' i",
             f"  local known='|{known}|'",
             "  for ((i = 1; i < COMP_CWORD; i++)); do",
             "    [[ $known == *\"|$path ${COMP_WORDS[i]}|\"* ]] && path=\"$path ${COMP_WORDS[i]}\"",
             "  done",
             "  case \"$prev\" in"]
    values = {}
    for command in commands:
        for spec, _ in command.options:
            kind = spec.split()[1] if len(spec.split()) > 1 else ""
            choices = re.search(r"\{([^}]*)\}", kind)
            for name in option_names(spec):
                if choices:
                    values[name] = choices.group(1).replace(",", " ")
                elif name == "--preset":
                    values[name] = " ".join(presets)
    for name, words in sorted(values.items()):
        lines.append(f"    {name}) COMPREPLY=($(compgen -W '{words}' -- \"$cur\")); return ;;")
    lines += ["  esac", "  local words='' commands=''", "  case \"$path\" in"]
    for command in commands:
        # A command's words: its subcommands, or the values its positional arguments take ({a,b,c}).
        choices = [re.search(r"\{([^}]*)\}", spec) for spec, _ in command.positionals]
        children = " ".join([child.path[-1] for child in command.children] +
                            [word for found in choices if found for word in found.group(1).split(",")])
        options = " ".join(name for spec, _ in command.options for name in option_names(spec))
        key = " " + " ".join(command.path) if command.path else ""
        lines.append(f"    '{key}') commands='{children}' words='{options}' ;;")
    lines += ["  esac",
              "  if [[ $cur == -* ]]; then",
              "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))",
              "  elif [[ -n $commands ]]; then",
              "    COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))",
              "  else",
              "    COMPREPLY=($(compgen -f -- \"$cur\"))",
              "  fi",
              "}",
              "complete -o filenames -o bashdefault -F _descentlab_cli descentlab-cli", ""]
    return "\n".join(lines)


def write_gzip(path, text):
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as out:
        out.write(text.encode())


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    cli, gui, version, date, out = sys.argv[1:]
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    root = Command(cli, [])
    train = next(command for command in root.children if command.path == ["train"])
    preset_help = next(description for spec, description in train.options if spec.startswith("--preset"))
    presets = re.findall(r"[a-z]+-[a-z]+", preset_help.partition(":")[2])
    write_gzip(out / "descentlab-cli.1.gz", cli_page(root, version, date))
    write_gzip(out / "descentlab.1.gz", gui_page(gui, version, date))
    (out / "descentlab-cli.bash-completion").write_text(completion(root, presets))


if __name__ == "__main__":
    main()
