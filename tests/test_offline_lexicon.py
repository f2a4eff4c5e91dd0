"""The offline model's words per language are data (`_lexicon`), and its regexes are built
from them: a language's cue is one entry of a table, not a line of a hand-kept alternation."""

from __future__ import annotations

import re

import pytest

from dayflow.providers.offline import _clauses, _sentences
from dayflow.providers.offline._lexicon import (
    ASKING_OPENERS,
    GREETINGS,
    REQUEST_CUES,
    cues,
)

LANGUAGES = ("en", "de", "fr", "es")
TABLES = {
    "request": REQUEST_CUES,
    "greeting": GREETINGS,
    "asking": ASKING_OPENERS,
}


@pytest.mark.parametrize("name", TABLES)
def test_every_table_has_the_four_languages_and_fragments_that_compile(name: str) -> None:
    table = TABLES[name]
    assert tuple(table) == LANGUAGES
    for language, fragments in table.items():
        assert fragments, (name, language)
        for fragment in fragments:
            re.compile(fragment, re.IGNORECASE)


def test_the_regexes_are_built_from_the_tables() -> None:
    assert _clauses._CUE.pattern == cues(REQUEST_CUES) + r"\s+"
    assert cues(GREETINGS) in _sentences.VOCATIVE.pattern  # said once for both
    assert cues(GREETINGS) in _sentences._GREETING_WORD.pattern
    assert _sentences._ASKING.pattern == "^" + cues(ASKING_OPENERS)


@pytest.mark.parametrize(
    "sentence",
    ["Hi Marcus, can you send it?", "Liebe Anna, kannst du das schicken?",
     "Bonjour Luc, pourriez-vous l'envoyer ?", "Hola Tomás, ¿puedes enviarlo?"],
)  # fmt: skip
def test_each_languages_greeting_and_ask_speak_to_the_name(sentence: str) -> None:
    names, _ = _sentences.spoken_to(sentence, strict=True)
    assert names == [sentence.split()[1].rstrip(",")]


@pytest.mark.parametrize(
    ("language", "sentence", "cue"),
    [
        ("en", "Could you please send the deck by Friday?", "Could you please "),
        ("de", "Kannst du bitte die Folien schicken?", "Kannst du bitte "),
        ("fr", "Pourriez-vous relire le devis ?", "Pourriez-vous "),
        ("es", "¿Puedes revisar el contrato?", "¿Puedes "),
    ],
)
def test_each_languages_request_cue_is_found(language: str, sentence: str, cue: str) -> None:
    found = _clauses._CUE.search(sentence)
    assert found is not None and found.group(0) == cue
    alone = re.compile(rf"{cues({language: REQUEST_CUES[language]})}\s+", re.IGNORECASE)
    assert alone.search(sentence) is not None  # the language's own table has it
