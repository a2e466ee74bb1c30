"""One front door: ``wgangp <command>`` runs the six commands, and every command takes its
arguments as ``key=value`` (the argparse ones too, their old ``--flags`` still working with a
note)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.docs import documented

from wgangp.__main__ import COMMANDS, main
from wgangp.cli import flags_of
from wgangp.errors import ConfigError


def test_help_lists_the_six_commands(capsys: pytest.CaptureFixture) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[3:]] == list(COMMANDS)
    assert set(COMMANDS) == {"train", "schema", "sample", "evaluate", "report", "sync"}


def test_an_unknown_command_is_one_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["sampel", "n=5"]) == 2
    assert (
        capsys.readouterr().err
        == "wgangp: error: unknown command 'sampel'; did you mean 'sample'?\n"
    )


def test_a_command_runs_as_its_module_does(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": [i / 3 for i in range(40)], "y": ["a"] * 35 + ["b"] * 5}).to_csv(path)
    from wgangp.schema import main as schema_main

    assert schema_main([f"data.path={path}", "data.label=y"]) == 0
    direct = capsys.readouterr().out
    assert main(["schema", f"data.path={path}", "data.label=y"]) == 0
    assert capsys.readouterr().out == direct


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("output_dir")
    parser.add_argument("--run")
    parser.add_argument("--n-synthetic", type=int)
    parser.add_argument("--new-split", action="store_true")
    return parser


def test_key_value_is_the_grammar_of_argparse_commands(capsys: pytest.CaptureFixture) -> None:
    argv = ["output_dir=out/date=2024", "run=abc", "n_synthetic=50", "new_split=true"]
    flags = flags_of(argv, _parser())
    assert flags == ["out/date=2024", "--run", "abc", "--n-synthetic", "50", "--new-split"]
    args = _parser().parse_args(flags)
    assert (args.output_dir, args.run, args.n_synthetic, args.new_split) == (
        "out/date=2024", "abc", 50, True,
    )  # fmt: skip
    assert flags_of(["new_split=false", "out"], _parser()) == ["out"]
    assert capsys.readouterr().err == ""  # no old spelling: no note


def test_the_old_spellings_still_work_with_one_note(capsys: pytest.CaptureFixture) -> None:
    assert flags_of(["out", "--run", "abc"], _parser()) == ["out", "--run", "abc"]
    assert capsys.readouterr().err == (
        "wgangp: note: --run is written run=... now, as every wgangp command takes its "
        "arguments (key=value); the old spelling still works\n"
    )


@pytest.mark.parametrize(
    ("arg", "line"),
    [
        ("runn=abc", "unknown argument 'runn' in 'runn=abc'; did you mean 'run'?"),
        ("new_split=yes", "new_split must be true or false, got 'new_split=yes'"),
    ],
)
def test_a_bad_key_is_one_line(arg: str, line: str) -> None:
    with pytest.raises(ConfigError) as err:
        flags_of([arg], _parser())
    assert str(err.value) == line
    documented(line)


@pytest.mark.slow
def test_the_argparse_commands_take_key_value(tmp_path: Path) -> None:
    """``wgangp sync output_dir=...`` and ``python -m wgangp.sync DIR`` are the same call, and
    ``wgangp evaluate`` names an unknown key in one line."""
    missing = tmp_path / "none"
    for cmd in (
        [sys.executable, "-m", "wgangp", "sync", f"output_dir={missing}"],
        [sys.executable, "-m", "wgangp.sync", str(missing)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.strip().startswith(f"wgangp: error: {missing} is not a directory")
    proc = subprocess.run(
        [sys.executable, "-m", "wgangp", "evaluate", "runn=abc"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "wgangp: error: unknown argument 'runn' in 'runn=abc'; did you mean 'run'?"
    )
