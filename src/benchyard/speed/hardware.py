"""Hardware profiles: the memory bandwidth that bounds how fast a model can decode on a device.
Each generated token reads every weight once (at batch size one), so decode tokens per second
cannot exceed bandwidth / model size. The figures are vendors' peak bandwidths: upper bounds."""

from __future__ import annotations

from benchyard.errors import BenchyardError

BANDWIDTH_GBS: dict[str, float] = {
    # data-centre GPUs
    "h200": 4800.0,
    "h100-sxm": 3350.0,
    "h100-pcie": 2000.0,
    "a100-80gb": 2039.0,
    "a100-40gb": 1555.0,
    "l40s": 864.0,
    "b200": 8000.0,
    "mi300x": 5300.0,
    # desktop GPUs
    "rtx-5090": 1792.0,
    "rtx-4090": 1008.0,
    "rtx-3090": 936.0,
    # Apple silicon (unified memory)
    "m1-max": 400.0,
    "m2-ultra": 800.0,
    "m3-max": 400.0,
    "m4-max": 546.0,
    # CPUs: memory channels x transfer rate
    "ddr4-2ch": 51.2,
    "ddr5-2ch": 89.6,
    "cpu-server": 614.4,  # 12 channels of DDR5-6400: a bound no CPU machine exceeds today
}


class UnknownHardware(BenchyardError):
    """A hardware profile benchyard does not know."""


def bandwidth_gbs(profile: str) -> float:
    try:
        return BANDWIDTH_GBS[profile]
    except KeyError:
        known = ", ".join(sorted(BANDWIDTH_GBS))
        raise UnknownHardware(
            f"no hardware profile '{profile}' (known: {known}); or give --bandwidth-gbs"
        ) from None
