"""Where one training job writes (its output folder), where its relative paths start, and what
Hydra recorded of it, resolved once when the job starts."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from wgangp.errors import WgangpError
from wgangp.files import write_text
from wgangp.redaction import redact
from wgangp.tracking.secrets import scrub_secrets


@dataclass(frozen=True)
class RunDirs:
    """Where a job writes (``output``), where relative paths start (``launch``), and Hydra's
    own record of the job (``hydra_meta``: the ``.hydra`` folder, when under Hydra)."""

    output: Path
    launch: Path
    hydra_meta: Path | None = None
    #: A sweep's ``multirun.yaml`` (Hydra's record of the whole sweep's overrides, as typed).
    sweep_record: Path | None = None

    @classmethod
    def resolve(cls, output_dir: Path | None, launch_dir: Path | None) -> RunDirs:
        """Hydra's run directory and launch directory, unless given; a fresh ``outputs/``
        folder in the current directory outside Hydra. The output directory must be writable.
        """
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hydra_out = hydra_launch = hydra_meta = sweep_record = None
        if HydraConfig.initialized():
            hc = HydraConfig.get()
            hydra_out, hydra_launch = Path(hc.runtime.output_dir), Path(hc.runtime.cwd)
            hydra_meta = hydra_out / hc.output_subdir if hc.output_subdir else None
            if hc.mode == RunMode.MULTIRUN:
                sweep_record = hydra_launch / hc.sweep.dir / "multirun.yaml"
        launch = Path(launch_dir or hydra_launch or Path.cwd()).resolve()
        if output_dir is None:
            stamp = datetime.now().strftime("%Y-%m-%d/%H-%M-%S-%f")
            output_dir = hydra_out or launch / "outputs" / stamp
        output = Path(output_dir).resolve()
        _check_writable(output)
        return cls(output, launch, hydra_meta, sweep_record)

    def scrub(self) -> None:
        """Redact what Hydra wrote before the job started (``.hydra/*.yaml``, a sweep's
        ``multirun.yaml``): the overrides as typed, a URL's password or signature included."""
        with contextlib.suppress(OSError):
            if self.hydra_meta is not None and self.hydra_meta.is_dir():
                scrub_secrets(self.hydra_meta)
            record = self.sweep_record
            if record is not None and record.is_file():
                text = record.read_text(encoding="utf-8")
                if redact(text) != text:
                    write_text(record, redact(text))


def _check_writable(output_dir: Path) -> None:
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        probe = output_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise WgangpError(
            f"output directory {output_dir} is not writable ({err.strerror}); "
            "run from a writable directory or set hydra.run.dir=..."
        ) from None
