"""The README is a guide a new user follows without guessing: short, the two
quick-start commands, a tour whose commands come in an order that works (a
run folder is read only after the command that writes it), and a pointer to
every page of docs/. The project's text speaks of the project, not of how
its work was organised: no numbered work sessions, no diary entries."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_LINES = 300


def _shell_lines(text: str) -> list[str]:
    """The command lines of the text's ```sh blocks, in order."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```sh"
            continue
        if inside and line.strip():
            lines.append(line.split("#")[0].strip())
    return lines


def test_readme_is_short():
    assert len(README.splitlines()) <= MAX_LINES


def test_quick_start_is_the_two_make_commands():
    start = README.index("## Quick start")
    block = README[start:README.index("## ", start + 3)]
    commands = _shell_lines(block)
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_tour_reads_a_run_folder_only_after_a_check_wrote_it():
    """`kmc trace ... results/NAME` needs an earlier `kmc check .../NAME.toml`."""
    commands = _shell_lines(README)
    checked = set()
    traces = 0
    for line in commands:
        words = line.split()
        if len(words) > 2 and words[1] == "check":
            checked.add(Path(words[2]).stem)
        if len(words) > 3 and words[1] == "trace":
            traces += 1
            folder = Path(words[3]).parts
            assert folder[0] == "results" and folder[1] in checked, line
    assert traces >= 1


def test_tour_spec_files_exist_or_are_written_inline():
    for line in _shell_lines(README):
        words = line.split()
        if len(words) > 2 and words[1] in ("check", "simulate") and words[2].endswith(".toml"):
            name = words[2]
            assert (ROOT / name).exists() or f"`{name}`" in README, name


def test_every_docs_page_is_linked_from_the_readme():
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in README, page.name
    assert "bench/README.md" in README


def test_readme_credits_the_reference_specifications():
    credits = README[README.index("## Credits"):]
    assert "Vanlightly/kafka-tlaplus" in credits and "MIT" in credits


DIARY = re.compile(r"\b(?:work )?sessions? \d+\b|\b(?:this|previous|last|earlier|next) session\b"
                   r"|\bsession-\d+\b", re.IGNORECASE)


def test_the_diary_pattern_is_seen():
    word = "sess" + "ion"   # (spelt in two so that this file holds no diary phrase itself)
    assert DIARY.search(f"measured (final code of {word} 5)")
    assert DIARY.search(f"the AMD EPYC machine of {word}s 9-11")
    assert DIARY.search("before (previous session, for comparison)")
    assert not DIARY.search("a ZooKeeper session expires; SparkSession; fetch sessions")


def test_no_text_speaks_of_work_sessions():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    found = []
    this = Path(__file__).resolve()
    for name in names:
        path = ROOT / name
        if path.suffix not in (".md", ".py", ".toml", ".txt", ".c", "") or not path.is_file():
            continue
        if path.resolve() == this:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if DIARY.search(line):
                found.append(f"{name}:{n}: {line.strip()[:80]}")
    assert found == []


def test_every_current_figure_names_date_machine_code_and_command():
    """docs/performance.md's table: each figure with when, where, which code
    and the command that printed it (the bench script is there: test_citations)."""
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    table = text[text.index("## Current figures"):]
    table = table[:table.index("\n\n", table.index("| comparison"))]
    rows = [r for r in table.splitlines() if r.startswith("| ") and not r.startswith("| comparison")]
    assert len(rows) >= 10
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 6, row
        _, figure, date, machine, code, command = cells
        assert figure and re.match(r"2026-\d\d-\d\d", date), row
        assert machine in ("Intel Xeon", "AMD EPYC", "2 vCPU"), row
        assert re.search(r"\b[0-9a-f]{7}\b", code), row
        assert command.startswith("`bench/") or command.startswith("`kmc ") or command == "the same run", row
