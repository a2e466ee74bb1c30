"""A card-transactions table of customers from five countries, 1 to 200 rows each and no account
column: every identifier a customer's rows repeat, in many national formats, beside free text in
four languages that holds their e-mails, phones and beneficiaries' names, and their dates of
birth, home coordinates and card's last four digits (issue 67's table, wider).

:func:`planted` lists what must never ship, by kind, as written in the table.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid

import numpy as np
import pandas as pd

COUNTRIES = ("UK", "FR", "DE", "US", "ES")
GIVEN = {
    "UK": ("Oliver", "Amelia", "George", "Isla", "Harry", "Emily"),
    "FR": ("Jean", "Camille", "Louis", "Chloé", "Hugo", "Léa"),
    "DE": ("Lukas", "Anna", "Felix", "Lena", "Jonas", "Mia"),
    "US": ("James", "Olivia", "Michael", "Emma", "Daniel", "Ava"),
    "ES": ("María", "Javier", "Lucía", "Carlos", "Sofía", "Pablo"),
}
SURNAMES = {
    "UK": ("Smith", "Taylor", "Brown", "Wilson", "Evans", "Walker"),
    "FR": ("Dupont", "Moreau", "Lefèvre", "Girard", "Fontaine", "Rousseau"),
    "DE": ("Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Wagner"),
    "US": ("Johnson", "Miller", "Davis", "Garcia", "Rodriguez", "Martinez"),
    "ES": ("García", "Fernández", "López", "Martín", "Sánchez", "Romero"),
}
#: A beneficiary 8 customers pay (a level 8 entities hold), and one that only memos name.
SHARED_BENEFICIARY = "Marta Kowalska"
MEMO_ONLY_BENEFICIARY = "Peter Novak"
HOMES = {"UK": (51.5072, -0.1276), "FR": (48.8566, 2.3522), "DE": (52.52, 13.405),
         "US": (40.7128, -74.006), "ES": (40.4168, -3.7038)}  # fmt: skip
MERCHANTS = tuple(f"{a} {b}" for a in ("Blue", "Corner", "Metro", "Sunny", "Royal", "Green")
                  for b in ("Grocer", "Fuel", "Books", "Cafe", "Travel"))  # fmt: skip
SHARED_MEMOS = {
    "en": ("online purchase", "grocery shopping", "monthly subscription"),
    "fr": ("achat en ligne", "courses alimentaires"),
    "de": ("Online-Einkauf", "Lebensmitteleinkauf"),
    "es": ("compra en línea", "compra de comestibles"),
}
CONTACT_MEMOS = {
    "en": ("refund request, contact {email}", "please call {phone} about the charge"),
    "fr": ("demande de remboursement, contactez {email}", "merci de rappeler au {phone}"),
    "de": ("Rückerstattung, Kontakt {email}", "bitte rufen Sie {phone} an"),
    "es": ("solicitud de reembolso, contacto {email}", "por favor llame al {phone}"),
}
TRANSFER_MEMOS = {
    "en": "transfer to {name}", "fr": "virement à {name}", "de": "Überweisung an {name}",
    "es": "transferencia a {name}",
}  # fmt: skip
LANGUAGE = {"UK": "en", "US": "en", "FR": "fr", "DE": "de", "ES": "es"}


def ascii_folded(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def luhn_completed(body: str) -> str:
    digits = [int(d) for d in reversed(body)]
    total = sum(d if i % 2 else sum(divmod(2 * d, 10)) for i, d in enumerate(digits))
    return body + str((10 - total % 10) % 10)


def _phone(country: str, c: int, international: bool) -> str:
    n = 100000 + 37 * c
    local = {
        "UK": (f"07700 {n:06d}", f"+44 7700 {n:06d}"),
        "FR": (f"06 {n // 10000 % 100:02d} {n // 100 % 100:02d} {n % 100:02d} 4{c % 10}",
               f"+33 6 {n // 10000 % 100:02d} {n // 100 % 100:02d} {n % 100:02d} 4{c % 10}"),
        "DE": (f"0151 2{n:07d}", f"+49 151 2{n:07d}"),
        "US": (f"(555) {200 + c % 700:03d}-{n % 10000:04d}",
               f"+1 555 {200 + c % 700:03d} {n % 10000:04d}"),
        "ES": (f"612 {n // 10000 % 100:02d} {n // 100 % 100:02d} {n % 100:02d}",
               f"+34 612 {n // 10000 % 100:02d} {n // 100 % 100:02d} {n % 100:02d}"),
    }  # fmt: skip
    return local[country][int(international)]


def _national_id(country: str, c: int) -> str:
    if country == "US":
        return f"{100 + c % 500:03d}-{10 + c % 89:02d}-{1000 + 7 * c:04d}"
    if country == "UK":
        prefix, suffix = "ABCEGHJ"[c % 7] + "ABCEHJKL"[c % 8], "ABCD"[c % 4]
        return f"{prefix} {c % 90 + 10} {c * 7 % 90 + 10} 3{c % 10} {suffix}"
    if country == "FR":
        body = f"{1 + c % 2}{60 + c % 40:02d}{1 + c % 12:02d}75{100 + c:03d}{200 + c:03d}"
        return f"{body}{97 - int(body) % 97:02d}"
    if country == "ES":
        number = 10000000 + 7919 * c
        return f"{number}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"
    body = [1 + c % 9, *((c // 10**i + i) % 10 for i in range(9))]  # DE Steuer-ID, ISO 7064
    product = 10
    for digit in body:
        total = (digit + product) % 10 or 10
        product = total * 2 % 11
    return "".join(map(str, body)) + str((11 - product) % 10)


def _plate(country: str, c: int) -> str:
    letters = "ABCDEFGHJKLMNPRSTVWXYZ"
    a, b, d = letters[c % 22], letters[c // 22 % 22], letters[(c * 7) % 22]
    return {
        "UK": f"{a}{b}{10 + c % 60} {d}{a}{b}", "FR": f"{a}{b}-{100 + c:03d}-{d}{a}",
        "DE": f"M-{a}{b} {1000 + c}", "US": f"{c % 9 + 1}{a}{b}{d}{100 + c:03d}",
        "ES": f"{1000 + c} {b}{c % 2 and 'C' or 'D'}{d}",
    }[country]  # fmt: skip


def _postcode(country: str, c: int) -> str:
    return {
        "UK": f"SW{c % 9 + 1}A {c % 9 + 1}{'ABDEFG'[c % 6]}{'HJLNPQ'[c // 6 % 6]}",
        "FR": f"{75001 + c % 20:05d}" if c % 3 else f"{69001 + c % 9:05d}",
        "DE": f"{10115 + 3 * c:05d}", "US": f"{94102 + c:05d}", "ES": f"{28001 + c:05d}",
    }[country]  # fmt: skip


def _email(given: str, surname: str, c: int, style: int) -> str:
    local, domain = ascii_folded(f"{given}.{surname}").lower() + str(c), "example"
    return (f"{local}@{domain}.com", f"{local} at {domain} dot com", f"{local}[at]{domain}.org",
            f"{local} (at) {domain} (dot) net")[style]  # fmt: skip


#: The column names of each layout: as named here, as a team might export them, and names that
#: say nothing (content alone tells).
SEMANTIC = (
    "customer", "cardholder", "beneficiary", "email", "phone", "mac", "device_id", "national_id",
    "username", "plate", "ip", "postcode", "dob", "home_lat", "home_lon", "card_last4",
)  # fmt: skip
LAYOUTS = {
    "named": dict(zip(SEMANTIC, SEMANTIC, strict=True)),
    "exported": dict(
        zip(
            SEMANTIC,
            (
                "Customer",
                "CardHolder",
                "Beneficiary",
                "contact",
                "tel",
                "hw_addr",
                "device",
                "nid",
                "login",
                "vehicle",
                "last_seen_from",
                "area",
                "geburtsdatum",
                "lat",
                "lng",
                "pan_tail",
            ),
            strict=True,
        )
    ),  # fmt: skip
    "neutral": {name: f"f{i:02d}" for i, name in enumerate(SEMANTIC)},
}


def customers_table(
    customers: int = 150, rows: tuple[int, int] = (1, 200), seed: int = 0, layout: str = "named"
) -> pd.DataFrame:
    """``customers`` customers, each with a number of rows drawn log-uniformly in ``rows``, their
    columns named as ``layout`` says (:data:`LAYOUTS`). A customer in four holds two phones
    (national and international, half their rows each): no column is one-to-one with another."""
    rng = np.random.default_rng(seed)
    lo, hi = rows
    each = np.clip(np.round(np.exp(rng.uniform(np.log(lo), np.log(hi + 0.5), customers))), lo, hi)
    people = []
    for c in range(customers):
        country = COUNTRIES[c % 5]
        given, surname = GIVEN[country][c // 5 % 6], SURNAMES[country][c // 30 % 6]
        born = pd.Timestamp("1940-01-02") + pd.Timedelta(days=int(rng.integers(0, 23000)))
        if born.dayofyear == 1:
            born += pd.Timedelta(days=1)
        lat, lon = HOMES[country]
        device = (hashlib.sha256(f"d{c}".encode()).hexdigest()[:16] if c % 2 else
                  str(uuid.uuid5(uuid.NAMESPACE_DNS, f"device{c}")))  # fmt: skip
        other = COUNTRIES[(c + 2) % 5]
        payee = f"{GIVEN[other][c % 6]} {SURNAMES[other][c // 6 % 6]}"
        name = f"{given} {surname}"
        people.append({
            "customer": name,
            "cardholder": name.upper() if c % 3 == 0 else name,
            "beneficiary": SHARED_BENEFICIARY if c % 19 == 3 else payee,
            "email": _email(given, surname, c, c % 4),
            "phone": _phone(country, c, international=c % 2 == 1),
            "mac": ":".join(f"{(c * 37 + i * 11) % 256:02X}" for i in range(6)) if c % 2
            else "-".join(f"{(c * 53 + i * 7) % 256:02x}" for i in range(6)),
            "device_id": device,
            "national_id": _national_id(country, c),
            "username": ascii_folded(f"{given[0]}{surname}").lower() + f"_{c % 90 + 10}",
            "plate": _plate(country, c),
            "ip": f"203.0.{c % 250}.{c % 200 + 10}:{8000 + c}" if c % 2
            else f"[2001:db8::{c:x}]:443",
            "postcode": _postcode(country, c),
            "dob": born.strftime("%Y-%m-%d"),
            "home_lat": round(lat + rng.normal(0, 0.05), 5),
            "home_lon": round(lon + rng.normal(0, 0.05), 5),
            "card_last4": int(rng.integers(1000, 10000)),
            "language": LANGUAGE[country],
            "fraudster": c % 7 == 0,
        })  # fmt: skip
    who = np.repeat(np.arange(customers), each.astype(int))
    n = len(who)
    person = pd.DataFrame(people).iloc[who].reset_index(drop=True)
    fraud = person.pop("fraudster").to_numpy() & (rng.random(n) < 0.6)
    language = person.pop("language").to_numpy()
    memo = np.empty(n, dtype=object)
    draw = rng.random(n)
    draw[np.unique(who, return_index=True)[1]] = 0.9  # each customer's first row: a transfer
    for i in range(n):
        lang, c = language[i], who[i]
        if draw[i] < 0.55:
            memo[i] = SHARED_MEMOS[lang][i % len(SHARED_MEMOS[lang])]
        elif draw[i] < 0.8:
            template = CONTACT_MEMOS[lang][i % 2]
            email = (
                person.at[i, "email"]
                if "@" in person.at[i, "email"]
                else _email("x", ascii_folded(person.at[i, "customer"]).split()[1].lower(), c, 0)
            )
            memo[i] = template.format(email=email, phone=person.at[i, "phone"])
        else:
            name = MEMO_ONLY_BENEFICIARY if c % 23 == 5 else person.at[i, "beneficiary"]
            shared = name in (SHARED_BENEFICIARY, MEMO_ONLY_BENEFICIARY)
            memo[i] = TRANSFER_MEMOS["en" if shared else lang].format(name=name)
    start = pd.Timestamp("2024-03-01")
    ts = start + pd.to_timedelta(rng.integers(0, 90 * 86400, n), unit="s")
    two_phones = (who % 4 == 1) & (rng.random(n) < 0.5)
    person.loc[two_phones, "phone"] = [
        _phone(COUNTRIES[c % 5], c, international=False) for c in who[two_phones]
    ]
    frame = person.assign(
        memo=memo,
        merchant=np.array(MERCHANTS, dtype=object)[rng.integers(0, len(MERCHANTS), n)],
        amount=np.round(rng.lognormal(np.where(fraud, 5.0, 3.6), 0.8), 2),
        ts=ts.strftime("%Y-%m-%d %H:%M:%S"),
        status=np.where(fraud, "fraud", "ok"),
    )
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return frame.rename(columns=LAYOUTS[layout])


#: The columns that identify a customer: none may ship in any form.
IDENTIFIER_COLUMNS = (
    "customer", "cardholder", "beneficiary", "email", "phone", "mac", "device_id",
    "national_id", "username", "plate", "ip", "postcode", "card_last4",
)  # fmt: skip


def planted(frame: pd.DataFrame, layout: str = "named") -> dict[str, set[str]]:
    """What must never ship, by kind, as written (and phones, ids as bare digits too); the
    memos' e-mails and phones and the transfer names among them."""
    frame = frame.rename(columns={v: k for k, v in LAYOUTS[layout].items()})
    found: dict[str, set[str]] = {}
    for column in IDENTIFIER_COLUMNS:
        if column == "card_last4":
            continue  # 4 digits are everywhere: the column must be absent, checked elsewhere
        found[column] = {str(v) for v in frame[column]}
    found["phone digits"] = {"".join(ch for ch in v if ch.isdigit()) for v in found["phone"]}
    found["national_id digits"] = {
        "".join(ch for ch in v if ch.isdigit()) for v in found["national_id"] if len(v) > 11
    }
    found["dob"] = set(frame["dob"])
    seconds = (pd.to_datetime(frame["dob"]) - pd.Timestamp("1970-01-01")).dt.total_seconds()
    found["dob as seconds"] = {str(int(s)) for s in seconds}
    exact = {f"{v:.5f}".rstrip("0") for v in (*frame["home_lat"], *frame["home_lon"])}
    found["home coordinates"] = {v for v in exact if len(v.split(".")[1]) >= 3}  # not 48.9
    found["beneficiaries in memos"] = {SHARED_BENEFICIARY, MEMO_ONLY_BENEFICIARY}
    memos = " ".join(frame["memo"])
    found["memo e-mails"] = set(re.findall(r"[\w.+-]+@[\w.-]+\w", memos))
    found["memo phones"] = {v for v in found["phone"] if v in memos}
    return found
