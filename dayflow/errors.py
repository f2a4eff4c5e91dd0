"""Every error Dayflow reports to a user, each with the exit code the CLI gives it.

    DayflowError                      exit 1
    ├── UsageError                    exit 2   bad option values, bad dates
    ├── RunNotFound                   exit 3   unknown run id or prefix
    │   └── AmbiguousRunId            exit 3   a prefix that names several runs
    ├── NothingToResume               exit 3   no unfinished run to continue
    │   └── RunPruned                 exit 3   a run gc pruned or redacted cannot continue
    ├── StoreError                    exit 4   not a Dayflow database, corrupt, newer schema
    ├── SourceError                   exit 4   a malformed or missing inbox / calendar file
    │   ├── SourceUnreadable          exit 4   a configured source could not be read now, by name
    │   ├── ConfigFileError           exit 4   the sources config file is missing or invalid
    │   └── SourceUnavailable         exit 4   a source could not be read during a run: the
    │                                          run is failed, resumable (a file gone before a
    │                                          resume, or any failure with --strict-sources)
    ├── FileProblem                   exit 4   a file to write cannot be, or one to read is not ours
    ├── RunBusy                       exit 5   another live process drives the run
    │   └── RulesBusy                 exit 5   another process holds rules.toml's lock
    ├── LeaseLost                     exit 5   our claim on the run was taken over
    ├── ModelError                    exit 6   the model API failed (after retries)
    │   └── ConfigError               exit 6   a Claude model asked for with no key, etc.
    ├── RunStopped                    exit 7   a guard (max steps, budget) stopped the run
    └── SimulatedCrash                exit 70  the --crash-after test hook fired

Errors never carry a traceback to the user: `cli.py` prints `str(err)` on one line.
"""

from __future__ import annotations


class DayflowError(Exception):
    exit_code = 1


class UsageError(DayflowError):
    exit_code = 2


class RunNotFound(DayflowError):
    exit_code = 3


class AmbiguousRunId(RunNotFound):
    pass


class ProfileNotFound(RunNotFound):
    """No profile of that name (`dayflow profiles list`): exit 3, as for a run or a task."""


class NothingToResume(DayflowError):
    exit_code = 3


class RunPruned(NothingToResume):
    """`gc` removed (or redacted) the payloads a resume or a fork would have to send again."""


class StoreError(DayflowError):
    exit_code = 4


class SourceError(DayflowError):
    exit_code = 4


class SourceUnreadable(SourceError):
    """One named source could not be read: unreachable, timed out, refused, malformed.

    `source` is the configured name and `reason` one line that never contains a secret (no
    password, no secret URL path: hosts only). The read tools turn it into an `is_error` result
    for that source while the other sources still answer.
    """

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"source {source!r} could not be read: {reason}")
        self.source = source
        self.reason = reason


class FileProblem(DayflowError):
    """A file Dayflow was asked to write cannot be written, or one it was asked to read
    back (`tasks sync`) is unreadable or not Dayflow's."""

    exit_code = 4


class ConfigFileError(SourceError):
    """A config file (or `.env`-named setting file) that is missing, unreadable or invalid.

    Several problems are one line each, each naming the file (`of`): the CLI prefixes every
    line with `error:`, so each reads alone."""

    @classmethod
    def of(cls, path: object, problems: list[str]) -> ConfigFileError:
        """One error for every problem found in the file at `path`, one line each."""
        return cls("\n".join(f"{path}: {p}" for p in problems))


class SourceUnavailable(SourceError):
    """A read the run needs failed; the run is marked failed and `resume` retries the read."""


class RunBusy(DayflowError):
    exit_code = 5


class RunAlreadyDone(RunBusy):
    """Another process finished the run between our read and our claim."""


class DayTaken(RunBusy):
    """`brief --ensure-today` found, at the moment of creating the day's run, that another
    process (on any host sharing the database) had just created it: `run_id` is that run."""

    def __init__(self, message: str, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


class RulesBusy(RunBusy):
    """Another process held `rules.toml.lock` for longer than a correction waits (a write
    takes milliseconds: that one is stuck, or paused): nothing was changed."""


class RejectUnfinished(RunBusy):
    """`tasks reject` wrote its rule but could not delete the task: another process held the
    database (locked) past the busy timeout. The line says the rule is in force and that the
    same command again finishes the removal."""


class LeaseLost(DayflowError):
    exit_code = 5


class ModelError(DayflowError):
    """A model call failed. `retryable` says whether trying later may succeed."""

    exit_code = 6

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        request_id: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id
        self.retryable = retryable


class ConfigError(ModelError):
    pass


class RunStopped(DayflowError):
    exit_code = 7


class SimulatedCrash(DayflowError):
    exit_code = 70
