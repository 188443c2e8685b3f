"""Short kernel names and record titles: cut only at a word or template boundary, never two
alike where a reader must tell them apart. Names come from the real exports in tests/fixtures."""

import pytest

from conftest import ncu_text
from ikreport.analysis.ncu.read import read_exports
from ikreport.claims.kernel_names import (cut, distinct_kernel_labels, first_argument_kernel, profile_title,
                                          short_kernel, short_title, visible_titles)


def test_short_kernel_names():
    assert short_kernel("void flash_fwd_kernel<Traits<128, 64>, true>(Params)") == "flash_fwd_kernel<…>"
    assert short_kernel("Kernel2(bool*,bool*,int)") == "Kernel2"
    assert short_kernel("enable_if<!T7, void>::type kernel<int, float>(T13)") == "kernel<…>"
    assert short_kernel("copy_blocked[v1,cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwA](Array<long long, 1>)") == "copy_blocked[…]"
    assert len(short_kernel("x" * 200)) == 48


def test_a_long_name_is_cut_at_a_boundary_never_mid_identifier():
    name = "a_very_long_kernel_name_that_goes_on_and_on_and_on_past_the_limit_of_the_page"
    shown = cut(name, 48)
    assert shown.endswith("…") and len(shown) <= 48
    assert name.startswith(shown[:-1]) and name[len(shown) - 1] == "_"  # the next character starts a new word
    assert cut("one two three four", 12) == "one two…"
    assert cut("short", 12) == "short"


def _kernels(name):
    return [k["kernel"] for k in read_exports({name: ncu_text(name)}).kernels]


def test_a_cutlass_title_keeps_the_gemm_name():
    [name] = _kernels("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv")
    title = profile_title(name)
    assert title == "ncu profile: Kernel2<cutlass_80_wmma_tensorop_bf16…>"


def test_titles_made_before_are_shown_without_the_cut_identifier():
    [name] = _kernels("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv")
    old = f"ncu profile: {name[:60]}"  # what import ncu titled a profile before issue 16
    assert old.endswith("gemm_bf16_")
    assert short_title(old) == "ncu profile: Kernel2<cutlass_80_wmma_tensorop_bf16…>"


def test_chart_labels_of_the_pmpp_export_are_distinct():
    names = _kernels("ncu_raw_pmpp_06_gtx1650ti_preamble.csv")
    labels = distinct_kernel_labels(names)
    assert len(set(labels)) == len(labels)
    assert "window_kernel<0>" in labels and "window_kernel<1>" in labels
    assert first_argument_kernel(names[0]).startswith(short_kernel(names[0])[:-3])


@pytest.mark.parametrize("titles", [{"a" * 64: "Same", "b" * 64: "Same", "c" * 64: "Other"}])
def test_two_records_never_share_a_visible_title(titles):
    shown = visible_titles(titles)
    assert shown["a" * 64] == "Same (aaaaaaaa)" and shown["b" * 64] == "Same (bbbbbbbb)"
    assert shown["c" * 64] == "Other"


def test_a_title_made_now_is_shown_as_it_is():
    for name in _kernels("ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv") + _kernels(
            "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"):
        assert short_title(profile_title(name)) == profile_title(name)
