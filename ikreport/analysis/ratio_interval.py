"""The ratio of medians B/A with a 95% confidence interval, and the verdict it supports (pure).

Input: two samples of positive durations (µs), A (before) and B (after); each value is one
independent unit: a run's median when several runs a side are compared, else one launch.

The interval is scipy's bootstrap (BCa, resampling each side on its own) of median(B) /
median(A), with a fixed seed so the same samples always give the same interval. The verdict
is the rule docs/compare.md states:

- FASTER when the whole interval lies below 1 - threshold, SLOWER when it lies above
  1 + threshold;
- SAME when the whole interval lies within [1 - threshold, 1 + threshold] (two one-sided
  tests, TOST, each at 2.5%: an equivalence shown, not a difference missed);
- UNDECIDED otherwise, and whenever a side has fewer than ``min_samples`` units.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 20260101  # fixed: a comparison record is a pure function of what it cites
METHOD = f"bootstrap (BCa) of the ratio of medians, {RESAMPLES} resamples, seed {SEED}"  # as records state it
# what 'ikreport compare' calls a change by default, and history pages always
DEFAULT_THRESHOLD_PCT = 5.0
DEFAULT_MIN_SAMPLES = 3
# BCa's jackknife is quadratic in the sample size; beyond this many values a side the
# percentile interval (linear) is used, and the record says so
MAX_BCA = 2000
BATCH_VALUES = 4_000_000  # resampled values held at once (32 MB): a 20,000-launch kernel stays small


@dataclass(frozen=True)
class RatioInterval:
    """median(B) / median(A) and its 95% interval (None when a side has a single value)."""

    ratio: float
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    method: str  # "BCa", "percentile", or "none"


def ratio_interval(a: Sequence[float], b: Sequence[float]) -> RatioInterval:
    """The ratio of medians B/A with its bootstrap interval (see the module docstring)."""
    from scipy import stats

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ratio = float(np.median(xb) / np.median(xa))
    if len(xa) < 2 or len(xb) < 2:
        return RatioInterval(ratio, None, None, len(xa), len(xb), "none")

    def statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(y, axis=axis) / np.median(x, axis=axis)

    low, high, used = _interval(stats, (xa, xb), statistic, max(len(xa), len(xb)))
    if not (np.isfinite(low) and np.isfinite(high)):  # every resample gave the same ratio
        low = high = ratio
    return RatioInterval(ratio, min(low, ratio), max(high, ratio), len(xa), len(xb), used)


def median_interval(values: Sequence[float]) -> tuple[float, float | None, float | None]:
    """(median, low, high): one sample's median with its distribution-free 95% interval, the
    order statistics x(l) and x(n+1-l) where l is the 2.5% quantile of Binomial(n, 1/2): it
    covers the median with at least 95% probability whatever the distribution, exactly and
    at once, without a bootstrap of each profile's every kernel. With fewer than six
    values no two order statistics reach 95%, and the interval is the whole range (None, None
    with a single value)."""
    x = np.sort(np.asarray(values, dtype=float))
    median = float(np.median(x))
    if len(x) < 2:
        return median, None, None
    low = _lower_rank(len(x))
    return median, float(x[low - 1]), float(x[len(x) - low])


@lru_cache(maxsize=4096)
def _lower_rank(n: int) -> int:
    """The 1-based rank of the median interval's low end for ``n`` values: the 2.5% quantile of
    Binomial(n, 1/2), the least k whose CDF reaches it (1 below six values). The CDF is summed
    from the terms' logarithms, smallest first; terms below n/2 - 10 sqrt(n) are left out, as
    together they hold less than exp(-200) (Hoeffding). Not scipy.special.bdtr, whose import
    is the slowest part of a rebuild whose history changes; the ranks agree (tests)."""
    target = (1 - CONFIDENCE) / 2
    top, halves = math.lgamma(n + 1), n * math.log(2)
    cdf = 0.0
    for k in range(max(0, n // 2 - 10 * math.isqrt(n) - 10), n // 2 + 1):
        cdf += math.exp(top - math.lgamma(k + 1) - math.lgamma(n - k + 1) - halves)
        if cdf >= target:
            return max(k, 1)
    return n // 2 + 1


def beyond(n_a: int, median_a: float, n_b: int, median_b: float, threshold_pct: float, min_samples: int) -> bool:
    """Whether ``call`` could find FASTER or SLOWER for samples of these sizes and medians: only
    when each side has enough values and the ratio of medians itself lies beyond the threshold,
    since the interval always holds the ratio. Lets a caller that marks only changes skip the
    bootstrap."""
    t = threshold_pct / 100
    if min(n_a, n_b) < max(min_samples, 2):
        return False
    return not 1 - t <= median_b / median_a <= 1 + t


def _interval(stats: Any, samples: tuple[np.ndarray, ...], statistic: Any, largest: int) -> tuple[float, float, str]:
    """(low, high, method) of the bootstrap interval: BCa, else (BCa undefined, or a sample
    too large for its jackknife) percentile; NaN when every resample gives the same value."""
    low = high = float("nan")
    method = "percentile"
    for method in ("BCa", "percentile") if largest <= MAX_BCA else ("percentile",):
        with warnings.catch_warnings():
            # samples without spread make BCa undefined (scipy warns, gives NaN): try the next
            warnings.simplefilter("ignore")
            ci = stats.bootstrap(samples, statistic, confidence_level=CONFIDENCE, n_resamples=RESAMPLES,
                                 method=method, vectorized=True, paired=False, batch=max(1, BATCH_VALUES // largest),
                                 rng=np.random.default_rng(SEED)).confidence_interval
        low, high = float(ci.low), float(ci.high)
        if np.isfinite(low) and np.isfinite(high):
            return low, high, method
    return low, high, method


def call(interval: RatioInterval, threshold_pct: float, min_samples: int, unit: str = "values") -> tuple[str, str]:
    """(verdict, reason) of an interval against ``threshold_pct`` (see the module docstring);
    ``unit`` names what a sample counts (runs, launches) in the reason."""
    t = threshold_pct / 100
    if min(interval.n_a, interval.n_b) < max(min_samples, 2) or interval.low is None or interval.high is None:
        return "UNDECIDED", f"fewer than {max(min_samples, 2)} {unit} on a side"
    if interval.high < 1 - t:
        return "FASTER", f"the whole interval is below {1 - t:.3g}"
    if interval.low > 1 + t:
        return "SLOWER", f"the whole interval is above {1 + t:.3g}"
    if 1 - t <= interval.low and interval.high <= 1 + t:
        return "SAME", f"the whole interval is within {threshold_pct:g}% of 1"
    return "UNDECIDED", f"the interval is neither wholly beyond nor wholly within {threshold_pct:g}% of 1"

