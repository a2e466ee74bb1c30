"""The training command's ``key=value`` overrides, checked before Hydra starts: keys (renamed
ones too), groups, values, quoting, a password in a URL, the output directory; each failure one
line naming the fix, where Hydra would print a report of several lines."""

from __future__ import annotations

import difflib
import os
import re
import urllib.parse
from collections.abc import Iterable
from typing import Any

import yaml
from omegaconf import OmegaConf

from wgangp.config import CONF_DIR, Config
from wgangp.errors import ConfigError

#: Keys that moved, old spelling -> new: an override with the old one fails in one line.
RENAMED_KEYS = {
    "evaluate.every": "select.every",
    "evaluate.select_by": "select.by",
    "evaluate.select_smoothing": "select.smoothing",
    "evaluate.select_after": "select.after",
    "evaluate.val_samples": "select.samples",
    "evaluate.val_repeats": "select.repeats",
    "evaluate.val_gbm_max_iter": "select.gbm_max_iter",
    "model.calibrate_marginals": "ship.calibrate_marginals",
    "model.copula_share": "ship.copula_share",
    "data.rest_sample": "data.rest_subset",
    "data.rare_sample": "data.rare_subset",
}

#: An option name as ``group=option`` gives it (sweeps list several, separated by commas).
_OPTION = re.compile(r"[A-Za-z0-9_.-]+")


def _schema_keys() -> set[str]:
    keys: set[str] = set()

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                full = f"{prefix}.{key}" if prefix else str(key)
                keys.add(full)
                walk(full, value)

    walk("", OmegaConf.to_container(OmegaConf.structured(Config)))
    return keys


def _default_groups() -> set[str]:
    """The groups ``conf/config.yaml`` selects by default: only these take ``group=option``."""
    defaults = yaml.safe_load((CONF_DIR / "config.yaml").read_text()).get("defaults", [])
    return {next(iter(entry)) for entry in defaults if isinstance(entry, dict)}


def check_overrides(argv: Iterable[str]) -> None:
    """Reject ``trainer.stepz=5``, ``experiment=x`` (needs ``+``) and ``trainer=fastt`` before
    Hydra starts, each as one line naming the fix.

    Plain ``key=value`` overrides must name a schema key; group selections (``data=simulated``,
    ``+experiment=stable_gp``) must name an option in ``conf/<group>/``. ``+key``/``~key`` keys,
    ``hydra.*`` and ``group/sub=...`` are left to Hydra.
    """
    argv = list(argv)
    check_quotes(argv)
    check_text_syntax(argv)
    keys, groups, defaults = _schema_keys(), config_groups(), _default_groups()
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        name = key.lstrip("+~")
        if name.startswith(("hydra.", "hydra/")) or "/" in name:
            continue
        if name in RENAMED_KEYS:
            new = RENAMED_KEYS[name]
            raise ConfigError(f"config key '{name}' was renamed to '{new}': write {new}={value}")
        if name in groups:
            _check_group(arg, key, name, value, groups[name], name in defaults)
            continue
        if key != name or key in keys:
            continue
        raise ConfigError(f"unknown config key '{key}' in override '{arg}'; {_hint(key, keys)}")
    _check_override_types(argv, keys, set(groups))


#: Characters the shell treats specially: escaped with a backslash in a suggested override.
_SHELL_SPECIAL = set(" \t\"'\\$`&|;<>()*?[]{}!#~")


def check_quotes(argv: Iterable[str]) -> None:
    """Refuse an override whose value holds an unmatched quote (``tracking.register_as=o'brien``,
    ``data.path=/data/it's.csv``) in one line with the quoting to type; Hydra's lexer would
    print a report of several lines and exit 1."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = None
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        if "'" not in value and '"' not in value:
            continue
        parser = parser or OverridesParser.create()
        try:
            parser.parse_overrides([arg])
            continue
        except Exception:  # Hydra's lexer or parser: the quote opened a string it never closed
            pass
        quote = "'" if "'" in value else '"'
        raise ConfigError(
            f"override '{arg}' holds an unmatched {quote} (Hydra reads a quote as the start of a "
            f"quoted value); quote the value for Hydra and escape it for the shell: "
            f"{_shell_escaped(key + '=' + _hydra_quoted(value))}"
        )


def check_text_syntax(argv: Iterable[str]) -> None:
    """Refuse a text value (a path, a label, a name) holding characters Hydra's override grammar
    reads as syntax, unquoted: ``=`` (a Hive partition's ``date=2024-01-01/``), brackets,
    braces, a comma (a sweep, outside ``-m``), a letter outside ASCII. One line with the quoting
    to type; Hydra would print a report of several lines and exit 1."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    argv = list(argv)
    multirun = "-m" in argv or "--multirun" in argv
    texts, parser = None, None
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        if value[:1] in ("'", '"'):
            continue
        texts = texts if texts is not None else _text_keys()
        if key.lstrip("+~") not in texts:
            continue
        parser = parser or OverridesParser.create()
        if _parses(parser, arg, multirun):
            continue
        found = [c for c in dict.fromkeys(value) if not _parses(parser, f"x=a{c}b", multirun)]
        if not found:
            continue  # something else: Hydra's own report
        if "'" in arg or '"' in value:
            quoted = _shell_escaped(key + "=" + _hydra_quoted(value))
        else:
            quoted = f"'{key}=\"{value}\"'"
        raise ConfigError(
            f"override '{arg}' has characters Hydra's override grammar reads as syntax "
            f"({' '.join(found)}); quote the value for Hydra and the whole override for the "
            f"shell: {quoted}"
        )


def _parses(parser: Any, arg: str, multirun: bool) -> bool:
    """Whether Hydra reads ``arg`` as one value (or, with ``-m``, a sweep)."""
    try:
        override = parser.parse_overrides([arg])[0]
    except Exception:  # Hydra's lexer or parser
        return False
    return multirun or not override.is_sweep_override()


def _text_keys() -> set[str]:
    """The schema's keys whose values are text."""
    from omegaconf import DictConfig
    from omegaconf.nodes import StringNode

    keys: set[str] = set()

    def walk(prefix: str, node: DictConfig) -> None:
        for key in node:
            child, name = node._get_node(key), str(key)
            if isinstance(child, DictConfig):
                walk(f"{prefix}{name}.", child)
            elif isinstance(child, StringNode):
                keys.add(f"{prefix}{name}")

    walk("", OmegaConf.structured(Config))
    return keys


def _hydra_quoted(value: str) -> str:
    """``value`` as one quoted Hydra string: in double quotes, unless it holds only '"'."""
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace('"', '\\"') + '"'


def _shell_escaped(text: str) -> str:
    return "".join(f"\\{ch}" if ch in _SHELL_SPECIAL else ch for ch in text)


def _hint(key: str, keys: set[str]) -> str:
    """The keys a typo most likely meant: the same leaf name one level down (``trainer.lr`` ->
    the two optimizers' ``lr``), else the closest spelling."""
    section, _, leaf = key.rpartition(".")
    nested = sorted(k for k in keys if k.startswith(f"{section}.") and k.endswith(f".{leaf}"))
    candidates = nested if section and nested else difflib.get_close_matches(key, sorted(keys), 1)
    if not candidates:
        return "see conf/ for the valid keys"
    return "did you mean " + " or ".join(f"'{c}'" for c in candidates) + "?"


def _check_group(
    arg: str, key: str, group: str, value: str, options: tuple[str, ...], in_defaults: bool
) -> None:
    if key == group and not in_defaults:
        raise ConfigError(
            f"config group '{group}' needs a '+' (it is not in the defaults list of "
            f"conf/config.yaml): write +{arg}"
        )
    if key.startswith("~"):
        return
    for option in value.split(","):
        if _OPTION.fullmatch(option) and option not in (*options, "null"):
            close = difflib.get_close_matches(option, options, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ConfigError(
                f"no option '{option}' in config group '{group}' (override '{arg}'); {hint}"
                f"choose one of {', '.join(options)}"
            )


def _check_override_types(argv: Iterable[str], keys: set[str], groups: set[str]) -> None:
    """Reject ``trainer.batch_size=abc`` as one line (Hydra would print a multi-line report).

    Sweeps (``a=1,2``) and anything Hydra cannot parse are left to Hydra.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf.errors import OmegaConfBaseException

    parser = OverridesParser.create()
    schema = OmegaConf.structured(Config)
    for arg in argv:
        key = arg.split("=", 1)[0] if "=" in arg else ""
        if arg.startswith("-") or key not in keys or key in groups:
            continue
        try:
            override = parser.parse_overrides([arg])[0]
            if override.is_sweep_override():
                continue
            value = override.value()
        except Exception:  # Hydra's own syntax errors
            continue
        default = OmegaConf.select(schema, key, default=None)
        if isinstance(default, bool) and not isinstance(value, bool):
            # OmegaConf would take 2 or "yes" as true: only true or false name a switch.
            raise ConfigError(
                f"invalid config value in override '{arg}': {key} is true or false, got {value!r}"
            )
        try:
            OmegaConf.update(schema, key, value, merge=True)
        except OmegaConfBaseException as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ConfigError(f"invalid config value in override '{arg}': {first}") from None


def check_no_credentials(argv: Iterable[str]) -> None:
    """Refuse a password inside ``tracking.uri=scheme://user:password@host`` before Hydra starts:
    Hydra writes the overrides as typed into the run's ``.hydra`` folder at once."""
    for arg in argv:
        key, _, value = arg.lstrip("+~").partition("=")
        if key != "tracking.uri" or not value:
            continue
        parts = urllib.parse.urlsplit(value.strip("'\""))
        if parts.password:
            host = parts.hostname or ""
            port = f":{parts.port}" if parts.port else ""
            raise ConfigError(
                f"tracking.uri carries a password ({parts.scheme}://***@{host}"
                f"{port}), which would be written to the run's files and your shell history; "
                f"set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD in the environment "
                f"and use tracking.uri={parts.scheme}://{host}{port}{parts.path}"
            )


def check_output_dir(argv: Iterable[str], cwd: str | None = None) -> None:
    """Fail with one line when Hydra could not create its output directory.

    Checks the fixed part of ``hydra.run.dir`` (``hydra.sweep.dir`` with ``-m``), default
    ``outputs/`` (``multirun/``) in the current directory: its nearest existing ancestor must be
    a writable directory.
    """
    argv = list(argv)
    multirun = "-m" in argv or "--multirun" in argv
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    target = "multirun" if multirun else "outputs"
    for arg in argv:
        if arg.startswith(f"{key}="):
            target = arg.split("=", 1)[1].strip("'\"")
    fixed = target.split("${", 1)[0]
    if not fixed:
        fixed = "."
    path = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(fixed)))
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        problem = f"{existing} is a file"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing} is not writable"
    else:
        return
    raise ConfigError(
        f"cannot create the output directory {target} ({problem}); run from a writable "
        f"directory or set {key}=/a/writable/dir"
    )


def config_groups() -> dict[str, tuple[str, ...]]:
    """Each config group under ``conf/`` and its options (the YAML files' stems)."""
    return {
        folder.name: tuple(sorted(p.stem for p in folder.glob("*.yaml")))
        for folder in sorted(CONF_DIR.iterdir())
        if folder.is_dir()
    }
