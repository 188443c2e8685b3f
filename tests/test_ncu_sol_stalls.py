"""Issue 14 items 2 and 5: the bound label follows ncu's own SOLBottleneck thresholds, and warp
stalls are given as ncu defines them (% of warp-active cycles) with the coverage of the
captured reasons. Real exports in tests/fixtures/ncu (tests/fixtures/SOURCES.md) and small cases.
"""

from __future__ import annotations

import pytest

from conftest import ncu_text
from ikreport.analysis.ncu import read_exports
from ikreport.analysis.ncu_summary import bound_label
from ikreport.kinds.ncu_profile import CAVEAT_BOUND, SOL_SIDE, _ncu_rules_text, kernel_label


def profile(name: str):
    return read_exports({name: ncu_text(name)})


def sol_branch(launch: dict) -> str:
    """The label of the branch ncu's SOLBottleneck rule took, from its quoted finding."""
    [finding] = [r["description"] for r in launch["ncu_rules"] if r["rule"] == "SOLBottleneck"]
    return next(label for opening, label in SOL_SIDE.items() if finding.startswith(opening))


@pytest.mark.parametrize("name,label", [
    ("ncu_details_llmperfopt_k0001_metrics.csv", "latency-bound"),  # ncu: grid too small, 0.7 waves
    ("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv", "memory-bound"),  # ncu: memory more utilized (L2)
    ("ncu_details_nsightful_copy_blocked_base_units.csv", "memory-bound"),  # ncu: memory more utilized (DRAM)
])
def test_the_label_takes_the_branch_ncu_took_on_every_real_export_with_its_rule(name, label):
    [launch] = profile(name).launches
    assert launch["bound"] == sol_branch(launch) == label
    assert bound_label(launch["memory_pct"], launch["sm_pct"]) == label


def test_the_caveat_names_ncus_rule_and_its_thresholds():
    assert "ncu's SOLBottleneck thresholds" in CAVEAT_BOUND
    assert "below 60%" in CAVEAT_BOUND and "80% or more" in CAVEAT_BOUND and "10 points" in CAVEAT_BOUND


def test_a_record_labelled_under_the_old_60_40_rule_reads_by_ncus_rule():
    # memory 50%, SM 10% was "mixed" under the 60/40 rule of thumb; ncu calls both below 60% latency issues
    launches = [{"kernel": "k", "memory_pct": 50, "sm_pct": 10, "bound": "mixed"},
                {"kernel": "k", "memory_pct": 65, "sm_pct": 62, "bound": "memory-bound"},
                {"kernel": "k", "memory_pct": 40, "sm_pct": 30, "bound": "mixed"}]
    data = {"launches": launches, "launches_complete": True}
    assert kernel_label(data, {"kernel": "k", "bound": "mixed"}) == ("latency-bound", 2, 3)


def test_a_disagreement_with_ncus_branch_is_said():
    first = {"memory_pct": 70.0, "sm_pct": 20.0, "ncu_rules": [{
        "rule": "SOLBottleneck", "type": "OPT",
        "description": "This kernel exhibits low compute throughput and memory bandwidth utilization relative to "
                       "the peak performance of this device."}]}
    text = _ncu_rules_text("k", {}, first)
    assert text.endswith("(ikreport's label, memory-bound, disagrees with ncu's SOLBottleneck rule, "
                         "which finds it latency-bound.)")
    first["memory_pct"] = 50.0
    assert "disagrees" not in _ncu_rules_text("k", {}, first)
