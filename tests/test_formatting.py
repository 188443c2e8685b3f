"""Numbers keep their meaning: on one page, different values never read the same, and a
"best" never reads below an "average" (issue 16 item 12). Values from the BabelStream fixture."""

from conftest import FIXTURES
from ikreport.analysis.bandwidth_tools import parse_babelstream
from ikreport.formatting import distinct_digits, fmt_duration_us, fmt_gbs
from ikreport.kinds.peak_bandwidth import gbs_formatter


def test_values_that_differ_are_never_shown_the_same():
    values = [1309.0, 1315.0]
    assert fmt_gbs(1309.0) == fmt_gbs(1315.0) == "1.31 TB/s"  # the usual form alone would merge them
    digits = distinct_digits(values, fmt_gbs)
    assert [fmt_gbs(v, digits) for v in values] == ["1.309 TB/s", "1.315 TB/s"]


def test_the_usual_form_is_kept_when_it_already_tells_values_apart():
    assert distinct_digits([143.0, 1376.4], fmt_gbs) is None
    assert distinct_digits([22.41, 22.43], fmt_duration_us) == 4
    assert fmt_duration_us(22.41, 4) == "22.41 µs" and fmt_duration_us(0.5, 3) == "500 ns"


def test_a_best_is_never_shown_below_an_average():
    best, average = 1364.9, 1364.7
    digits = distinct_digits([best, average], fmt_gbs)
    assert fmt_gbs(best, digits) > fmt_gbs(average, digits)  # same unit and width: text order is number order


def test_the_babelstream_page_tells_every_kernel_apart():
    """The A100 BabelStream run: the page's one precision tells every kernel's figure apart."""
    name = "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"
    parsed = parse_babelstream((FIXTURES / "bandwidth" / name).read_text("utf-8"), name)
    gbs = gbs_formatter({"kernels": parsed["kernels"]})
    figures = {k["best_gbs"] for k in parsed["kernels"]}
    assert len({gbs(v) for v in figures}) == len(figures)


def test_durations_keep_their_third_digit_when_it_is_a_zero():
    """'12 µs' beside '12.3 µs' and '111.0 µs' read as less precise than it is: Python's 'g' form
    drops trailing zeros. site.md promises 3 significant digits or more."""
    assert [fmt_duration_us(v) for v in (12.032, 2100, 9.1e6, 0.09, 312.4, 1234e6)] == \
        ["12.0 µs", "2.10 ms", "9.10 s", "90.0 ns", "312 µs", "1234 s"]
    assert distinct_digits([12.032, 12.3, 15.7], fmt_duration_us) is None  # 3 digits tell them apart
    # rounding up to a power of ten gave a fourth digit ("100.0 µs"; a review helper found it)
    assert [fmt_duration_us(v) for v in (99.97, 9.997, 0.09997, 99997)] == ["100 µs", "10.0 µs", "100 ns", "100 ms"]
