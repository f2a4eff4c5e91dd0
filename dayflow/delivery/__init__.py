"""Delivering a finished brief where the user reads: a Markdown file (a note in a vault), mail
to themselves over SMTP, a desktop notification, stdout.

Each delivery is a saved effect of the run's final step, keyed `deliver:<sink>`, made while the
driver still holds the run's lease and before the run is marked done. So a kill during delivery
leaves a pending final step, and `dayflow resume` finishes it: every sink with a saved outcome
is skipped, the rest are delivered. A failed delivery (an unreachable SMTP server) leaves the
run `failed` with the sink and host named, and `resume` tries that sink again.

What "never twice" means, per sink:

- `file:PATH` and `stdout` are idempotent, so they are simply redone when no outcome was
  saved. A file holds each run's brief in its own section between two comment lines: a redone
  delivery replaces that section with the same bytes (an atomic rename), and a later brief of
  the day (an update) is added below; the user's own lines in the note are never touched.
- `smtp` cannot make sending and recording one transaction. So: (1) an intent is saved with the
  Message-ID chosen for this (run, sink) before connecting; (2) the envelope and the body go to
  the server, but not the final `.` that makes it accept the message; (3) a `sending` mark is
  saved; (4) the `.` is sent and the server's 250 read; (5) the outcome is saved. A kill before
  (3) means the server never accepted anything: resume sends again, with the same Message-ID.
  A kill after (3) and before (5), one network round trip, means the server may have accepted
  it: resume does **not** send again; it records the delivery as *uncertain*, naming the
  Message-ID to look for, and says so in `show` and the run's note. Dayflow never sends a
  brief twice; in that one window it may, instead, not know whether it sent it once. A 4xx or
  5xx answer to the `.` is no such doubt: the server did not take the message, so a `refused`
  mark closes the attempt, the delivery fails (resumably), and resume makes attempt 2 (its
  marks `#sending.2`, `#refused.2`) with the same Message-ID. A connection lost after the `.`
  and before any answer is the window itself: recorded as uncertain at once, never resent.
- `notify` is the same with no intent step: a `sending` mark, then the notification, then the
  outcome; a kill in between is reported as uncertain, never shown twice; a notifier that
  exits non-zero showed nothing, and resume tries again.

The package's face is this module (`deliver_all` and the names callers use): `settings` (the
sinks and the [smtp] table), `effects` (the saved marks), one module per sink (`note`, `smtp`,
`notify`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dayflow.delivery.effects import (
    EFFECT_NAME,
    KEY_PREFIX,
    Attempt,
    Brief,
    EffectLog,
    Unanswered,
    attempt_of,
    describe,
    mark_key,
    uncertain_note,
)
from dayflow.delivery.note import section_marks, to_file, with_section
from dayflow.delivery.notify import one_thing, to_notify
from dayflow.delivery.settings import (
    SECURITY_MODES,
    SINK_KINDS,
    DeliveryFailed,
    Settings,
    SmtpConfig,
    check,
    file_target,
    from_document,
    parse_sink,
    smtp_config,
)
from dayflow.delivery.smtp import message_id, send_mail, smtp_reason, to_smtp

__all__ = [
    "EFFECT_NAME",
    "KEY_PREFIX",
    "SECURITY_MODES",
    "SINK_KINDS",
    "Brief",
    "DeliveryFailed",
    "EffectLog",
    "Report",
    "Settings",
    "SmtpConfig",
    "check",
    "deliver_all",
    "describe",
    "file_target",
    "from_document",
    "mark_key",
    "message_id",
    "one_thing",
    "parse_sink",
    "section_marks",
    "send_mail",
    "smtp_config",
    "smtp_reason",
    "with_section",
]


@dataclass
class Report:
    """What one pass over the sinks did."""

    delivered: list[str]
    uncertain: list[str]
    failed: list[str]


def deliver_all(
    sinks: list[str],
    brief: Brief,
    log: EffectLog,
    settings: Settings,
    kill: Callable[[str], None] = lambda point: None,
) -> Report:
    """Deliver `brief` to each sink that has no saved outcome yet; see the module docstring
    for what a kill at each point leaves."""
    report = Report([], [], [])
    for sink in sinks:
        key = KEY_PREFIX + sink
        if log.get(key) is not None:
            continue
        try:
            if sink == "stdout":
                detail = "printed on stdout"
            elif sink.startswith("file:"):
                detail = to_file(sink, brief)
            else:
                attempt, in_doubt = attempt_of(log, key)
                if in_doubt:  # killed between its `sending` mark and the answer
                    note = uncertain_note(sink, log)
                    log.save(key, note, is_error=True)
                    report.uncertain.append(note)
                    continue
                job = Attempt(brief, log, key, settings, kill, attempt)
                detail = to_smtp(job) if sink == "smtp" else to_notify(job)
        except DeliveryFailed as exc:
            report.failed.append(str(exc))
            continue
        except Unanswered as exc:
            log.save(key, str(exc), is_error=True)
            report.uncertain.append(str(exc))
            continue
        kill("after_send")
        log.save(key, detail)
        report.delivered.append(f"{sink}: {detail}")
    return report
