"""``trainer.precision=auto``: the dtype policy this machine's matrix units run fastest.

bfloat16 keeps float32's exponent range, so the products and sums that overflow or round to zero
in float16 stay finite (the penalty is computed in float32 either way), and many rented CPUs
multiply bf16 matrices natively (AVX512_BF16, AMX): there ``auto`` picks ``mixed_bfloat16``. A GPU
gets it from compute capability 8.0 (Ampere) on. Everywhere else, ``float32``. Never
``mixed_float16``: its loss scaling is a choice a user makes knowingly.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import NamedTuple

#: CPU flags (as /proc/cpuinfo spells them) of native bf16 matrix arithmetic.
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
AMX_FLAGS = ("amx_bf16", "amx_tile")


class CpuInfo(NamedTuple):
    model: str
    flags: frozenset[str]

    @property
    def bf16(self) -> bool:
        return any(flag in self.flags for flag in BF16_FLAGS)

    @property
    def amx(self) -> bool:
        return any(flag in self.flags for flag in AMX_FLAGS)

    def tags(self) -> dict[str, str]:
        """MLflow tags (and the benchmark's machine record)."""
        return {
            "cpu.model": self.model,
            "cpu.bf16": str(self.bf16).lower(),
            "cpu.amx": str(self.amx).lower(),
        }


def parse_cpuinfo(text: str) -> CpuInfo:
    """The first processor's model name and flags from /proc/cpuinfo's text."""
    model, flags = "", frozenset[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = frozenset(value.split())
    return CpuInfo(model or platform.processor() or "unknown", flags)


def cpu_info(path: Path = Path("/proc/cpuinfo")) -> CpuInfo:
    """This machine's CPU; without /proc/cpuinfo (not Linux) the model only, and no flags."""
    try:
        return parse_cpuinfo(path.read_text(errors="replace"))
    except OSError:
        return CpuInfo(platform.processor() or "unknown", frozenset())


def resolve_precision(
    requested: str, device: str, cpu: CpuInfo, gpu_capability: tuple[int, int] | None = None
) -> tuple[str, str]:
    """The dtype policy to use and why (for the log line); ``requested`` unless it is ``auto``."""
    if requested != "auto":
        return requested, "as configured"
    if device == "gpu":
        if gpu_capability is not None and gpu_capability >= (8, 0):
            major, minor = gpu_capability
            return "mixed_bfloat16", f"GPU compute capability {major}.{minor}"
        return "float32", "the GPU has no bf16 matrix units (compute capability below 8.0)"
    native = [flag for flag in BF16_FLAGS if flag in cpu.flags]
    if native:
        return "mixed_bfloat16", f"CPU has {', '.join(native)}"
    return "float32", "the CPU has no bf16 matrix instructions"


def gpu_capability() -> tuple[int, int] | None:
    """The first GPU's compute capability, as TensorFlow reports it (None without one)."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return None
    capability = tf.config.experimental.get_device_details(gpus[0]).get("compute_capability")
    if not isinstance(capability, tuple) or len(capability) != 2:
        return None
    return int(capability[0]), int(capability[1])
