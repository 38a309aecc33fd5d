"""The speed figures live in ``python -m benchmarks``, not in timing tests; these tests only check that the
cheap benchmark groups still run against the package as it is (a renamed function once broke
``benchmarks.formulas`` unnoticed, so the command anyone should be able to run stopped at its first group)."""

from __future__ import annotations

import importlib

import pytest


def test_the_formula_benchmarks_run_against_the_current_api(capsys):
    from benchmarks import formulas

    results = formulas.bench_catalogue_x_workloads(n_workloads=10) + formulas.bench_widget_step()
    assert [r["name"].split(":")[0] for r in results] == [
        "roofline + decode bounds", "widget-sized recomputation (all devices, one scenario)"], results
    assert all(r["best_s"] > 0 for r in results), results
    assert "roofline + decode bounds" in capsys.readouterr().out


@pytest.mark.parametrize("group", ["formulas", "projection", "panels", "notebooks", "rank", "report", "app",
                                   "app_load", "mutations"])
def test_every_benchmark_group_imports_and_has_a_main(group):
    module = importlib.import_module(f"benchmarks.{group}")
    assert callable(getattr(module, "main", None)), f"benchmarks.{group} has no main()"
