"""`kmc graph`: string values with control characters (a NUL, an ANSI
escape, CR, a C1 control), quotes, backslashes, newlines, < and & give a
well-formed GraphML file (XML 1.0: the characters it cannot hold are written
as visible \\uXXXX text) and a DOT file whose quoted strings are closed and
carry no raw control character."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.graph_cli import _dot_quote, visible

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
NS = "{http://graphml.graphdrawing.org/xmlns}"

VALUES = {
    "nul": "\u0000",
    "ansi": "\u001b[31mred\u001b[0m",
    "quotes and markup": "a\"b'<c>&d;]]>",
    "backslash": "x\\",
    "newline and cr": "l1\nl2\r",
    "c1 and del": "\u009b\u007f",
    "vertical tab, form feed": "\u000b\u000c",
    "non-characters": "\ufffe\uffff",
}


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _graph(tmp_path, value: str, fmt: str) -> str:
    out = tmp_path / f"g.{fmt}"
    rm = json.dumps([value, "r2"])  # a JSON array of strings is a TOML array too
    r = _invoke("graph", TWOPHASE, "--set", f"RM={rm}", "--format", fmt, "--out", out)
    assert r.exit_code == 0, (r.output, r.exception)
    return out.read_text(encoding="utf-8")


def _raw_controls(text: str) -> set[str]:
    return {c for c in text if (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F
            or ord(c) in (0xFFFE, 0xFFFF)}


@pytest.mark.parametrize("name", VALUES)
def test_graphml_is_well_formed_xml(tmp_path, name):
    value = VALUES[name]
    text = _graph(tmp_path, value, "graphml")
    root = ET.fromstring(text)  # raises on invalid XML
    texts = [d.text or "" for d in root.iter(f"{NS}data")]
    shown = visible(value)
    assert any(shown in t for t in texts), shown
    assert not _raw_controls("".join(texts))
    # networkx reads it back: as many states as the dot output has
    g = nx.read_graphml(tmp_path / "g.graphml", force_multigraph=True)
    assert g.number_of_nodes() > 1


def _dot_strings(text: str) -> list[str]:
    """The quoted strings of a DOT file; asserts every quote is closed."""
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    leftover = re.sub(r'"((?:[^"\\]|\\.)*)"', "", text)
    assert '"' not in leftover, leftover[:500]
    return strings


@pytest.mark.parametrize("name", VALUES)
def test_dot_quoting(tmp_path, name):
    value = VALUES[name]
    text = _graph(tmp_path, value, "dot")
    assert not _raw_controls(text)
    lines = text.splitlines()
    assert lines[0].startswith("digraph ") and lines[-1] == "}"
    for line in lines[3:-1]:  # one statement a line: newlines in values are \l
        assert line.rstrip().endswith("];"), line
    strings = _dot_strings(text)
    assert any(_dot_quote(visible(value))[1:-1] in s for s in strings)


def test_visible_escapes_only_what_it_must():
    assert visible("plain <&> \"ok\" \\ tab\there\nnew é 中 \U0001F600") == \
        "plain <&> \"ok\" \\ tab\there\nnew é 中 \U0001F600"
    assert visible("\u0000\u001b[0m\r\u009b\ud800\uffff") == "\\u0000\\u001b[0m\\u000d\\u009b\\ud800\\uffff"


def test_dot_quote():
    assert _dot_quote('a"b\\c\nd\u0000') == '"a\\"b\\\\c\\ld\\\\u0000"'


def test_graphml_of_a_graph_with_a_lone_surrogate_writes(tmp_path):
    """A value TOML cannot spell (a lone surrogate, from a model's own
    strings) still gives a file that encodes as UTF-8 and parses."""
    from checker.front.graph_cli import write
    g = nx.MultiDiGraph(model="m/v")
    g.add_node(0, level=0, initial=True, label="x=\ud800\u0000", violates="")
    g.add_edge(0, 0, label="Act(\u001b)")
    out = tmp_path / "g.graphml"
    write(g, "graphml", out)
    root = ET.parse(out).getroot()
    assert any("\\ud800\\u0000" in (d.text or "") for d in root.iter(f"{NS}data"))
    write(g, "dot", tmp_path / "g.dot")
    assert "\\\\ud800" in (tmp_path / "g.dot").read_text(encoding="utf-8")
