"""The one rule for showing a sender (dayflow.senders): hostile From values shown by a clean
name or by their address, ordinary ones as they were."""

from __future__ import annotations

import pytest

from dayflow.senders import (
    MAX_NAME,
    from_line,
    sender_address,
    sender_name,
    sender_parts,
    with_address,
)


@pytest.mark.parametrize(
    ("sender", "name", "address"),
    [
        ("Dana Whitfield <dana@x.example>", "Dana Whitfield", "dana@x.example"),
        ('"Whitfield, Dana" <dana@x.example>', "Whitfield, Dana", "dana@x.example"),
        ("Amy Lin, RN <nurse@x.example>", "Amy Lin, RN", "nurse@x.example"),
        ("dana@x.example", "", "dana@x.example"),
        ("<dana@x.example>", "", "dana@x.example"),
        ("Dana Whitfield", "Dana Whitfield", ""),
        ('"" <q@q.example>', "", "q@q.example"),
        ('Quote "" <q@q.example>', "Quote", "q@q.example"),
        ('"""" <q@q.example>', "", "q@q.example"),
        ("'' <q@q.example>", "", "q@q.example"),
        ("'Dana' <dana@x.example>", "Dana", "dana@x.example"),
        ('"   " <q@q.example>', "", "q@q.example"),
        ("   Dana    Whitfield   <dana@x.example>", "Dana Whitfield", "dana@x.example"),
        ("=?utf-8?q?Ren=C3=A9e_Dubois?= <renee@x.example>", "Renée Dubois", "renee@x.example"),
        ('"=?utf-8?b?w4lsb2RpZQ==?=" <e@x.example>', "Élodie", "e@x.example"),
        ("=?utf-8?q?broken <b@x.example>", "=?utf-8?q?broken", "b@x.example"),
        ('"ceo@bank.example" <x@evil.example>', "", "x@evil.example"),
        ("<ceo@bank.example> <x@evil.example>", "", "x@evil.example"),
        ("Dana\x07\x1b[31m <dana@x.example>", "Dana [31m", "dana@x.example"),
        ("Da\u202ena\u200b <dana@x.example>", "Dana", "dana@x.example"),
        ("Dana\r\nBcc: all@x <dana@x.example>", "Dana Bcc: all@x", "dana@x.example"),
        ("", "", ""),
        ("   ", "", ""),
    ],
)  # fmt: skip
def test_a_from_value_is_parted_into_a_clean_name_and_its_address(
    sender: str, name: str, address: str
) -> None:
    assert sender_parts(sender) == (name, address)


def test_a_name_is_shown_else_the_address_else_the_value_else_the_default() -> None:
    assert sender_name("Dana Whitfield <dana@x.example>") == "Dana Whitfield"
    assert sender_name('"" <q@q.example>') == "q@q.example"
    assert sender_name('"ceo@bank.example" <x@evil.example>') == "x@evil.example"
    assert sender_name("<>") == "<>"  # parses as neither: shown as written
    assert sender_name("") == "someone" and sender_name("  ", "them") == "them"
    assert sender_name(None) == "someone" and sender_name(42, "") == ""


def test_a_pair_and_a_party_dict_are_cleaned_as_a_from_value_is() -> None:
    assert sender_parts(("  Dana \t Whitfield ", " dana@x.example ")) == (
        "Dana Whitfield",
        "dana@x.example",
    )
    assert sender_name({"name": '""', "address": "q@q.example"}) == "q@q.example"
    assert sender_name({"name": "=?utf-8?q?Ren=C3=A9e?=", "address": ""}) == "Renée"
    assert sender_name({"address": "q@q.example"}) == "q@q.example"
    assert sender_name({}) == "someone" and sender_name(("", "")) == "someone"


def test_a_very_long_name_is_cut_to_max_name_with_an_ellipsis() -> None:
    name, address = sender_parts("Dana " * 500 + "<dana@x.example>")
    assert len(name) == MAX_NAME and name.endswith("…") and address == "dana@x.example"
    assert len(sender_name("X" * 5000)) == MAX_NAME


def test_with_address_and_from_line_show_the_same_cleaned_name() -> None:
    hostile = "=?utf-8?q?Ren=C3=A9e?=\x07 <renee@x.example>"
    assert with_address(hostile) == "Renée (renee@x.example)"
    assert from_line(hostile) == "Renée <renee@x.example>"
    assert sender_name(from_line(hostile)) == sender_name(hostile)  # a From line reparses
    assert with_address('"" <q@q.example>') == from_line('"" <q@q.example>') == "q@q.example"
    assert with_address("") == "someone" and from_line("", "?") == "?"


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("Doe, Jane <Jane@X.example>", "jane@x.example"),
        ('"Doe, Jane" <jane@x.example>', "jane@x.example"),
        ("jane@x.example", "jane@x.example"),
        (("Jane", "Jane@X.example"), "jane@x.example"),
        ("Jane Doe", ""),
        ("", ""),
    ],
)
def test_a_senders_address_survives_an_unquoted_comma_in_its_name(
    value: object, address: str
) -> None:
    assert sender_address(value) == address
