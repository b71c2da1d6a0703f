"""`kmc list` lists each model's seeded bugs (the constant Mutants), once per
model in text, per variant in --json; every variant builds with its defaults."""
from __future__ import annotations

import json

from click.testing import CliRunner

from checker.front.cli import cli
from model.kraft.mutants import MUTANTS as KRAFT
from model.kraft_cluster.mutants import MUTANTS as CLUSTER
from model.kraft_quorum.mutants import MUTANTS as QUORUM


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_text_lists_every_mutant_once():
    out = run("list").stdout
    assert "cannot build" not in out   # (a projection's name once shadowed the model's)
    assert out.count("  mutants (seeded bugs: the constant Mutants") == 3   # kraft, kraft_quorum, kraft_cluster
    for name, (site, doc) in {**KRAFT, **QUORUM, **CLUSTER}.items():
        assert out.count(f"    {name}: {doc} (the reference's guard: {site})") == 1, name
    assert "mutants" not in run("list", "twophase").stdout.lower()


def test_json_lists_them_per_variant():
    models = {m["model"]: m for m in json.loads(run("list", "--json").stdout)["models"]}
    for variant in models["kraft"]["variants"]:
        assert [m["name"] for m in variant["mutants"]] == list(KRAFT)
    for variant in models["kraft_quorum"]["variants"]:
        assert [m["name"] for m in variant["mutants"]] == list(QUORUM)
    assert all("mutants" not in v for v in models["zk"]["variants"])
