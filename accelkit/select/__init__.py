"""From requirements to a ranked shortlist with reasons.

:func:`rank` applies hard constraints first -- precision supported, model fits on
the allowed devices, ecosystem must-haves, power envelope, budget, segment and
deployment, time or latency target -- and records for each excluded device the
constraint it failed. The remaining devices get a weighted score over five
criteria (time to result, cost per unit of work, compute per watt, ecosystem
fit, memory headroom) and a one-line reason. Everything is vectorised over the
catalogue.

:func:`sensitivity` asks which assumption would change the winner, and at what
value.

Scoring: each criterion is scaled to [0, 1] across the shortlist (logarithmically
for time and cost, which span orders of magnitude; best = 1); the score is the
weighted mean × 100. A missing figure scores 0 on that criterion and the reason
says so. References: multi-criteria decision analysis with weighted sums
(Triantaphyllou, *Multi-Criteria Decision Making Methods*, Springer 2000, ch. 2).
"""

# the public names, and the private ones a caller or test may reach through accelkit.select
from .grid import rank_grid
from .nearest import nearest_feasible
from .ranking import _ECOSYSTEM_CACHE, _column, _ecosystem_scores, _figures, _reason, rank, shortlist  # noqa: F401
from .robustness import SENSITIVITY_RANGES, rank_stability, sensitivity  # noqa: F401
from .scoring import _UNKNOWN_WORDS, CRITERIA, DEFAULT_WEIGHTS, _scale, _weights, weighted_score  # noqa: F401

__all__ = ["CRITERIA", "DEFAULT_WEIGHTS", "nearest_feasible", "rank", "rank_grid", "rank_stability", "sensitivity",
           "shortlist", "weighted_score"]
