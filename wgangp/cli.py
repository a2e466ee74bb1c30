"""What every command shares at its front: TensorFlow's log level set before it loads, the one
``key=value`` grammar of the small commands (:func:`key_values`, and :func:`flags_of` for those
parsed by argparse), help. The training command's overrides are checked in
:mod:`wgangp.overrides`."""

from __future__ import annotations

import argparse
import ctypes
import difflib
import logging
import os
import sys
from collections.abc import Iterable, MutableMapping, Sequence
from pathlib import Path

from wgangp.errors import ConfigError, WgangpError
from wgangp.tracking.secrets import redact_logs


def nvidia_driver_present() -> bool:
    """Whether TensorFlow could find a GPU here at all: the NVIDIA driver's device node or its
    library (the NVIDIA Container Toolkit brings both into a container run with ``--gpus``)."""
    if Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia/version").exists():
        return True
    try:
        ctypes.CDLL("libcuda.so.1")  # what TensorFlow itself loads; not initialized here
    except OSError:
        return False
    return True


def quiet_tensorflow(
    environ: MutableMapping[str, str] = os.environ, driver: bool | None = None
) -> str | None:
    """Set TensorFlow's C++ log level before it is imported, unless the user set one; returns
    the level set (None: the user's own is kept).

    Without an NVIDIA driver no GPU can be found, asked for or not: the full TensorFlow wheel
    still calls cuInit and logs its failure as an ERROR, with a notice to rebuild TensorFlow for
    this CPU. Level 3 hides both; ``trainer.device=gpu`` still fails in its own line (exit 2).
    With a driver, level 1 hides only the INFO notices: warnings and errors about a real GPU
    stay. GPUs are never hidden: ``trainer.device=auto`` finds one exactly as before.
    """
    if "TF_CPP_MIN_LOG_LEVEL" in environ:
        return None
    present = nvidia_driver_present() if driver is None else driver
    environ["TF_CPP_MIN_LOG_LEVEL"] = "1" if present else "3"
    return environ["TF_CPP_MIN_LOG_LEVEL"]


def key_values(
    argv: Iterable[str], keys: tuple[str, ...], usage: str, error: type[WgangpError]
) -> dict[str, str]:
    """``key=value`` arguments of a small command (``wgangp.sample``, ``wgangp.schema``) as a
    dict (a value in quotes, as ``wgangp.train`` takes a path with ``=``, without them); a
    malformed or unknown one is one ``error`` line with the closest key."""
    values: dict[str, str] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        key = key.lstrip("+")
        if not sep:
            raise error(f"argument {arg!r} is not key=value; {usage}")
        if key not in keys:
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(keys)}"
            raise error(f"unknown argument '{key}' in {arg!r}; {hint}")
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]  # quoted as the training command needs (check_text_syntax)
        values[key] = value
    return values


def flags_of(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """The one grammar every command takes, ``key=value``, for a command that parses with
    argparse (``wgangp.evaluate``, ``wgangp.report``, ``wgangp.sync``): ``run=ID`` is ``--run
    ID``, ``new_split=true`` is ``--new-split``, ``output_dir=DIR`` the positional it names.
    The old ``--flag`` spellings still work, with one note line on stderr; an unknown key is
    one line naming the closest."""
    actions = {action.dest: action for action in parser._actions if action.dest != "help"}
    flags: list[str] = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if arg.startswith("-") or not sep or not key.replace("-", "_").isidentifier():
            flags.append(arg)  # an old --flag, or a positional as it is (a path with '=')
            continue
        action = actions.get(key.replace("-", "_"))
        if action is None:
            close = difflib.get_close_matches(key, list(actions), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(actions)}"
            raise ConfigError(f"unknown argument '{key}' in {arg!r}; {hint}")
        if not action.option_strings:  # a positional, named
            flags.append(value)
        elif action.nargs == 0:  # a switch: key=true or key=false
            if value.lower() not in ("true", "false"):
                raise ConfigError(f"{key} must be true or false, got {arg!r}")
            flags.extend([action.option_strings[-1]] if value.lower() == "true" else [])
        else:
            flags.extend([action.option_strings[-1], value])
    old = [a for a in argv if a.startswith("--") and a not in ("--help",)]
    if old:
        name = old[0].split("=")[0]
        key = name.removeprefix("--").replace("-", "_")
        print(
            f"wgangp: note: {name} is written {key}=... now, as every wgangp command takes its "
            "arguments (key=value); the old spelling still works",
            file=sys.stderr,
        )
    return flags


def command_args(argv: Sequence[str] | None, usage: str) -> list[str] | None:
    """A small command's arguments, logging set up (URLs' secrets redacted); None after
    printing ``usage`` for help."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help", "help") for a in args):
        print(usage)
        return None
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    redact_logs()
    return args
