"""The bar charts drawn straight to SVG (charts/bars.py): what a reader reads off them (bar
lengths against the axis, names, legend, tooltips) must be what the rows say."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

import pytest

from ikreport.kinds.ncu_profile.charts import SPEED_OF_LIGHT, STALLS, TIME_BY_KERNEL
from ikreport.charts.bars import MONO_EM, PLOT_WIDTH, draw, tick_step

NS = {"s": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises unless the SVG is well-formed XML


def bars(root: ET.Element) -> list[tuple[float, float, str, str]]:
    """(x, width, fill, tooltip) of every bar."""
    return [(float(r.get("x")), float(r.get("width")), r.get("fill"), r.find("s:title", NS).text)
            for r in root.iterfind(".//s:g[@class='bars']/s:rect", NS)]


def texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iterfind(".//s:text", NS)]


def ticks(root: ET.Element, title: str) -> list[str]:
    """The value axis's tick labels, in order (the texts between the last kernel name and the axis title)."""
    words = texts(root)
    labels = [w for w in words if re.fullmatch(r"[\d,.]+", w)]
    assert title in words
    return labels


TIME_ROWS = [{"label": "flash_fwd_kernel<…> & co", "total": 22.4, "unit": "µs", "launches": 3},
             {"label": "rms_norm", "total": 5.6, "unit": "µs", "launches": 1}]


def test_time_bars_are_as_long_as_their_values_on_a_round_axis():
    root = parse(draw(TIME_BY_KERNEL, TIME_ROWS))
    assert ticks(root, "profiled GPU time (µs)") == ["0", "5", "10", "15", "20", "25"]
    (x1, w1, _, tip1), (x2, w2, _, tip2) = bars(root)
    assert x1 == x2 == 0
    assert w1 == pytest.approx(22.4 / 25 * PLOT_WIDTH, abs=0.01)
    assert w2 == pytest.approx(5.6 / 25 * PLOT_WIDTH, abs=0.01)
    assert tip1 == "flash_fwd_kernel<…> & co: 22.4 µs" and tip2 == "rms_norm: 5.6 µs"


def test_kernel_names_are_whole_text_and_fit_left_of_the_axis():
    svg = draw(TIME_BY_KERNEL, TIME_ROWS)
    root = parse(svg)
    assert "flash_fwd_kernel<…> & co" in texts(root)  # escaped in the file, whole in the text
    assert "flash_fwd_kernel&lt;…&gt; &amp; co</text>" in svg
    plot = root.find("s:g", NS)
    left = float(re.match(r"translate\(([\d.]+),", plot.get("transform")).group(1))
    assert left >= len("flash_fwd_kernel<…> & co") * 10 * 0.6 + 7  # a 0.6 em monospace name ends before the ticks
    assert MONO_EM >= 0.6


def test_speed_of_light_is_out_of_100_and_leaves_out_what_the_export_lacks():
    rows = [{"label": "gemm", "unit": "SM", "pct": 80.0}, {"label": "gemm", "unit": "DRAM", "pct": 20.0},
            {"label": "norm", "unit": "DRAM", "pct": 90.5}]
    root = parse(draw(SPEED_OF_LIGHT, rows))
    assert ticks(root, "% of peak (first launch)")[-1] == "100"
    drawn = bars(root)
    assert [tip for *_, tip in drawn] == ["gemm SM: 80%", "gemm DRAM: 20%", "norm DRAM: 90.5%"]
    assert [w for _, w, _, _ in drawn] == pytest.approx([288.0, 72.0, 325.8])
    legend = [t for t in texts(root) if t in {"SM", "memory", "L1", "L2", "DRAM"}]
    assert legend == ["SM", "DRAM"]  # no L1, L2 or memory entry: never drawn as 0
    colours = {tip.split()[1].rstrip(":"): fill for _, _, fill, tip in drawn}
    assert colours["SM"] != colours["DRAM"]


def test_stalls_stack_largest_first_to_their_sum():
    rows = [{"label": "k", "reason": "wait", "share": 11.2}, {"label": "k", "reason": "long_scoreboard", "share": 73.4}]
    root = parse(draw(STALLS, rows))
    (x1, w1, f1, tip1), (x2, w2, f2, tip2) = bars(root)
    assert tip1 == "k long_scoreboard: 73.4%" and tip2 == "k wait: 11.2%"
    assert x1 == 0 and x2 == pytest.approx(w1, abs=0.01)  # the second starts where the first ends
    hi = int(ticks(root, "% of warp-active cycles")[-1])
    assert hi >= 84.6 and (x2 + w2) == pytest.approx(84.6 / hi * PLOT_WIDTH, abs=0.02)
    assert f1 != f2 and "stall reason" in texts(root)


def test_the_same_rows_give_the_same_bytes():
    assert draw(STALLS, [{"label": "k", "reason": "wait", "share": 1.0}]) == \
        draw(STALLS, [{"label": "k", "reason": "wait", "share": 1.0}])


@pytest.mark.parametrize(("hi", "step"), [(22.4, 5), (66.8, 10), (100, 20), (0.003, 0.0005), (12_000, 2000)])
def test_tick_steps_are_1_2_or_5_times_a_power_of_ten(hi, step):
    assert tick_step(0, hi, 7) == pytest.approx(step)


def test_small_and_large_values_are_labelled_to_their_step():
    small = parse(draw(TIME_BY_KERNEL, [{"label": "k", "total": 0.0031, "unit": "ms"}]))
    assert ticks(small, "profiled GPU time (ms)")[:3] == ["0.0000", "0.0005", "0.0010"]
    big = parse(draw(TIME_BY_KERNEL, [{"label": "k", "total": 11_500.0, "unit": "µs"}]))
    assert ticks(big, "profiled GPU time (µs)")[-1] == "12,000"


@pytest.mark.parametrize("longest", [2.21, 22.1, 0.221, 2.2136, 9.99, 1.0001])
def test_the_axis_ends_on_its_last_tick_inside_the_plot(longest):
    """A round end can call for a coarser step (2.21 rounds to 2.4 in steps of 0.2, and 2.4
    wants steps of 0.5): the axis must then end on a tick of the final step, not past the plot."""
    root = parse(draw(TIME_BY_KERNEL, [{"label": "a", "total": longest, "unit": "ms"},
                                      {"label": "b", "total": longest / 2, "unit": "ms"}]))
    grid = [float(line.get("x1")) for line in root.iterfind(".//s:line[@stroke='#ddd']", NS)]
    assert max(grid) == pytest.approx(PLOT_WIDTH + 0.5)  # the last grid line is the plot's edge
    end = float(ticks(root, "profiled GPU time (ms)")[-1].replace(",", ""))
    assert end >= longest and bars(root)[0][1] == pytest.approx(longest / end * PLOT_WIDTH, abs=0.01)


def test_a_kernel_name_with_a_control_character_still_gives_a_well_formed_svg():
    svg = draw(TIME_BY_KERNEL, [{"label": "k\x01ernel\ufffe", "total": 1.0, "unit": "µs"},
                                {"label": "b", "total": 0.5, "unit": "µs"}])
    assert "k\ufffdernel\ufffd" in texts(parse(svg))  # parse raises on a character XML forbids


# The scatter and roofline (charts/plot.py) and the history chart (charts/history.py), drawn
# without Vega too: what a reader reads off them must be what the rows say.

def circles(root: ET.Element) -> list[tuple[float, float, str, str]]:
    """(cx, cy, fill, tooltip) of every point."""
    return [(float(c.get("cx")), float(c.get("cy")), c.get("fill"), c.find("s:title", NS).text)
            for c in root.iter("{http://www.w3.org/2000/svg}circle") if c.find("s:title", NS) is not None]


def test_the_throughput_scatter_places_each_kernel_at_its_percentages_coloured_by_label():
    from ikreport.kinds.ncu_profile.charts import THROUGHPUT
    from ikreport.charts.plot import draw as plot

    rows = [{"label": "gemm", "memory_pct": 25.0, "sm_pct": 80.0, "bound": "compute-bound"},
            {"label": "copy", "memory_pct": 90.0, "sm_pct": 10.0, "bound": "memory-bound"}]
    root = parse(plot(THROUGHPUT, rows))
    (gx, gy, gfill, gtip), (cx, cy, cfill, ctip) = circles(root)
    assert (gx, gy) == (pytest.approx(0.25 * 320), pytest.approx(320 - 0.8 * 320))  # 0-100 on both axes
    assert (cx, cy) == (pytest.approx(0.9 * 320), pytest.approx(320 - 0.1 * 320))
    assert gfill != cfill and "gemm" in gtip and "80" in gtip and "compute-bound" in gtip
    words = texts(root)
    assert {"memory-bound", "compute-bound", "label", "memory throughput (% of peak)"} <= set(words)
    assert ["0", "20", "40", "60", "80", "100"] == [w for w in words if re.fullmatch(r"\d+", w)][:6]
    dashed = root.findall(".//s:line[@stroke-dasharray='4 4']", NS)
    assert len(dashed) == 4  # the 60% and 80% thresholds across both axes


def test_the_roofline_is_log_log_with_its_roofs_as_lines_and_linked_points():
    from ikreport.kinds.ncu_profile.roofline import ROOFLINE
    from ikreport.charts.plot import draw as plot

    rows = [{"series": "kernel", "label": "gemm", "href": "#k-1", "intensity": 380.6, "tflops": 54.4},
            {"series": "memory (measured)", "intensity": 38.0, "tflops": 0.2},
            {"series": "memory (measured)", "intensity": 3806.0, "tflops": 20.0}]
    root = parse(plot(ROOFLINE, rows))
    (link,) = root.findall(".//s:a", NS)
    assert link.get("{http://www.w3.org/1999/xlink}href") == "#k-1" and "gemm" in link.find("s:circle/s:title", NS).text
    (roof,) = root.findall(".//s:path", NS)
    assert roof.find("s:title", NS).text == "memory (measured)"
    words = texts(root)
    assert {"10", "100", "1,000", "10,000"} <= set(words) and "roof" in words  # powers of ten, a legend
    start, end = (tuple(map(float, part.split(","))) for part in roof.get("d")[1:].split(" L"))
    assert start[0] < end[0] and start[1] > end[1]  # up and to the right, as memory roofs go
    # a roof of slope 1 on log-log axes: x from 10 to 10,000 (3 decades in 420 px), y from 0.1 to
    # 100 (3 decades in 300 px), so 2 decades along x rise 2 decades along y
    assert (start[1] - end[1]) / 300 == pytest.approx((end[0] - start[0]) / 420, abs=1e-3)


def test_the_history_chart_draws_each_profile_s_median_and_interval_linked_to_its_record():
    from ikreport.charts.history import CHANGES, HEIGHT, draw_history

    rows = [{"label": f"#{n + 1}", "median_us": m, "low_us": m - 0.5, "high_us": m + 0.5, "href": f"../e/{n}.html",
             "change": change, "description": f"#{n + 1}: median {m} µs"}
            for n, (m, change) in enumerate([(10.0, "no change"), (10.2, "no change"), (12.0, "SLOWER")])]
    root = parse(draw_history(rows))
    links = root.findall(".//s:a", NS)
    assert [a.get("{http://www.w3.org/1999/xlink}href") for a in links] == ["../e/0.html", "../e/1.html", "../e/2.html"]
    assert [a.get("aria-label") for a in links] == [r["description"] for r in rows]
    fills = [a.find("s:circle", NS).get("fill") for a in links]
    assert fills == [CHANGES["no change"], CHANGES["no change"], CHANGES["SLOWER"]]
    tops = [float(a.find("s:circle", NS).get("cy")) for a in links]
    assert tops[0] > tops[1] > tops[2] and all(0 <= y <= HEIGHT for y in tops)  # slower is higher
    bars_ = [(float(a.find("s:line", NS).get("y1")), float(a.find("s:line", NS).get("y2"))) for a in links]
    assert all(low > high for low, high in bars_)  # each interval drawn from its low end up to its high end
