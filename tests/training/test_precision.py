"""``trainer.precision=auto``: bf16 where the hardware multiplies it, float32 elsewhere."""

from __future__ import annotations

from pathlib import Path

import mlflow
import pytest
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.train import train
from wgangp.training.precision import CpuInfo, cpu_info, parse_cpuinfo, resolve_precision

INTEL_SAPPHIRE_RAPIDS = """\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8
processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu
"""
AMD_ROME = """\
processor\t: 0
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx2 fma
"""


def test_cpuinfo_gives_the_first_processors_model_and_flags() -> None:
    intel = parse_cpuinfo(INTEL_SAPPHIRE_RAPIDS)
    assert intel.model == "Intel(R) Xeon(R) Platinum 8488C"
    assert intel.bf16 and intel.amx
    assert intel.tags() == {
        "cpu.model": "Intel(R) Xeon(R) Platinum 8488C",
        "cpu.bf16": "true",
        "cpu.amx": "true",
    }
    amd = parse_cpuinfo(AMD_ROME)
    assert (amd.model, amd.bf16, amd.amx) == ("AMD EPYC 7B12", False, False)


def test_a_missing_cpuinfo_still_names_a_model(tmp_path: Path) -> None:
    info = cpu_info(tmp_path / "absent")
    assert info.model and info.flags == frozenset()


@pytest.mark.parametrize(
    ("flags", "device", "capability", "expected"),
    [
        ({"avx512_bf16"}, "cpu", None, "mixed_bfloat16"),
        ({"amx_bf16", "amx_tile"}, "cpu", None, "mixed_bfloat16"),
        ({"avx2", "avx512f"}, "cpu", None, "float32"),
        (set(), "gpu", (8, 0), "mixed_bfloat16"),
        (set(), "gpu", (9, 0), "mixed_bfloat16"),
        ({"avx512_bf16"}, "gpu", (7, 5), "float32"),  # the GPU runs the model, not the CPU
        (set(), "gpu", None, "float32"),
    ],
)
def test_auto_picks_bf16_only_where_the_device_multiplies_it(
    flags: set[str], device: str, capability: tuple[int, int] | None, expected: str
) -> None:
    policy, why = resolve_precision("auto", device, CpuInfo("x", frozenset(flags)), capability)
    assert policy == expected and why


def test_an_explicit_precision_is_kept() -> None:
    bf16_cpu = CpuInfo("x", frozenset({"avx512_bf16"}))
    for requested in ("float32", "mixed_float16", "mixed_bfloat16"):
        assert resolve_precision(requested, "cpu", bf16_cpu)[0] == requested


@pytest.mark.slow
def test_a_run_with_auto_records_the_precision_it_used_and_the_cpu(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    cfg = to_config(compose([*TINY, "trainer.precision=auto", f"tracking.uri={uri}"]))
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    tags = mlflow.MlflowClient(uri).get_run(result.run_id).data.tags
    here = cpu_info()
    assert tags["precision.resolved"] in ("float32", "mixed_bfloat16")
    if tags["device"] == "cpu":
        assert tags["precision.resolved"] == resolve_precision("auto", "cpu", here)[0]
    assert tags["cpu.model"] == here.model
    assert tags["cpu.bf16"] == str(here.bf16).lower()
    assert tags["cpu.amx"] == str(here.amx).lower()
