"""Claims on a ``comparison`` record's page: the overall count and each kernel's verdict,
citing the comparison and both profiles."""

from __future__ import annotations

from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import fmt_duration_us

CAVEAT_VERDICT = ("B is compared with A. FASTER or SLOWER needs a median change beyond the threshold and no "
                  "overlap between the two sets of launch durations; otherwise the verdict stays UNDECIDED.")
MAX_KERNEL_CLAIMS = 10


def comparison_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    if record["kind"] != "comparison":
        return []
    data = record["data"]
    cites = [record_id, data["a"], data["b"]]
    counts = ", ".join(f"{n} {v}" for v, n in data["verdicts"].items()) or "no kernels"
    text = f"Of {len(data['kernels'])} kernels: {counts}."
    if not data["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in data["differences"])
        text += f" The profiles are not like-for-like ({fields}), so no difference is called."
    claims = [make_claim("comparison-summary", "", record_id, text, cites, [CAVEAT_VERDICT], records)]
    for k in [k for k in data["kernels"] if k["ratio"] is not None][:MAX_KERNEL_CLAIMS]:
        text = (f"{short_kernel(k['kernel'])}: {fmt_duration_us(k['b_median_us'])} in B against "
                f"{fmt_duration_us(k['a_median_us'])} in A (median of {k['launches']} matched launches, "
                f"B/A {k['ratio']:.3f}): {k['verdict']}, {k['reason']}.")
        claims.append(make_claim("comparison-kernel", k["kernel"], record_id, text, cites, [CAVEAT_VERDICT],
                                 records, k["kernel"]))
    return claims
