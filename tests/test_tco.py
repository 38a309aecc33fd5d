"""Edge / cloud / on-prem TCO against a case computed by hand.

Source of the definitions: total cost of ownership as capital (purchase, replacement
at end of life, straight-line residual value) plus operating cost (energy × PUE,
maintenance, rent) over a horizon, discounted at a yearly rate -- Barroso, Hölzle &
Ranganathan, *The Datacenter as a Computer*, 3rd ed., Morgan & Claypool 2018,
ch. 6 "Modeling Costs" (doi:10.2200/S00874ED3V01Y201809CAC046); PUE as defined by The
Green Grid (White Paper #49, 2012). No published worked example is reproduced: the
cases below are computed by hand from those definitions (internal consistency);
$0.526/h is the catalogue's on-demand T4 price.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import tco


def test_hand_computed_edge_vs_cloud_case():
    """Hand-worked case from the TCO definitions (Barroso et al. 2018, ch. 6); break-even solved by hand."""
    # 10 edge boxes at $2,000, 60 W, 24 h/day, $0.10/kWh, PUE 1, 5 %/year maintenance, 36 months, no residual:
    #   purchase 20,000; energy 10·60 W·24 h·30.4375 d = 438.3 kWh/month -> $43.83/month;
    #   maintenance 0.05·20,000/12 = $83.33/month; 36 months: 20,000 + 36·(43.83 + 83.33) = $24,577.8
    edge = tco.edge("edge", 10, 2000, 60, electricity_usd_per_kwh=0.10, maintenance_fraction_per_year=0.05)
    # 3 instances at $0.526/h, 24 h/day: 0.526·3·24·30.4375 = $1,152.7/month; egress 1,000 GB·$0.09 = $90
    cloud = tco.cloud("cloud", 0.526, instances=3, egress_gb_per_month=1000, egress_usd_per_gb=0.09)
    table = tco.compare([edge, cloud], horizon_months=36).set_index("option")
    assert table.loc["edge", "total_usd"] == pytest.approx(20000 + 36 * (43.83 + 83.333), rel=1e-4)
    assert table.loc["cloud", "total_usd"] == pytest.approx(36 * (0.526 * 3 * 24 * 30.4375 + 90), rel=1e-6)
    # edge costs more up front and less per month: it breaks even in month 18
    #   20,000 + m·127.16 <= m·1,242.69  ->  m >= 17.93
    assert table.loc["edge", "break_even_month_vs_cloud"] == 18
    saving = 1 - table.loc["edge", "total_usd"] / table.loc["cloud", "total_usd"]
    assert table.loc["edge", "saving_vs_most_expensive"] == pytest.approx(saving)


def test_replacement_and_residual_value():
    """Hand-worked: re-purchase at end of life and straight-line residual value (Barroso et al. 2018, ch. 6, depreciation)."""
    # lifetime 2 years inside a 3-year horizon: bought at month 0 and month 24
    box = tco.edge("box", 1, 1000, 0, lifetime_years=2, maintenance_fraction_per_year=0)
    stream = tco.cost_stream(box, 36)
    assert stream.loc[0, "purchase"] == 1000 and stream.loc[24, "purchase"] == 1000
    # the second box is half used at the end: straight-line value 500 credited back
    assert stream.loc[36, "residual"] == pytest.approx(-500)
    assert stream["cumulative"].iloc[-1] == pytest.approx(1500)


def test_discounting_lowers_future_costs():
    """Present value factor (1 + r)^(−months/12) (standard discounting; Barroso et al. 2018, ch. 6); hand-worked month 12."""
    c = tco.cloud("c", 1.0)
    plain = tco.compare([c], 36)["total_usd"][0]
    npv = tco.compare([c], 36, discount_rate_per_year=0.08)["total_usd"][0]
    assert npv < plain
    assert tco.cost_stream(c, 12, 0.08).loc[12, "discounted"] == pytest.approx(24 * 30.4375 / 1.08)


def test_monthly_cumulative_is_long_format():
    """Internal consistency: the cumulative table is long-format and non-decreasing until the residual credit."""
    table = tco.monthly_cumulative([tco.cloud("a", 1.0), tco.edge("b", 1, 100, 10)], 12)
    assert set(table.columns) >= {"option", "kind", "month", "cumulative_usd"}
    assert len(table) == 2 * 13
    # costs only accumulate -- except the last month, where owned hardware still worth
    # something (straight-line value) is credited back
    running = table[table["month"] < 12]
    assert (running.groupby("option")["cumulative_usd"].diff().dropna() >= 0).all()
    last = table[(table["option"] == "b") & (table["month"] >= 11)]["cumulative_usd"].to_numpy()
    assert last[1] < last[0]


def test_break_even_month_never_and_immediately():
    """Internal consistency: break-even is the first month the cumulative costs cross, NaN when they never do."""
    assert np.isnan(tco.break_even_month([10, 20, 30], [0, 5, 10]))
    assert tco.break_even_month([0, 1, 2], [5, 6, 7]) == 0


def test_cost_per_unit_of_work():
    """Hand-worked: $1/h × 24 h × 30.4375 days (a twelfth of 365.25) / 1000 units."""
    table = tco.compare([tco.cloud("a", 1.0)], 1, work_units=1000)
    assert table.loc[0, "usd_per_unit"] == pytest.approx(24 * 30.4375 / 1000)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: tco.edge("x", 0, 100, 10), "units"),
        (lambda: tco.edge("x", 1, -100, 10), "unit_price_usd"),
        (lambda: tco.edge("x", 1, 100, 10, hours_per_day=25), "hours_per_day"),
        (lambda: tco.cloud("x", -1.0), "usd_per_hour"),
        (lambda: tco.cloud("x", 1.0, discount_fraction=1.0), "discount_fraction"),
        (lambda: tco.compare([tco.cloud("x", 1.0)], horizon_months=0), "horizon_months"),
        (lambda: tco.compare([tco.cloud("x", 1.0), tco.cloud("x", 2.0)]), "distinct names"),
        (lambda: tco.cost_stream("not an option"), "option"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    """Behaviour, not a formula: bad input raises a ValueError naming the argument (DESIGN.md conventions)."""
    with pytest.raises(ValueError, match=argument):
        call()
