"""The ``ncu-profile`` kind: kernels profiled by Nsight Compute (collect ncu, import ncu). All of
it lives in this package: its facts, page and ``Kind`` (kind.py), its claims, one function per
rule id (claims.py), the record's data as the collectors write it and the launch table
(data.py), its charts (charts.py), its roofline (roofline.py), its stall claims (stalls.py), its
memory side judged against a measured peak (measured_peak.py), its history pages (history.py)
and its data part (ncu_profile.schema.json, found by store/schema_parts.py)."""

from __future__ import annotations

from ikreport.kinds.ncu_profile.kind import KIND, NAME, ONE_RUN

__all__ = ["KIND", "NAME", "ONE_RUN"]
