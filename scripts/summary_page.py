"""What the results scripts share: files written to a temporary name and renamed, and a results page that ends with
the folder's own reading (FOLDER/notes.md)."""
import json
import os


def write_json(path, value):
    with open(path + ".tmp", "w") as out:
        json.dump(value, out, indent=1)
    os.replace(path + ".tmp", path)


def write_page(folder, target, lines, runs, with_notes=True):
    """Writes `lines` to `target` (Markdown), followed by FOLDER/notes.md under "Reading the numbers" when present
    (unless the caller placed the notes itself: with_notes=False)."""
    notes = os.path.join(folder, "notes.md")
    if with_notes and os.path.exists(notes):
        lines = lines + ["## Reading the numbers", "", open(notes).read().strip(), ""]
    with open(target + ".tmp", "w") as out:
        out.write("\n".join(lines))
    os.replace(target + ".tmp", target)
    print(f"wrote {target} from {runs} runs")
