"""Writes bench/eval/precision/*.json (run once, before any rule of the offline model was read)."""

# ruff: noqa: E501 (the messages are kept on one line each, as written)
import hashlib
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent
ME = "Alex Morgan <alex.morgan@lumen.example>"
msgs = {}


def add(
    cat,
    id,
    frm,
    subject,
    at,
    body,
    actions=(),
    *,
    to=ME,
    cc=None,
    unread=True,
    snippet=None,
    list_id=None,
    has=None,
):
    m = {
        "id": id,
        "from": frm,
        "to": to,
        "subject": subject,
        "received_at": at,
        "unread": unread,
        "thread_id": "t" + hashlib.sha1(id.encode()).hexdigest()[:12],
    }
    if cc:
        m["cc"] = cc
    if list_id:
        m["list_id"] = list_id
    if snippet is None:
        flat = " ".join(body.split())
        snippet = flat if len(flat) <= 160 else flat[:157].rsplit(" ", 1)[0] + " ..."
    m["snippet"] = snippet
    m["body"] = body
    acts = [dict(title=t, due=d, requester=r) for t, d, r in actions]
    m["label"] = {
        "has_action": bool(acts) if has is None else has,
        "category": cat,
        "actions": acts,
    }
    msgs.setdefault(cat, []).append(m)


ALL = "all-staff@lumen.example"
# ---- fyi: broadcast polite imperatives (to everyone) ----
add(
    "fyi",
    "v1041",
    "Facilities <facilities@lumen.example>",
    "Lobby floor works this week",
    "2026-10-26T08:05:00-04:00",
    "Hi all,\n\nThe contractors start re-tiling the lobby on Tuesday. Please be careful with the wet floor near the east entrance and use the side door on Elm Street until Friday.\n\nThanks for your patience,\nFacilities team",
    to=ALL,
)
add(
    "fyi",
    "v1187",
    "Dana Whitfield <dana.whitfield@lumen.example>",
    "Reminder: holiday party",
    "2026-10-28T12:40:00-04:00",
    "Hello everyone,\n\nA quick note about the holiday party on December 11 at the Foundry. Please remember that partners are welcome, and please be mindful that the venue is cashless.\n\nSee you there!\nDana\nPeople Team",
    to=ALL,
)
add(
    "fyi",
    "v1263",
    "IT Service Desk <itdesk@lumen.example>",
    "Phishing attempts this week",
    "2026-10-29T10:15:00-04:00",
    "Team,\n\nWe have seen several phishing emails pretending to be from our payroll provider. Please be careful with links in unexpected messages, and please do not enter your password on any page you reached from an email.\n\nIf in doubt, forward it to security@lumen.example.\n\nIT Service Desk",
    to=ALL,
)
add(
    "fyi",
    "v1322",
    "Marco Bellini <marco.bellini@lumen.example>",
    "Kitchen",
    "2026-10-30T15:02:00-04:00",
    "Hi all - please be considerate and take your lunch containers home before the weekend. The cleaners are off on Monday.\n\nMarco",
    to="lumen-nyc@lumen.example",
)
# ---- fyi: confidentiality requests ----
add(
    "fyi",
    "v2059",
    "Priya Raman <priya.raman@lumen.example>",
    "Org change (not yet public)",
    "2026-10-27T17:20:00-04:00",
    "Alex,\n\nHeads up before Thursday's announcement: Jamal is moving over to lead the platform group, and his pricing work will sit with your team from December. Please keep this confidential until Thursday.\n\nPriya",
)
add(
    "fyi",
    "v2144",
    "Helen Osei <helen.osei@lumen.example>",
    "Acquisition talks",
    "2026-10-29T19:05:00-04:00",
    "Alex - the board met today and the Northwind talks are moving ahead. Nothing is signed yet. Please keep this between us for now; I'll brief the wider team when we have a term sheet.\n\nHelen",
)
add(
    "fyi",
    "v2218",
    "Tom Avery <tom.avery@lumen.example>",
    "Re: offer for Sana",
    "2026-10-30T11:48:00-04:00",
    "She accepted! Starting January 4. Please don't share it with the team yet, we want her to tell her current manager first.\n\nTom\n\nOn Thu, Oct 29, 2026 at 4:10 PM Alex Morgan wrote:\n> Any news from Sana?",
    unread=False,
)
# ---- fyi: the sender's own promise ----
add(
    "fyi",
    "v3071",
    "Ravi Kapoor <ravi.kapoor@lumen.example>",
    "Re: Q3 deck typo",
    "2026-10-27T09:30:00-04:00",
    "Good catch, thanks Alex. I'll send you the corrected deck by Wednesday.\n\nRavi",
)
add(
    "fyi",
    "v3156",
    "Lena Fischer <lena.fischer@partner.example>",
    "Contract draft",
    "2026-10-28T14:12:00-04:00",
    "Hi Alex,\n\nOur legal team is still reviewing clause 7. I will get back to you with their comments early next week, and I'll share the redlined version as soon as I have it.\n\nBest regards,\nLena",
)
add(
    "fyi",
    "v3240",
    "Owen Brooks <owen.brooks@lumen.example>",
    "Following up on the outage",
    "2026-10-30T16:55:00-04:00",
    "Alex, we found the root cause (an expired certificate on the staging proxy). I'm going to write up the postmortem over the weekend and will send it to you on Monday morning.\n\nOwen",
)
add(
    "fyi",
    "v3318",
    "Grace Liu <grace.liu@vendor.example>",
    "Invoice 4471",
    "2026-11-01T20:30:00-05:00",
    "Hello Alex, apologies for the wrong amount on invoice 4471. We'll issue a corrected invoice tomorrow and I'll make sure it reaches you before your month-end close.\n\nKind regards,\nGrace Liu\nAccounts, Vendor Co",
)
# ---- fyi: a request addressed to someone else, Alex only in Cc ----
add(
    "fyi",
    "v4027",
    "Priya Raman <priya.raman@lumen.example>",
    "Q4 numbers",
    "2026-10-27T10:05:00-04:00",
    "Mira, could you send Ravi the Q4 numbers by Thursday? He needs them for the forecast.\n\nThanks,\nPriya",
    to="Mira Santos <mira.santos@lumen.example>",
    cc=ME,
)
add(
    "fyi",
    "v4119",
    "Jamal Hughes <jamal.hughes@lumen.example>",
    "Pricing page copy",
    "2026-10-28T13:30:00-04:00",
    "Hi Sofia,\n\nCan you please review the new pricing page copy and send your edits to Ben before Friday? Alex is copied for visibility.\n\nJamal",
    to="Sofia Perez <sofia.perez@lumen.example>",
    cc=[ME, "Ben Carter <ben.carter@lumen.example>"],
)
add(
    "fyi",
    "v4205",
    "Helen Osei <helen.osei@lumen.example>",
    "Offsite logistics",
    "2026-10-29T09:12:00-04:00",
    "Tom, please book the bus for the offsite and confirm the headcount with the hotel.\n\nThanks, Helen",
    to="Tom Avery <tom.avery@lumen.example>",
    cc=ME,
)
# ---- automated: mailing-list posts with list headers ----
add(
    "automated",
    "v5033",
    "Kenji Watanabe <kenji@lists.pyconf.example>",
    "Re: [dev] slow CI on the arm runners",
    "2026-10-27T06:40:00-04:00",
    "The arm runners are queued behind the nightly builds. Be patient, the backlog clears by noon UTC most days. If you need a run sooner, restart it from the Actions tab once the nightlies are done and it will jump the queue.\n\n-- \nKenji\n_______________________________________________\ndev mailing list\ndev@lists.pyconf.example\nhttps://lists.pyconf.example/mailman/listinfo/dev",
    to="dev@lists.pyconf.example",
    list_id="<dev.lists.pyconf.example>",
)
add(
    "automated",
    "v5121",
    "Ana Costa <ana.costa@lists.sqlite-users.example>",
    "Re: WAL checkpoint starvation",
    "2026-10-28T22:10:00-04:00",
    "> Should we run the checkpoint from a separate connection?\n\nYes. Make sure the reader transactions are short, otherwise the checkpoint can never reach the end of the WAL. Call wal_checkpoint(TRUNCATE) during a quiet period and check the return value, it tells you how many frames were written back.\n\nAna\n--\nsqlite-users mailing list\nhttps://lists.sqlite-users.example/listinfo",
    to="sqlite-users@lists.sqlite-users.example",
    list_id="SQLite users <sqlite-users.lists.sqlite-users.example>",
)
add(
    "automated",
    "v5208",
    "Pieter de Vries <pieter@lists.opensched.example>",
    "[opensched] 3.2 release candidate",
    "2026-10-30T05:20:00-04:00",
    "Hi all,\n\nRC1 of 3.2 is tagged. Please test it on your setups and report regressions on the tracker, not on this list. Upgrade notes: drop the old cron syntax before upgrading, and keep a backup of your config.\n\nThanks to everyone who sent patches.\nPieter\n\n---\nYou are receiving this because you are subscribed to opensched-users. Unsubscribe: https://lists.opensched.example/unsub",
    to="opensched-users@lists.opensched.example",
    list_id="<opensched-users.lists.opensched.example>",
)
add(
    "automated",
    "v5290",
    "Bruno Lima <bruno@lists.rustfmt.example>",
    "Re: formatting of long where clauses",
    "2026-11-01T13:45:00-05:00",
    "I'd keep it as is. Try the nightly with `where_single_line = true` and compare, but please note that option is unstable and may go away.\n\nBruno\n\n_______________________________________________\nrustfmt-users mailing list",
    to="rustfmt-users@lists.rustfmt.example",
    list_id="<rustfmt-users.lists.rustfmt.example>",
)
# ---- multiple asks in one message ----
add(
    "multiple",
    "v6012",
    "Priya Raman <priya.raman@lumen.example>",
    "Before the board meeting",
    "2026-10-26T09:20:00-04:00",
    "Alex,\n\nCould you send me the updated roadmap slide by Wednesday? Also, please book the large conference room for the dry run on Thursday. And can you ask Jamal for the churn figures?\n\nThanks,\nPriya",
    [
        ("Send updated roadmap slide to Priya", "2026-10-28", "Priya Raman"),
        ("Book large conference room for dry run", None, "Priya Raman"),
        ("Ask Jamal for churn figures", None, "Priya Raman"),
    ],
)
add(
    "multiple",
    "v6098",
    "Ben Carter <ben.carter@lumen.example>",
    "onboarding for Sana",
    "2026-10-27T14:35:00-04:00",
    "Hey Alex, two things for Sana's first week: please order her a laptop by Friday, and could you add her to the product-leads channel? Cheers, Ben",
    [
        ("Order laptop for Sana", "2026-10-30", "Ben Carter"),
        ("Add Sana to product-leads channel", None, "Ben Carter"),
    ],
)
add(
    "multiple",
    "v6175",
    "Helen Osei <helen.osei@lumen.example>",
    "Budget review",
    "2026-10-29T08:50:00-04:00",
    "Hi Alex,\n\nThanks for the draft. Can you cut the travel line by 10% and resend it to me tomorrow? Please also check the contractor costs with finance before the review on the 5th.\n\nHelen",
    [
        ("Cut travel line by 10% and resend budget to Helen", "2026-10-30", "Helen Osei"),
        ("Check contractor costs with finance", "2026-11-05", "Helen Osei"),
    ],
)
add(
    "multiple",
    "v6240",
    "Mira Santos <mira.santos@lumen.example>",
    "Re: customer visit",
    "2026-10-30T10:25:00-04:00",
    "Sure, I'll host them in the morning. Could you prepare the demo account and send me the agenda by Monday? Also please confirm the visitor badges with reception.\n\nMira",
    [
        ("Prepare demo account", None, "Mira Santos"),
        ("Send agenda to Mira", "2026-11-02", "Mira Santos"),
        ("Confirm visitor badges with reception", None, "Mira Santos"),
    ],
)
add(
    "multiple",
    "v6333",
    "Laura Kim <laura.kim@school.example>",
    "Field trip",
    "2026-11-01T18:05:00-05:00",
    "Dear Alex,\n\nFor Thursday's field trip, please sign the permission slip and return it by Wednesday. Could you also let me know whether you can chaperone?\n\nBest,\nMs. Kim",
    [
        ("Sign and return permission slip", "2026-11-04", "Laura Kim"),
        ("Tell Ms. Kim whether you can chaperone", None, "Laura Kim"),
    ],
)
# ---- relative dates ----
add(
    "relative",
    "v7044",
    "Ravi Kapoor <ravi.kapoor@lumen.example>",
    "forecast inputs",
    "2026-10-29T11:00:00-04:00",
    "Alex, can you get me your team's forecast inputs by end of next week? Ravi",
    [("Send team forecast inputs to Ravi", "2026-11-06", "Ravi Kapoor")],
)
add(
    "relative",
    "v7128",
    "Sofia Perez <sofia.perez@lumen.example>",
    "review copy",
    "2026-10-30T16:40:00-04:00",
    "Hi Alex, could you review the launch blog post tomorrow EOD? It's short. Sofia",
    [("Review launch blog post", "2026-10-31", "Sofia Perez")],
)
add(
    "relative",
    "v7210",
    "Tom Avery <tom.avery@lumen.example>",
    "hiring panel",
    "2026-10-27T13:15:00-04:00",
    "Alex, please send me your interview feedback for the designer candidates by the 19th.\n\nTom",
    [("Send interview feedback to Tom", "2026-11-19", "Tom Avery")],
)
add(
    "relative",
    "v7295",
    "Ben Carter <ben.carter@lumen.example>",
    "Late one, sorry",
    "2026-11-02T03:30:00Z",
    "Alex, sorry for the late mail. Could you approve the vendor PO tomorrow morning? Ben",
    [("Approve vendor PO", "2026-11-02", "Ben Carter")],
)
add(
    "relative",
    "v7361",
    "Jamal Hughes <jamal.hughes@lumen.example>",
    "pricing sign-off",
    "2026-10-30T09:10:00-04:00",
    "Alex, please sign off the pricing tiers by Monday so legal can start.\n\nJamal",
    [("Sign off pricing tiers", "2026-11-02", "Jamal Hughes")],
)
add(
    "relative",
    "v7430",
    "Grace Liu <grace.liu@vendor.example>",
    "PO number",
    "2026-10-27T01:45:00Z",
    "Hi Alex, could you send me the PO number for the November order by Wednesday?\n\nThanks, Grace",
    [("Send PO number to Grace", "2026-10-28", "Grace Liu")],
)
add(
    "relative",
    "v7512",
    "Helen Osei <helen.osei@lumen.example>",
    "quarterly letter",
    "2026-11-01T21:15:00-05:00",
    "Alex, can you draft your section of the quarterly letter by Friday? Helen",
    [("Draft section of quarterly letter", "2026-11-06", "Helen Osei")],
)
add(
    "relative",
    "v7588",
    "Dana Whitfield <dana.whitfield@lumen.example>",
    "reviews",
    "2026-10-28T10:30:00-04:00",
    "Hi Alex, please finish the self-reviews for your reports by the end of the month.\n\nDana",
    [("Finish self-reviews for reports", "2026-10-31", "Dana Whitfield")],
)
# ---- positives among the classes (the rules must not lose them) ----
add(
    "deadline",
    "v8034",
    "Facilities <facilities@lumen.example>",
    "Your desk move",
    "2026-10-28T09:40:00-04:00",
    "Hi Alex,\n\nWe're moving the product team to the 4th floor next week. Please pack your desk into the crates by Thursday evening; labels are in the crate.\n\nThanks,\nFacilities",
)
msgs["deadline"][-1]["label"] = {
    "has_action": True,
    "category": "deadline",
    "actions": [dict(title="Pack desk into crates", due="2026-10-29", requester="Facilities")],
}
add(
    "deadline",
    "v8117",
    "Ravi Kapoor <ravi.kapoor@lumen.example>",
    "Re: Q3 deck",
    "2026-10-29T15:20:00-04:00",
    "I'll send you the final numbers tonight. Could you check the chart labels on slide 4 before Friday?\n\nRavi",
    [("Check chart labels on slide 4", "2026-10-30", "Ravi Kapoor")],
)
add(
    "no_deadline",
    "v8202",
    "Priya Raman <priya.raman@lumen.example>",
    "Re: Q4 numbers",
    "2026-10-28T10:40:00-04:00",
    "Mira is sending Ravi the numbers. Alex, could you double-check the churn assumptions before she does?\n\nPriya",
    [("Double-check churn assumptions", None, "Priya Raman")],
    to="Mira Santos <mira.santos@lumen.example>",
    cc=ME,
)
add(
    "no_deadline",
    "v8290",
    "Helen Osei <helen.osei@lumen.example>",
    "Northwind",
    "2026-10-31T10:00:00-04:00",
    "Alex, please keep this confidential: we need a short summary of the Northwind integration risks from you. Can you write one up?\n\nHelen",
    [("Write summary of Northwind integration risks", None, "Helen Osei")],
)

for cat, ms in msgs.items():
    (OUT / f"{cat}.json").write_text(
        json.dumps(ms, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
print({k: len(v) for k, v in msgs.items()}, sum(len(v) for v in msgs.values()))
