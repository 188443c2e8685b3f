"""Chart specs are built without altair's validation (it costs more than rendering); these
tests validate each Vega kind once against the Vega-Lite schema instead, and check that the kept
data-free templates give the same charts without importing altair. The bar charts drawn without
Vega (charts/bars.py) are tested in test_bars.py, the history chart in test_history.py."""

from __future__ import annotations

import json
import subprocess
import sys

import altair as alt
import pytest

from ikreport.charts.render import VEGA_KINDS, ChartRenderer, chart_spec

ROWS = {
    "time-by-kernel": [{"label": "flash_fwd_kernel<…>", "total": 22.4, "unit": "µs", "launches": 3}],
    "speed-of-light": [{"label": "k", "unit": "SM", "pct": 41.5}, {"label": "k", "unit": "DRAM", "pct": 8.1}],
    "stalls": [{"label": "k", "reason": "long_scoreboard", "share": 73.4}, {"label": "k", "reason": "wait", "share": 11.2}],
    "throughput": [{"label": "k", "memory_pct": 61.8, "sm_pct": 41.5, "bound": "memory-bound"}],
    "bandwidth-samples": [{"size_mib": 256, "gbs": 4300.0}],
    "serving-latency-samples": [{"metric": "time to first token", "ms": 120.0},
                                {"metric": "time per output token", "ms": 20.0}],
    "nsys-kernel-share": [{"label": "gemvx::kernel<…>", "share": 24.9}],
    "comparison-interval": [{"label": "#1", "ratio": 0.7, "low": 0.65, "high": 0.75, "verdict": "FASTER"}],
    "history": [{"label": "#1", "median_us": 10.0, "low_us": 9.9, "high_us": 10.1, "change": "no change",
                 "href": "../e/x.html", "description": "#1: median 10.0 µs"}],
    "roofline": [{"series": "kernel", "label": "k", "href": "#k-1", "intensity": 380.6, "tflops": 54.4},
                 {"series": "memory (measured)", "intensity": 38.0, "tflops": 0.2}],
}


@pytest.mark.parametrize("kind", VEGA_KINDS)
def test_chart_spec_is_valid_vega_lite(kind):
    spec = chart_spec(kind, ROWS[kind])
    top = alt.TopLevelLayerSpec if "layer" in spec else alt.TopLevelUnitSpec
    top.validate(spec)  # raises on an invalid spec
    assert all(spec["datasets"].values())  # every named dataset holds the rows


def test_kept_templates_give_the_same_svg_without_importing_altair(tmp_path):
    """Charts of rows no build has drawn yet, made from the templates an earlier build kept,
    are the charts a cold cache makes with altair, and the process making them never imports it."""
    from ikreport.store.cache import Cache

    cache = Cache(tmp_path)
    for kind, rows in ROWS.items():  # the earlier build
        ChartRenderer(cache).render(kind, kind, kind, rows)
    cache.close()
    new = {kind: [{k: v * 1.5 if isinstance(v, float) else v for k, v in row.items()} for row in rows]
           for kind, rows in ROWS.items()}  # other values, the same shape: the same templates
    cold = {kind: ChartRenderer(None).render(kind, kind, kind, rows).svg for kind, rows in new.items()}
    code = (
        "import json, sys; from pathlib import Path; from ikreport.charts.render import ChartRenderer\n"
        "from ikreport.store.cache import Cache\n"
        f"rows = json.loads({json.dumps(json.dumps(new))})\n"
        f"out = {{k: ChartRenderer(Cache(Path({str(tmp_path)!r}))).render(k, k, k, r).svg for k, r in rows.items()}}\n"
        "print(json.dumps({'altair': 'altair' in sys.modules, 'svgs': out}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    assert result["altair"] is False
    assert result["svgs"] == cold
