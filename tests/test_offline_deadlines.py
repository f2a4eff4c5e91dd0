"""The offline model's deadlines, each on mail written for the test: "now" of the ask is today
but "for now" is no deadline, and a sentence opening with a deadline dates the ask before it."""

from __future__ import annotations

from tests.offline_mail import found


def test_now_of_the_ask_is_today_but_for_now_is_not_a_deadline() -> None:
    [(_, due)] = found("Need you in the ops channel now to approve the rollback.")
    assert due == "2026-11-02"
    assert all(d is None for _, d in found("For now, could you keep the old pricing page up?"))


def test_a_sentence_opening_with_a_deadline_dates_the_ask_before_it() -> None:
    body = "Could you send the venue the final guest list? By Wednesday would be great."
    assert found(body, "Gala") == [("Send venue final guest list", "2026-11-04")]
    # one that does not open with it stays the sentence's own
    later = "Could you send the venue the final guest list? The caterer wants it by Wednesday."
    assert found(later, "Gala")[0][1] == "2026-11-04"
