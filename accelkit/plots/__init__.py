"""Plotly figure builders: functions of data in, a ``plotly.graph_objects.Figure`` out.

No widgets here, so the same figures serve JupyterLab, Voilà and static reports.
Every axis title carries its unit; hover text carries the source of each figure.
One module per chapter; everything is re-exported here (``accelkit.plots.roofline_chart``).
"""

from ._common import PALETTE, TEMPLATE, VENDOR_COLORS, empty_figure, layout, unit_of, vendor_color
from .catalogue import catalogue_scatter, efficiency_bar
from .cluster import accumulation_chart, scaling_chart
from .decision import score_breakdown_chart, tornado_chart
from .demand import devices_needed_chart, memory_breakdown_chart, seed_rule_chart
from .edge import edge_fit_chart, edge_units_chart
from .energy_tco import cumulative_cost_chart, job_energy_chart, latency_chart
from .precision import loss_scaling_chart, precision_memory_chart, precision_peaks_chart
from .monitor import rightsize_chart, utilization_histogram, utilization_timeline
from .probes import matmul_shapes_chart, precision_chart, probe_vs_datasheet_bar, utilization_chart
from .roofline import bert_claim_chart, roofline_chart
from .ecosystem import ecosystem_heatmap, ecosystem_score_chart
from .validation import validation_chart
