"""Reference-line labels on log axes sit at log10 of the value (issue 27, point 3).

plotly.js places a shape in data units but an annotation on a log axis at log10 of its
position ("If the axis type is 'log', then you must take the log of your desired range",
plotly.js reference, layout.annotations.x); a label at the raw value stretched the precision
chart to 10^176 GB and the edge chart to 10^56 W.
"""

import math

import pandas as pd

from accelkit import plots
from accelkit.plots._common import reference_lines


def test_a_label_on_a_log_axis_is_placed_at_log10_of_the_value():
    shapes, notes = reference_lines("h", [80.0], ["H100 80 GB"], log=True)
    assert shapes[0]["y0"] == 80.0 and notes[0]["y"] == math.log10(80.0)
    shapes, notes = reference_lines("v", [33.0], ["target"], log=True)
    assert shapes[0]["x0"] == 33.0 and notes[0]["x"] == math.log10(33.0)
    _, linear = reference_lines("h", [80.0], ["H100 80 GB"])
    assert linear[0]["y"] == 80.0


def test_the_precision_and_edge_charts_keep_their_labels_inside_the_data_range():
    fig = plots.precision_memory_chart(pd.Series({"bf16": 140.0, "int8": 70.0}),
                                       pd.Series({"H100 SXM": 72.0, "H200 SXM": 127.0}), "memory")
    ys = [a["y"] for a in fig.to_dict()["layout"]["annotations"] if a.get("yref") == "y"]
    assert ys and all(math.log10(50) < y < math.log10(200) for y in ys), ys
    from accelkit import sizing
    from accelkit.catalog import load_catalog

    fig = plots.edge_fit_chart(sizing.edge_fit(load_catalog(), 10, 30), latency_ms=33.0, power_w=60.0)
    notes = fig.to_dict()["layout"]["annotations"]
    xs = [a["x"] for a in notes if a.get("xref") == "x"]
    ys = [a["y"] for a in notes if a.get("yref") == "y"]
    assert xs == [math.log10(33.0)] and ys == [math.log10(60.0)]
