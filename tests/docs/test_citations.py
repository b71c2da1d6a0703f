"""No text cites a file of the repository that does not exist: the README,
docs/, bench/README.md, the specs' comments and every docstring and comment
of model/, invariants/, checker/, bench/ and tests/ name paths such as
`checker/search/engine.py` or `specs/storage/`; each must be there."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("model", "invariants", "checker", "specs", "tests", "bench", "docs", "results")
# a path of ours: one of the top folders, then path characters; not a part of
# a longer path (../shared/..., /tmp/...) nor of a dotted name
CITATION = re.compile(r"(?<![\w./~-])((?:%s)/[\w./-]*)" % "|".join(TOP))
# paths that runs write (not in a clean clone) or that the text shows as a
# pattern; each on purpose
NOT_FILES = {
    "model/variant",              # the result tables' column title, not a path
    "specs/sub/",                 # a folder tests/regress makes under tmp_path
}


def _texts():
    for name in ("README.md", "bench/README.md"):
        yield ROOT / name
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield from sorted((ROOT / "specs").rglob("*.toml"))
    for top in ("model", "invariants", "checker", "bench", "tests"):
        yield from sorted((ROOT / top).rglob("*.py"))


def citations(text: str) -> set[str]:
    found = set()
    for m in CITATION.finditer(text):
        if text[m.end():m.end() + 1] in ("*", "<", "{"):
            continue  # a pattern: specs/kraft-*.toml, results/<spec>/<run-id>
        path = m.group(1).rstrip(".-")
        if path.endswith("/") and path.count("/") == 1:
            continue  # a bare top folder ("checker/")
        if path.startswith("results/") and not path.startswith("results/examples"):
            continue  # what runs write (results/regress.xml, results/<spec>/...)
        found.add(path)
    return found


def test_the_scan_finds_citations():
    """Not vacuous: known citations are seen, a missing one would be."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/ARCHITECTURE.md" in citations(readme)
    assert citations("see checker/spark/engine.py, and checker/search/engine.py.") == {
        "checker/spark/engine.py", "checker/search/engine.py"}
    assert citations("../shared/seeds/INDEX.md /tmp/specs/a.toml checker.search.engine") == set()


def test_every_cited_path_exists():
    missing = []
    this = Path(__file__).resolve()
    for path in _texts():
        if path.resolve() == this:
            continue
        for cited in sorted(citations(path.read_text(encoding="utf-8"))):
            if cited in NOT_FILES or (ROOT / cited).exists():
                continue
            missing.append(f"{path.relative_to(ROOT)}: {cited}")
    assert missing == []


# ---- cited documents: public ones only (docs/sources.md) ----------------------
# Protocol prose is cited by what a user can open: the protocol description in
# Vanlightly/kafka-tlaplus by version and section, the Apache wiki pages and
# KIPs by name. A private document's number ("seed" and a number) is not.
PRIVATE = re.compile(r"\bseeds?[ _-]*0\d\d", re.IGNORECASE)
TEXT_SUFFIXES = {".md", ".py", ".toml", ".c", ".txt", ".cfg", ".json", ".html", ".js", ".css", ".sh", ""}


def _project_text_files():
    """Every file of the repository that is text (git's list when there is one)."""
    import subprocess
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not {".git", ".venv"} & set(p.relative_to(ROOT).parts)]
    for name in names:
        path = ROOT / name
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            yield path


def test_the_private_pattern_is_seen():
    assert PRIVATE.search("as seed " + "002 section 2.8 says")
    assert PRIVATE.search("(Seeds" + " 003, 001)")
    assert not PRIVATE.search("seed 1, swarm") and not PRIVATE.search("seeded bugs 002")


def test_no_text_cites_a_private_document():
    found = []
    for path in _project_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if PRIVATE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert found == [], "cite docs/sources.md's public documents instead"


def test_sources_page_names_each_public_document():
    text = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    for name in ("kafka_data_replication/kraft/v3.5/description/",
                 "kafka_data_replication/kraft/kip-966/description/", "kraft/kip_996",
                 "Kafka Replication", "Kafka Detailed\n  Replication Design V2", "KIP-101"):
        assert name in text, name


# ---- no internal references ----------------------------------------------------
# A tracker's issue number and "the seed(s)" as a document mean nothing to a
# user: cite the public source (docs/sources.md), a KIP or a Kafka JIRA
# (KAFKA-7152). A random run's seed is "the run's seed". Lines are joined
# (comment markers dropped), so a reference split over two lines is seen too.
INTERNAL = re.compile(r"\bthe seeds?\b|\bissue \d+\b|\bseeds?\W{0,3}0\d\d", re.IGNORECASE)


def _joined(text: str) -> str:
    return re.sub(r"\s*\n\s*(?:#+\s*)?", " ", text)


def test_the_internal_pattern_is_seen():
    assert INTERNAL.search(_joined("as the " + "seed's rule says")) and INTERNAL.search("(issue " + "16)")
    assert INTERNAL.search(_joined("two leaders, seed\n    # " + "003 says"))
    assert not INTERNAL.search("the run's seed, swarm") and not INTERNAL.search('"Open Issues" item 2')
    assert not INTERNAL.search("KAFKA-7152") and not INTERNAL.search("seeded bugs")


def test_no_text_makes_an_internal_reference():
    this = Path(__file__).resolve()
    found = []
    for path in _project_text_files():
        if path.resolve() == this:
            continue
        try:
            text = _joined(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(ROOT)}: ...{text[max(0, m.start() - 40):m.end() + 20]}..."
                  for m in INTERNAL.finditer(text)]
    assert found == [], "cite docs/sources.md's public documents instead"
