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
