"""``wgangp <command> key=value ...``: the six commands behind one name (``python -m wgangp``).

    wgangp train +experiment=stable_gp trainer.steps=2000
    wgangp schema data.path=loans.csv data.label=Status
    wgangp sample model_uri=runs:/<id> n=1000 label=bad output=bad.csv
    wgangp evaluate run=<id>
    wgangp report experiment=nan_ablation
    wgangp sync output_dir=outputs/<date>/<time>

Each runs exactly what ``python -m wgangp.<command>`` runs with the same arguments, and every
one takes them as ``key=value`` (training's are Hydra overrides); ``wgangp <command> --help``
shows a command's keys. The ``python -m`` spellings stay.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Sequence

#: Each command and what it does, in the order a user meets them.
COMMANDS = {
    "train": "train a synthesizer (Hydra: +experiment=NAME, key=value overrides)",
    "schema": "print a table's schema, or check an edited one",
    "sample": "draw rows from a run, a registered model or a bundle folder",
    "evaluate": "evaluate a run again on the split it trained on",
    "report": "the ablation sweep's table from MLflow",
    "sync": "replay the MLflow calls an outage kept",
}
USAGE = "usage: wgangp <command> [key=value ...]\n\ncommands:\n" + "\n".join(
    f"  {name:9s} {what}" for name, what in COMMANDS.items()
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``argv[0]``'s command on the rest; its exit code (2 and one line for an unknown one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"one of {', '.join(COMMANDS)}"
        print(f"wgangp: error: unknown command '{name}'; {hint}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"wgangp.{name}")
    # As ``python -m wgangp.<name>`` starts it: Hydra (train) reads sys.argv itself.
    sys.argv = [str(module.__file__), *rest]
    code = module.main()
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
