"""Mail for the offline model's tests by concept: one message from Ilse on a Monday morning
(the brief's), read by `body_actions` as the reader Alex."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.providers.offline._reading import body_actions

MON = "2026-11-02T08:05:00-05:00"  # the brief's morning
TODAY = dt.date(2026, 11, 2)
FROM = "Ilse Varga <ilse@kestrel.example>"
RELAY = "Bram Peeters via Partyful <noreply@partyful.example>"


def mail(body: str, subject: str = "Hello", **fields: Any) -> dict[str, Any]:
    message = {"id": "v1", "key": "mail:v1", "from": FROM, "subject": subject,
               "received_at": MON, "body": body}  # fmt: skip
    return message | fields


def found(body: str, subject: str = "Hello", **fields: Any) -> list[tuple[str, str | None]]:
    actions = body_actions(mail(body, subject, **fields), "Alex")
    return [(a.title, a.due.isoformat() if a.due else None) for a in actions]
