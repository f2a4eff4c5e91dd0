"""The offline model's brief: "One thing" puts an ask to be done now (its own deadline "right
away", "now", "ASAP") over one merely dated today, and says what it is about."""

from __future__ import annotations

from dayflow.providers.offline._brief import _Need, _one_thing
from dayflow.providers.offline._reading import body_actions, urgent_action
from tests.offline_mail import TODAY, mail


def test_an_ask_to_be_done_right_away_is_urgent_though_the_snippet_cut_it_off() -> None:
    body = ("Hi Alex, the badge reader logged your card at two doors at once. Please don't "
            "badge in again and bring your card to the front desk right away.")  # fmt: skip
    message = mail(body, "your badge", snippet=body[:70] + "…")
    [action] = body_actions(message, "Alex")
    assert action.title.startswith("Bring") and action.due == TODAY
    assert urgent_action(action)
    calm = body_actions(mail("Could you file the expense report today?", "expenses"), "Alex")
    assert calm[0].due == TODAY and not urgent_action(calm[0])


def test_one_thing_puts_the_urgent_same_day_ask_first_and_says_what_it_is_about() -> None:
    needs = [
        _Need("Join war room", "Bo", TODAY, True, "k1", "SEV2: invoices not sending"),
        _Need("Prepare slides", "Cy", TODAY, False, "k2"),
    ]
    assert _one_thing(needs, [], TODAY, []) == (
        "**Join war room (SEV2: invoices not sending), due today.**"
    )
    # a title that already says it needs no more
    said = [
        _Need("Call Bo about invoices not sending", "Bo", TODAY, True, "k", "invoices not sending")
    ]
    assert _one_thing(said, [], TODAY, []) == "**Call Bo about invoices not sending, due today.**"
