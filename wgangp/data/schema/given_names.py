"""Common given names of the countries whose customers the product meets most (English-, French-,
German-, Spanish-, Italian-, Portuguese-, Dutch-, Polish- and Nordic-speaking, and frequent
Arabic, Turkish, Indian and Chinese ones), lower-cased, with and without accents.

They tell a person's name from other capitalised words: "transfer to Anna Schmidt" names a
person, "transfer to Blue Grocer" a shop. Names that are also common words (Bill, Mark, Grace,
May, Rose, Will, Frank, Dawn) are left out, so "Bill Payment" stays a phrase; a person of such a
name is found when another column holds their name (:mod:`wgangp.data.schema.identifier_patterns`).
"""

from __future__ import annotations

import unicodedata

_NAMES = """
aaron adam adrian ahmed aisha alan albert alejandro alessandro alex alexander alexandra alice
alicia alina amelia amir ana andrea andreas andrew andrzej angela anja ann anna anne annika
anthony antoine antonio arjun arthur astrid ava barbara beatriz benjamin bernard birgit brian
camille carla carlos carmen caroline catherine charles charlotte chloé christian christine
christopher claire clara claude daniel david deborah deepak denis diana diego dimitri dominik
edward elena elias elif elisabeth elizabeth ella emil emily emma emmanuel enzo eric erik esther
eva fatima felix fernando florian francesca francesco françois frederik gabriel george georg
gerhard giorgio giovanni giulia guillaume gustav hannah hans harry hassan heinz helen helena
henrik henry hiroshi hugo ibrahim ines ingrid isabel isabella isabelle isla ivan jakub james
jan jana javier jean jennifer jens jessica joanna johan johann johannes john jonas jorge josé
joseph josephine juan julia julian julien jürgen karin karl katarzyna katharina kevin klaus
krzysztof lars laura laurent lea léa lena leon leonie linda lisa lorenzo louis lucas lucía
luca lucie luis luisa lukas łukasz magdalena manuel marco margaret maria maría marie marek
marina mario marta martin martina mary matteo matthew matthias maximilian mehmet melanie mia
michael michał michel michelle miguel mohamed mohammed monika mustafa natalia nathalie nicolas
nicole niklas nils noah nora olga oliver olivia omar oscar pablo paolo patricia patrick paul
paula pedro peter petra philippe pierre piotr priya rafael rahul raquel rebecca richard robert
roberto rosa ryan sabine sandra sara sarah sebastian sergio silvia simon sofia sofía sophie
stefan stefanie stephanie steven susanne sven sylvie tatiana thomas tobias tomasz ursula
valentina valérie vanessa victoria vincent wei wojciech wolfgang xavier yasmin yusuf zoé
"""


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()


GIVEN_NAMES = frozenset(_NAMES.split()) | frozenset(_folded(name) for name in _NAMES.split())
