"""Chart specs are built without altair's validation (it costs more than rendering); this
test validates each kind once against the Vega-Lite schema instead."""

from __future__ import annotations

import altair as alt
import pytest

from ikreport.site.charts import SPECS

ROWS = {
    "time-by-kernel": [{"label": "#1", "kernel": "k", "total_ms": 1.5, "launches": 3}],
    "throughput": [{"label": "k", "memory_pct": 61.8, "sm_pct": 41.5, "bound": "memory-bound"}],
    "bandwidth-samples": [{"size_mib": 256, "gbs": 4300.0}],
    "comparison-ratio": [{"label": "#1", "ratio": 0.7, "verdict": "FASTER"}],
    "roofline": [{"series": "kernel", "label": "k", "href": "#k-1", "intensity": 380.6, "tflops": 54.4},
                 {"series": "memory (measured)", "intensity": 38.0, "tflops": 0.2}],
}


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_chart_spec_is_valid_vega_lite(kind):
    spec = SPECS[kind](ROWS[kind])
    top = alt.TopLevelLayerSpec if "layer" in spec else alt.TopLevelUnitSpec
    top.validate(spec)  # raises on an invalid spec
    assert spec["data"]["values"] if "data" in spec else spec["layer"]
