"""From requirements to a right-sized, costed shortlist with reasons.

:func:`rank` applies the hard limits first, three-valued: a device fails a limit it
is known to miss (excluded, with the reason), cannot be verified where a figure the
limit needs is unknown (shown apart, never shortlisted, with what would settle it),
or passes. The limits: the person's device, vendor and market filters (export
controls from ``data/device_facts.csv``), precision (fp16 standing in for bf16 and
back), the serving targets, segment and deployment, memory, the device count
(``n_devices`` caps every workload), ecosystem must-haves, power envelope, time or
latency target, budget. The shortlist is scored on five criteria: the margin over
the target (counted only up to ``target_headroom``), the cost of meeting the demand
(the devices needed, bought as purchasable units or rented by the scenario's cloud
price policy), the work per joule (the projected rate over the power the device runs at),
ecosystem fit and memory headroom.

:func:`rank_stability` draws the projection's and the prices' ranges;
:func:`headline` names the robust winner or says the call is too close;
:func:`sensitivity` asks which assumption would change the winner, and at what
value; :func:`nearest_feasible` the smallest change that admits another device;
:func:`decision_summary` the one-page decision a buyer signs (what to buy, the total,
the runners-up, the risks, what was assumed), which the app and the report render.

Scoring: each criterion is scaled to [0, 1] across the shortlist (cost on a log
scale; best = 1); the score is the weighted mean × 100 of the known criteria (an
unknown one drops out and the reason says so). References: multi-criteria decision
analysis with weighted sums (Triantaphyllou, *Multi-Criteria Decision Making
Methods*, Springer 2000, ch. 2); rank acceptability (Lahdelma & Salminen 2001).
"""

# the public names, and the private ones a caller or test may reach through accelkit.select
from .grid import rank_grid
from .headline import ROBUST_SHARE, headline
from .nearest import nearest_feasible
from .ranking import STATUSES, _ECOSYSTEM_CACHE, _column, _ecosystem_scores, _figures, _reason, rank, shortlist  # noqa: F401
from .robustness import SENSITIVITY_RANGES, rank_stability, sensitivity  # noqa: F401
from .summary import decision_summary, plan_words, range_words
from .scoring import _UNKNOWN_WORDS, CRITERIA, DEFAULT_WEIGHTS, _scale, _weights, speed_score, weighted_score  # noqa: F401

__all__ = ["CRITERIA", "DEFAULT_WEIGHTS", "ROBUST_SHARE", "STATUSES", "decision_summary", "headline", "nearest_feasible",
           "plan_words", "rank", "rank_grid", "rank_stability", "range_words", "sensitivity", "shortlist", "speed_score",
           "weighted_score"]
