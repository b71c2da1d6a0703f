"""The generated pages are what their generators write now (`make docs`):
docs/models.md is `kmc list --markdown`, bench/README.md is bench/readme.py's
page of the scripts' docstrings. A model constant, property or bench script
changed without `make docs` fails here. (docs/findings.md's tables:
tests/regress/test_readme_tables.py.)"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.model_docs import models_markdown

ROOT = Path(__file__).resolve().parents[2]


def _kmc(*args):
    return CliRunner().invoke(cli, list(args))


def _bench_readme():
    spec = importlib.util.spec_from_file_location("bench_readme", ROOT / "bench" / "readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_models_page_is_kmc_list():
    result = _kmc("list", "--markdown")
    assert result.exit_code == 0, result.output
    assert (ROOT / "docs" / "models.md").read_text(encoding="utf-8") == result.stdout, (
        "docs/models.md differs from `kmc list --markdown`: run `make docs` and commit it")


def test_models_page_has_every_model_variant_and_constant():
    """Not vacuous: the page is made from the same listing as --json."""
    listing = json.loads(_kmc("list", "--json").stdout)["models"]
    page = models_markdown(listing)
    for m in listing:
        assert f"## {m['model']}\n" in page
        for v in m["variants"]:
            assert f"### `{m['model']}` variant `{v['variant']}`" in page
            for c in v["constants"]:
                assert f"| `{c['name']}` |" in page
    assert "| `AvoidLastReplicaStanding` | bool | `true` |" in page


def test_list_markdown_and_json_together_is_bad_input():
    result = _kmc("list", "--json", "--markdown")
    assert result.exit_code == 2 and "choose one" in result.output


def test_bench_readme_is_the_scripts_docstrings():
    module = _bench_readme()
    page = module.page()
    assert (ROOT / "bench" / "README.md").read_text(encoding="utf-8") == page, (
        "bench/README.md differs from bench/readme.py's page: run `make docs` and commit it")
    for path in module.scripts():
        assert f"## {path.name}\n" in page
    assert "## readme.py" not in page and "## tlc_side_by_side.py" in page
