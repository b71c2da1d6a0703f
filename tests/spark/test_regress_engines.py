"""A spec that names Spark among its `engines`: `kmc regress` runs it on the
default engine and on Spark (the running session), and both must agree."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_regress_compares_spark_with_the_default_engine(spark, tmp_path):
    text = (ROOT / "specs" / "toy-twophase.toml").read_text()
    spec = tmp_path / "tp.toml"
    spec.write_text(text.replace('model = "twophase"', 'model = "twophase"\nengines = ["spark", "local"]'))
    result = CliRunner().invoke(cli, ["regress", str(spec)])
    assert result.exit_code == 0, result.output
    assert "(auto = spark = local)" in result.stdout
