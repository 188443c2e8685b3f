"""Issue 14 items 2 and 5: the bound label follows ncu's own SOLBottleneck thresholds, and warp
stalls are given as ncu defines them (% of warp-active cycles) with the coverage of the
captured reasons. Real exports in tests/fixtures/ncu (tests/fixtures/SOURCES.md) and small cases.
"""

from __future__ import annotations

import pytest

from conftest import ncu_text
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.stalls import STATES, breakdown
from ikreport.analysis.ncu.summary import bound_label
from ikreport.kinds.ncu_profile.claims import CAVEAT_BOUND, SOL_SIDE, _ncu_rules_text, kernel_label
from ikreport.kinds.ncu_profile.stalls import CAVEAT_STALLS, stalls_caveats, stalls_text


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


POLYFHE = "ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv"


def test_polyfhe_stalls_are_shares_of_warp_active_cycles_with_their_coverage():
    p = profile(POLYFHE)
    [first] = [s for s in p.launches if s["id"] == "0"]
    states = first["stall_states"]
    # 17 smsp__warp_issue_stalled_*_per_warp_active.pct rows for ID 0, selected and not_selected included
    assert states["source"] == "pct" and len(states["captured"]) == 17
    assert "selected" in states["captured"] and "not_selected" in states["captured"]
    # ncu on CC 8.9 also has branch_resolving, which this export did not collect
    assert states["missing"] == ["branch_resolving"]
    # the 17 values of ID 0 in the export add up to 94.75 (long_scoreboard 63.07, wait 9.66, selected 5.66 ...)
    assert states["coverage_pct"] == 94.8
    assert [(t["reason"], t["value"], t["share_pct"]) for t in first["top_stalls"]] == [
        ("long_scoreboard", 63.07, 63.1), ("wait", 9.66, 9.7), ("short_scoreboard", 3.82, 3.8),
        ("math_pipe_throttle", 3.43, 3.4)]  # selected (5.66) issues: not a stall
    text = stalls_text("Mult_4_iNTTPhase2_131", first)
    assert text == ("Mult_4_iNTTPhase2_131's warps are stalled for 63.1% of their warp-active cycles on long_scoreboard, "
                    "9.7% on wait, 3.8% on short_scoreboard and 3.4% on math_pipe_throttle (first launch). The 17 "
                    "captured warp states account for 94.8% of warp-active cycles; of ncu's warp states on this "
                    "architecture, the export lacks branch_resolving.")


def test_polyfhe_kernels_without_durations_say_how_the_shown_ones_were_chosen():
    data = profile(POLYFHE)
    record = {"kernels": data.kernels}
    kernel = data.kernels[0]
    assert kernel["total_us"] is None
    assert stalls_caveats(record, kernel, 5)[1] == ("The export has no kernel durations, so the kernels with claims "
                                                    "are the first 5 by name, not the ones that take the most time.")
    assert stalls_caveats(record, {**kernel, "total_us": 1.0}, 5) == [CAVEAT_STALLS]


def test_every_state_captured_gives_shares_of_their_sum():
    # cycles per issued instruction on an A100 (CC 8.0): all 18 states, so their sum is all warp-active cycles
    values = dict.fromkeys(STATES[8], 0.0) | {"long_scoreboard": 6.0, "selected": 1.0, "wait": 3.0}
    b = breakdown(values, "ratio", "8.0", 4)
    assert b.missing == () and b.coverage_pct == 100.0
    assert b.top == (("long_scoreboard", 6.0, 60.0), ("wait", 3.0, 30.0))


def test_a_state_missing_gives_no_shares_but_the_values_and_what_is_missing():
    values = {"long_scoreboard": 491.9, "lg_throttle": 437.2, "selected": 1.0}
    b = breakdown(values, "ratio", "7.5", 4)
    assert b.coverage_pct is None and "branch_resolving" in b.missing and "wait" in b.missing
    assert b.top == (("long_scoreboard", 491.9, None), ("lg_throttle", 437.2, None))
    launch = {"top_stalls": [{"reason": r, "value": v, "share_pct": p, "source": "ratio"} for r, v, p in b.top],
              "stall_states": {"source": "ratio", "captured": list(b.captured), "missing": list(b.missing),
                               "coverage_pct": None}}
    text = stalls_text("k", launch)
    assert text.startswith("k's warps stall most on long_scoreboard (491.90) and lg_throttle (437.20), in warp "
                           "cycles per issued instruction (first launch); no share of warp-active cycles is given")
    assert "The export has 3 captured warp states; of ncu's warp states on this architecture, the export lacks " in text


def test_an_architecture_ikreport_does_not_know_names_no_missing_state():
    b = breakdown({"long_scoreboard": 40.0, "selected": 10.0}, "pct", "10.0", 4)
    assert b.missing is None and b.coverage_pct == 50.0 and b.top == (("long_scoreboard", 40.0, 40.0),)
    b = breakdown({"long_scoreboard": 40.0, "selected": 10.0}, "pcsamp", None, 4)
    assert b.missing is None and b.coverage_pct is None and b.top == (("long_scoreboard", 40.0, None),)


def test_pc_sampling_spells_no_instructions_in_the_plural():
    b = breakdown({"no_instructions": 5.0}, "pcsamp", "8.6", 4)
    assert "no_instruction" in b.captured and "no_instruction" not in b.missing


def test_a_record_imported_before_every_state_was_kept_gives_no_coverage():
    # the sample's PolyFHE record: share_pct was of the captured stalls' sum (45.6), value is ncu's %
    old = {"top_stalls": [{"reason": "long_scoreboard", "value": 18.31, "share_pct": 45.6, "source": "pct"}]}
    assert stalls_text("k", old) == ("k's warps are stalled for 18.3% of their warp-active cycles on long_scoreboard "
                                     "(first launch). The record keeps only these top stalls, so how much of the "
                                     "warp-active cycles the captured states cover is not known.")
    old["top_stalls"][0]["source"] = "pcsamp"
    assert "no share of warp-active cycles is given" in stalls_text("k", old)


def test_a_raw_page_of_warp_latencies_names_the_missing_states_and_gives_no_shares():
    header = ('"ID","Kernel Name","CC","gpu__time_duration.sum",'
              '"smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio",'
              '"smsp__average_warp_latency_issue_stalled_selected.ratio",'
              '"smsp__average_warp_latency_issue_stalled_wait.ratio"')
    text = "\n".join([header, '"","","","usecond","","",""', '"0","k(int)","8.0","10.00","120.5","40","60.25"'])
    [s] = read_exports({"raw.csv": text}).launches
    states = s["stall_states"]
    assert states["source"] == "latency" and states["captured"] == ["long_scoreboard", "selected", "wait"]
    assert states["coverage_pct"] is None and len(states["missing"]) == 15 and "branch_resolving" in states["missing"]
    assert [(t["reason"], t["value"], t["share_pct"]) for t in s["top_stalls"]] == [
        ("long_scoreboard", 120.5, None), ("wait", 60.25, None)]
    assert stalls_text("k", s).startswith("k's warps stall most on long_scoreboard (120.50) and wait (60.25), in warp "
                                          "cycles per warp (first launch); no share of warp-active cycles is given")
