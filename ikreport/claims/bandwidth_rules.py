"""Claims about measured bandwidth: a peak-bandwidth record's own result, and each top
kernel's DRAM throughput as a share of the measured peak of the same GPU model."""

from __future__ import annotations

from ikreport.claims.gpus import measured_peak_for
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.claims.profile_rules import TOP_KERNELS
from ikreport.formatting import fmt_gbs, fmt_pct
from ikreport.store.profile_data import first_launch

CAVEAT_CONVENTION = "Bytes are counted read + write: a copy of N bytes moves 2N."
CAVEAT_OF_PEAK = ("DRAM throughput is ncu's bytes read + written over the kernel's duration; the peak is a "
                  "streaming copy measured on the same GPU model, not necessarily the same board or clocks.")


def bandwidth_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    if record["kind"] != "peak-bandwidth":
        return []
    data = record["data"]
    text = f"Measured peak memory bandwidth: {fmt_gbs(data['peak_gbs'])} ({data['peak_basis']})"
    if data.get("max_gbs") is not None:
        text += f"; the best single measurement was {fmt_gbs(data['max_gbs'])}"
    text += "."
    claims = [make_claim("bandwidth-peak", "", record_id, text, [record_id], [CAVEAT_CONVENTION], records)]
    if data.get("theoretical_gbs"):
        pct = 100 * data["peak_gbs"] / data["theoretical_gbs"]
        text = (f"That is {fmt_pct(pct)} of the theoretical {fmt_gbs(data['theoretical_gbs'])} "
                f"(2 x {data['max_memory_clock_mhz']:g} MHz x {data['memory_bus_width_bits']} bit).")
        claims.append(make_claim("bandwidth-of-theoretical", "", record_id, text, [record_id],
                                 ["The theoretical peak is a datasheet-style figure no real access pattern reaches."],
                                 records))
    return claims


def of_peak_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    if record["kind"] != "ncu-profile":
        return []
    peak_id = measured_peak_for(record, records)
    if peak_id is None:
        return []
    peak = records.records[peak_id]["data"]["peak_gbs"]
    claims = []
    for kernel in record["data"]["kernels"][:TOP_KERNELS]:
        first = first_launch(record["data"], kernel)
        gbs = first.get("dram_gbs")
        if gbs is None:
            continue
        name = kernel["kernel"]
        text = (f"{short_kernel(name)} moves {fmt_gbs(gbs)} to and from DRAM, {fmt_pct(100 * gbs / peak)} of the "
                f"measured peak of {fmt_gbs(peak)} on this GPU model (first launch).")
        claims.append(make_claim("kernel-of-measured-peak", name, record_id, text, [record_id, peak_id],
                                 [CAVEAT_OF_PEAK], records, name))
    return claims
