"""The commented starter config file `dayflow init` writes (every source kind, all commented)."""

STARTER = """\
# Dayflow's sources: where your mail and calendars are. Uncomment and edit what you use.
# Dayflow only reads: it never sends mail, never marks a message read, never changes a
# mailbox or a calendar. Passwords are never written here: give a command that prints one
# (password_command) or the name of an environment variable that holds it (password_env).
# `dayflow sources check` opens each source and says what it found (no model call).

# Who you are, for "You owe replies" and "Waiting on others" (top-level: keep these lines
# above the first [[inbox]]). Without `me`: every IMAP and SMTP user that is an address.
# me = ["you@example.org", "you@work.example"]
# waiting_after_days = 2        # working days without an answer before you are waiting on it
# followup_days = 14            # how many days of mail (inbox and sent) the two lists read

# A local Maildir, e.g. the one mbsync (isync) or offlineimap keeps in sync:
# [[inbox]]
# name = "personal"
# kind = "maildir"              # maildir | mbox | eml | imap | json
# path = "~/Mail/personal/INBOX"
# sent = "~/Mail/personal/Sent"  # your sent mail: a Maildir, an mbox or a folder of .eml

# Gmail over IMAP with an app password (Google account > Security > App passwords):
# [[inbox]]
# name = "gmail"
# kind = "imap"
# host = "imap.gmail.com"
# user = "you@gmail.com"
# password_command = "pass show mail/gmail-app-password"
# folders = ["INBOX"]
# sent = "[Gmail]/Sent Mail"    # default: the folder the server flags as Sent, else "Sent";
#                               # sent = false: the account has none (nothing looked for)
# security = "tls"              # tls (port 993, the default) | starttls (143) | plain
# timeout = 30                  # seconds

# Fastmail over IMAP with an app password:
# [[inbox]]
# name = "fastmail"
# kind = "imap"
# host = "imap.fastmail.com"
# user = "you@fastmail.com"
# password_env = "FASTMAIL_APP_PASSWORD"

# Microsoft 365, Outlook.com or Google over IMAP with an OAuth token from a program that
# prints one (oama, pizauth; see docs/oauth.md in Dayflow's repository):
# [[inbox]]
# name = "work"
# kind = "imap"
# host = "outlook.office365.com"  # Gmail: imap.gmail.com
# user = "you@example.com"
# auth = "xoauth2"              # password (the default) | xoauth2 | oauthbearer
# token_command = "oama access you@example.com"   # or token_env = "WORK_TOKEN"

# A calendar from an iCalendar file or a secret address (Google Calendar: Settings >
# your calendar > "Secret address in iCal format"):
# [[calendar]]
# name = "home"
# kind = "ics"                  # ics | caldav | json
# url = "https://calendar.google.com/calendar/ical/.../basic.ics"   # or path = "~/cal/home.ics"

# A CalDAV calendar (Nextcloud, Fastmail, Radicale...):
# [[calendar]]
# name = "work"
# kind = "caldav"
# url = "https://cloud.example.org/remote.php/dav"
# user = "you"
# password_command = "pass show nextcloud"
# calendars = ["Personal"]     # optional: all calendars when left out
# security = "plain"            # only for an http:// url: the password then goes in clear
"""
