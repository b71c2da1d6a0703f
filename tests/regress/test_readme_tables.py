"""The result tables of docs/findings.md (and of any other page with the
marker blocks: README.md and docs/*.md) are generated from the specs' [expect]
tables (`kmc regress --markdown`, `make docs`), which CI checks (`make test`
runs the whole regression set): a table that differs from what the specs say
fails here, so the docs cannot drift from what is checked."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.regress import (TABLE_BEGIN, TABLE_END, fault_budget, find_specs, markdown_tables,
                             readme_blocks, render_readme, spec_group)

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
README = ROOT / "README.md"
FINDINGS = ROOT / "docs" / "findings.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_the_result_tables_are_what_the_specs_say():
    assert readme_blocks(FINDINGS.read_text(encoding="utf-8")), "docs/findings.md has no generated table"
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if not readme_blocks(text):
            continue
        assert render_readme(text, SPECS) == text, (
            f"{page.relative_to(ROOT)}'s result tables differ from the specs' [expect]: run `make docs` "
            f"(kmc regress specs --update-readme {page.relative_to(ROOT)}) and commit it")


def test_every_spec_group_has_a_table_in_the_findings():
    """Each folder of specs/ (and each top-level prefix) is shown in docs/findings.md."""
    shown = set()
    for _, _, groups in readme_blocks(FINDINGS.read_text(encoding="utf-8")):
        shown |= set(groups or [])
    assert {spec_group(p, SPECS) for p in find_specs(SPECS)} <= shown


def test_a_new_spec_folder_needs_no_readme_edit(tmp_path):
    """A spec group a page shows no table of (a new model's folder) is still
    run by `kmc regress` and listed by --markdown, and the page's other tables
    stay what the specs say: rendering leaves it alone. (docs/findings.md
    must show every group: test_every_spec_group_has_a_table_in_the_findings;
    a marker block naming it, then `make docs`.)"""
    specs = tmp_path / "specs"
    (specs / "newmodel").mkdir(parents=True)
    (specs / "toy-diehard.toml").write_text((SPECS / "toy-diehard.toml").read_text())
    (specs / "newmodel" / "tp.toml").write_text((SPECS / "toy-twophase.toml").read_text())
    text = f"intro\n{TABLE_BEGIN} toy -->\n{TABLE_END}\n"
    text = render_readme(text, specs)
    assert "`toy-diehard`" in text and "newmodel" not in text
    assert render_readme(text, specs) == text
    assert "**specs/newmodel/** (1 spec)" in markdown_tables(specs)
    assert [spec_group(p, specs) for p in find_specs(specs)] == ["newmodel", "toy"]


def test_fault_budget_summary():
    constants = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A", "B"], "MinISR": 1,
                 "InitIsrSize": 2, "FlushPolicy": "every_n", "FlushEveryN": 2, "SegmentSize": 1,
                 "ControlledShutdownLimit": 1, "ProcessCrashLimit": 0, "PowerLossLimit": 2,
                 "CorrelatedPowerLoss": True, "FenceBrokerLimit": 1, "LeaderShrinkIsrLimit": 0,
                 "ReassignmentLimit": 0, "UncleanRecoveryStrategy": "proactive", "Mutants": []}
    assert fault_budget("kraft", "kip966_storage", constants) == (
        "2 brokers; RF 2; MinISR 1; ISR 2; 2 values; flush every_n (N 2); ControlledShutdown 1; "
        "PowerLoss 2; CorrelatedPowerLoss true; FenceBroker 1; recovery proactive")
    assert fault_budget("twophase", "standard", {"RM": ["r1", "r2", "r3"], "RMCount": 0}) == "-"


def test_markdown_and_update_readme(tmp_path):
    specs = tmp_path / "specs"
    (specs / "sub").mkdir(parents=True)
    (specs / "toy-diehard.toml").write_text((SPECS / "toy-diehard.toml").read_text())
    (specs / "sub" / "tp.toml").write_text((SPECS / "toy-twophase.toml").read_text().replace(
        'distinct = 288', 'distinct = 288\nsometimes = ["AllCommitted"]'))
    result = kmc("regress", specs, "--markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout == markdown_tables(specs)
    lines = result.stdout.splitlines()
    assert lines[0] == "**specs/sub/** (1 spec)" and "**specs/toy-*.toml** (1 spec)" in lines
    row = next(line for line in lines if "`sub/tp`" in line)
    assert row == ("| `sub/tp` | twophase/standard | - | all 2 invariants | "
                   "pass, every reachable state | all | 288 | AllCommitted |")
    assert "| `toy-diehard` | diehard/standard | - | all 2 invariants | violated: NotSolved | 6 | - | - |" \
        in lines
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{TABLE_BEGIN} toy -->\nstale\n{TABLE_END}\nmiddle\n"
                      f"{TABLE_BEGIN} -->\n{TABLE_END}\nend\n")
    result = kmc("regress", specs, "--update-readme", readme)
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    assert "stale" not in text and text.startswith("intro\n") and text.endswith(f"{TABLE_END}\nend\n")
    assert text.count("`toy-diehard`") == 2 and text.count("`sub/tp`") == 1
    assert render_readme(text, specs) == text
    assert "already up to date" in kmc("regress", specs, "--update-readme", readme).stderr


def test_bad_table_input_is_one_line_and_exit_2(tmp_path):
    readme = tmp_path / "README.md"
    for text, words in ((f"{TABLE_BEGIN} nosuch -->\n{TABLE_END}\n", "no spec group 'nosuch'"),
                        (f"{TABLE_BEGIN} -->\nno end\n", "without its end marker"),
                        ("no block\n", "no generated block")):
        readme.write_text(text)
        result = kmc("regress", SPECS, "--update-readme", readme)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and words in result.stderr
        assert readme.read_text() == text
