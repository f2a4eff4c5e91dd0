"""One runtime per process: what every use case is made with.

The `Runtime` holds the environment (taken once from `environ.process()`, or the whole of it
given by a test), the `Config` resolved from it, the clock, the model and source factories,
the MCP servers, the profile (--profile) and the consoles the CLI prints on. It is the one
reader of every setting: a part below it is handed the `Config`, the settings or the
environment mapping, never reads `os.environ` itself (tests/test_environ.py).

The CLI builds one (`cli_base.get_deps`); tests pass their own through
`CliRunner.invoke(app, args, obj=runtime)`. Keep this module cheap to import: `--help`,
`runs` and `tasks` import it (what only some commands use is imported where used).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dayflow.clock import Clock, SystemClock
from dayflow.errors import ConfigError

if TYPE_CHECKING:
    # A type only: the consoles are the CLI's (Rich is imported in cli*.py and render.py).
    from rich.console import Console  # noqa: TID251

    from dayflow import config
    from dayflow import config as configuration  # `Runtime.config` shadows the module name
    from dayflow.agent import SourceFactory
    from dayflow.mcp.servers import Servers
    from dayflow.providers import ModelClient
    from dayflow.store import Store
    from dayflow.store.values import Profile

    ModelFactory = Callable[[str, config.Settings], ModelClient]


def default_model_factory(model: str, settings: config.Settings) -> ModelClient:
    """The offline model, or Claude through the SDK (imported only here, only when needed)."""
    from dayflow.providers import OFFLINE_MODEL

    if settings.local:
        from dayflow.providers import local

        assert settings.base_url is not None  # config.load gives a local model its address
        return local.make_client(
            settings.base_url, timeout=settings.timeout, environ=dict(settings.proxy_env)
        )
    if model == OFFLINE_MODEL:
        from dayflow.providers.offline import OfflineModel

        return OfflineModel()
    if not settings.api_key:
        raise ConfigError(
            f"model {model!r} needs ANTHROPIC_API_KEY (set it in the environment or .env), "
            "or use --model offline"
        )
    from dayflow.providers.anthropic import make_client

    return make_client(
        settings.api_key,
        settings.base_url,
        timeout=settings.timeout,
        environ=dict(settings.proxy_env),
    )


class Runtime:
    """What commands and use cases are built from; tests replace any part. (A plain class,
    not a dataclass: each dataclass costs start-up time, and this one is made by every
    command.)

    `env` given: the whole environment (no `.env` file read); else this process's
    (`environ.process()`) over its `.env` files."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        model_factory: ModelFactory = default_model_factory,
        sources: SourceFactory | None = None,  # None: the JSON files named in a run's settings
        out: Console | None = None,
        err: Console | None = None,
        config: configuration.Config | None = None,
    ) -> None:
        self.env = env
        if env is None:
            from dayflow.app.environ import process

            self.environ: Mapping[str, str] = process()
        else:
            self.environ = env
        self._config = config
        # --profile: whose runs and tasks (None: the default profile, today's single user).
        # Another profile's config file and timezone replace the environment's once its row
        # is read (`_as_profile`), on the first call for settings.
        self.profile: str | None = None
        self._profile_read = False
        self._mcp: Servers | None = None  # made by `mcp()` when a run or command needs it
        self.clock: Clock = clock or SystemClock()
        self.model_factory = model_factory
        self.sources = sources
        self.out: Console = out if out is not None else _plain(stderr=False)
        self.err: Console = err if err is not None else _plain(stderr=True)

    @property
    def config(self) -> configuration.Config:
        """This process's configuration, resolved once (`.env` and config files read once):
        --profile's config file and timezone when one was given (its row read from the store
        the environment names; a command with --db reads it there first, via `settings`)."""
        self._as_profile({})
        return self._environment_config()

    def _environment_config(self) -> configuration.Config:
        if self._config is None:
            from dayflow import config

            self._config = config.Config(self.env, environ=self.environ)
        return self._config

    def for_profile(self, profile: Profile, db: str) -> Runtime:
        """A runtime for `profile`'s briefs in the store at `db` (a worker's): its config file
        and timezone over this process's environment, its runs and tasks."""
        from dayflow import config
        from dayflow.fleet.profiles import profile_env

        env = {**profile_env(self.config.env, profile), "DAYFLOW_DB": db}
        twin = Runtime(
            env=env,
            config=config.Config(env, profile=True),
            clock=self.clock,
            model_factory=self.model_factory,
            sources=self.sources,
            out=self.out,
            err=self.err,
        )
        twin.profile, twin._profile_read = profile.name, True
        return twin

    def settings(self, **flags: Any) -> configuration.Settings:
        self._as_profile(flags)
        return self._environment_config().settings(**flags)

    def _as_profile(self, flags: dict[str, Any]) -> None:
        """Read --profile's row from the store the flags name (ProfileNotFound: exit 3) and
        take its config file and timezone as the environment's, once."""
        if self._profile_read or self.profile is None:
            return
        self._profile_read = True
        from dayflow.fleet.profiles import profile_env
        from dayflow.store import DEFAULT_PROFILE

        if self.profile == DEFAULT_PROFILE:
            return
        db = {k: v for k, v in flags.items() if k == "db"}
        base = self._environment_config()
        from dayflow.config import is_postgres_target
        from dayflow.errors import ProfileNotFound

        settings = base.settings(**db)
        path = settings.db_path
        missing = isinstance(path, Path) and not path.exists()
        if missing and str(path) != ":memory:" and not is_postgres_target(path):
            # No database yet holds no profile: name the profile, not the missing file.
            raise ProfileNotFound(f"no profile {self.profile!r} (see `dayflow profiles list`)")
        with self.store(settings, profile=DEFAULT_PROFILE) as store:
            row = store.profiles.get(self.profile)
        from dayflow import config

        self._config = config.Config(profile_env(base.env, row), profile=True)

    def model_settings(
        self, config_file: Path | None = None, **flags: Any
    ) -> configuration.Settings:
        """The settings of a command that talks to a model: `settings`, with the config
        file's `[model]` table under the flags and the environment (only these commands read
        the file: `runs` and `tasks` never do)."""
        self._as_profile(flags)
        return self.config.model_settings(config_file, **flags)

    def store(
        self, settings: configuration.Settings, *, create: bool = False, profile: str | None = None
    ) -> Store:
        """The store at the configured path, as --profile's (or `profile`'s). Only commands
        that start runs pass `create`: the others never create a database (a typo in --db is
        an error, not an empty file)."""
        from dayflow import config
        from dayflow.store import DEFAULT_PROFILE, Owner, open_store

        if not create and isinstance(settings.db_path, Path):
            config.require_existing_db(settings.db_path)
        whose = profile or self.profile or DEFAULT_PROFILE
        return open_store(
            settings.db_path,
            clock=self.clock,
            owner=Owner.current(settings.host),
            durability=settings.durability,
            profile=whose,
            registered=whose != DEFAULT_PROFILE,  # --profile's row must be there for a new run
        )

    def mcp(self, verbose: bool = False) -> Servers:
        """This process's MCP servers, made once; none is started until a run needs it."""
        if self._mcp is None:
            from dayflow.mcp.servers import for_config

            self._mcp = for_config(self.config, verbose=verbose)
        return self._mcp

    def stop_mcp(self) -> None:
        """Stop the MCP servers this process started, if any."""
        made = self._mcp
        if made is not None:
            self._mcp = None
            made.close()

    def warnings(self) -> list[str]:
        """What this process's environment should warn about, not yet shown
        (`Config.warnings`: each line once); the CLI shows them as a command starts."""
        return self._environment_config().warnings()

    def notice(self, text: str) -> None:
        """One line on stderr (written as is: no Rich needed for a line of text)."""
        self.err.file.write(text + "\n")
        self.err.file.flush()

    def say(self, text: str) -> None:
        """One line of notice through the error console (wrapped as a whole line)."""
        self.err.print(text, markup=False, soft_wrap=True)


class _Plain:
    """A console for a runtime made without one (a bench, a test that drives a use case):
    plain lines on the standard stream of the moment, no colour, no spinner."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr

    @property
    def file(self) -> Any:
        return sys.stderr if self._stderr else sys.stdout

    is_terminal = False
    color_system = None
    width = 80

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", **_: Any) -> None:
        self.file.write(sep.join(str(o) for o in objects) + end)

    out = print

    def status(self, *_: Any, **__: Any) -> Any:
        import contextlib

        return contextlib.nullcontext()


def _plain(*, stderr: bool) -> Console:
    return cast("Console", _Plain(stderr=stderr))
