"""The histories benchmark's external tables, written by simulators no one here wrote, in their own
environment (``bash scripts/histories_benchmark/setup_envs.sh fixtures``):

    .bench-envs/histfixtures/bin/python -m scripts.bench.peers.history_tables \
        --table synccfd --customers 2000 --days 30 --seed 0 --out TABLE.parquet

- ``synccfd`` (synccfd 0.1.0): the Fraud Detection Handbook's simulator (Le Borgne et al.)
  extended: customers near terminals, card-present and card-not-present rows, and four fraud
  scenarios (amounts over 220, compromised terminals for 28 days, stolen card numbers for 14
  days, stolen cards for 5 days). Kept: customer, time, amount, terminal, type, fraud.
- ``aml`` (synthfin-aml 9.2.0): an account-to-account transfer graph with mules, brokers and
  laundering chains (structuring, layering, round trips within an hour or so). A history is a
  sending account's transfers; the receiving account is the shared id.

Prints one JSON line: rows, entities, fraud rows, seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time


def synccfd_table(customers: int, days: int, seed: int):
    from synccfd import DatasetGenerator

    generator = DatasetGenerator(
        n_customers=customers,
        n_terminals=2 * customers,
        nb_days=days,
        start_date="2025-03-01",
        random_state=seed,
    )
    _, _, transactions = generator.generate()
    table = transactions.rename(
        columns={
            "CUSTOMER_ID": "customer_id",
            "TX_DATETIME": "ts",
            "TX_AMOUNT": "amount",
            "TERMINAL_ID": "terminal_id",
            "TX_TYPE": "tx_type",
            "TX_FRAUD": "is_fraud",
        }
    )[["customer_id", "ts", "amount", "terminal_id", "tx_type", "is_fraud"]]
    table["customer_id"] = "C" + table["customer_id"].astype(int).astype(str).str.zfill(6)
    table["terminal_id"] = "T" + table["terminal_id"].astype(int).astype(str).str.zfill(6)
    table["is_fraud"] = table["is_fraud"].astype(int)
    return table


def aml_table(customers: int, days: int, seed: int):
    from synthfin_aml_pkg.generator import FraudGraphGenerator

    generator = FraudGraphGenerator(seed=seed).generate_transactions(
        agents=customers, days=days, start_date="2025-03-01"
    )
    transfers = generator.transactions
    return transfers.rename(columns={"source_id": "account_id", "target_id": "counterparty"})[
        ["account_id", "timestamp", "amount", "counterparty", "is_fraud"]
    ].assign(
        account_id=lambda t: "A" + t["account_id"].astype(str).str.zfill(6),
        counterparty=lambda t: "A" + t["counterparty"].astype(str).str.zfill(6),
        amount=lambda t: t["amount"].round(2),
        is_fraud=lambda t: t["is_fraud"].astype(int),
    )


TABLES = {"synccfd": synccfd_table, "aml": aml_table}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.peers.history_tables")
    parser.add_argument("--table", choices=sorted(TABLES), required=True)
    parser.add_argument("--customers", type=int, default=2000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # the simulators print progress
        table = TABLES[args.table](args.customers, args.days, args.seed)
    table = table.sort_values(list(table.columns[:2]), kind="stable").reset_index(drop=True)
    table.to_parquet(args.out, index=False)
    print(
        json.dumps(
            {
                "table": args.table,
                "rows": len(table),
                "entities": int(table.iloc[:, 0].nunique()),
                "fraud_rows": int(table["is_fraud"].sum()),
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
