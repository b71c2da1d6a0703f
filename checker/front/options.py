"""What every `kmc` command shares: the command group class that turns every
error into one `kmc: error:` line and its exit code, the option types
(--depth, --max-memory, --min-free-disk) and the progress line."""
from __future__ import annotations

import re
import sys

import click

from checker.front.spec import UNSET
from checker.search import stop
from checker.search.errors import EXIT_BAD_INPUT, EXIT_OK, KmcError, Terminated
from checker.search.files import disk_full
from model.base import ModelConfigError

# when the `kmc` program's process started (time.perf_counter()'s clock; None
# when kmc runs inside another program): "Finished in" counts from it
PROCESS_STARTED: float | None = None

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports it


def _err(message: str) -> str:
    line = " ".join(str(message).split())
    click.echo(f"kmc: error: {line}", err=True)
    return line


def _json_failure(failure: dict, code: int) -> None:
    """--json and no result: the error (or the stop) as one JSON object on
    stdout, so that a script reading stdout always reads JSON."""
    import json
    try:
        click.echo(json.dumps({"outcome": failure.get("outcome", "error"), "exit_code": code,
                               **({"error": failure["error"]} if "error" in failure else {}),
                               **({"results_dir": failure["results_dir"],
                                   "resume": f"kmc check --resume {failure['results_dir']}"}
                                  if "results_dir" in failure else {})}))
    except OSError:   # (stdout gone: the line on stderr was said)
        pass


def _kept_run(e: BaseException, failure: dict) -> None:
    """A stopped run whose folder kept its levels: --json names the folder to resume."""
    for x in (e, e.__cause__):
        run_dir = getattr(x, "run_dir", None)
        if run_dir is not None:
            failure["results_dir"] = str(run_dir)
            return


def _contradicting_flags(argv: list) -> None:
    """--x and --no-x on one command line: refused, not the last one silently winning."""
    args = argv[:argv.index("--")] if "--" in argv else argv
    for arg in args:
        if arg.startswith("--no-") and "--" + arg[5:] in args:
            raise click.UsageError(f"--{arg[5:]} and {arg} contradict each other: give one of them")


class KmcGroup(click.Group):
    """Turns every error into one line on stderr and its exit code; lists
    the commands with their whole first sentence. Commands named in `lazy`
    (name -> "module:attribute") are imported when first asked for: a run
    of `kmc check` does not pay for the browser's server or the graph
    library."""

    lazy: dict = {}

    def list_commands(self, ctx) -> list:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx, name):
        if name not in self.commands and name in self.lazy:
            import importlib
            module, attr = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return self.commands.get(name)

    def format_commands(self, ctx, formatter) -> None:
        rows = [(name, cmd.get_short_help_str(limit=300))
                for name, cmd in ((n, self.get_command(ctx, n)) for n in self.list_commands(ctx))
                if cmd is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(args) if args is not None else sys.argv[1:]
        failure: dict = {}   # (with --json: the error as a JSON object on stdout too)
        try:
            _contradicting_flags(argv)
            rv = super().main(args=args, prog_name=prog_name or "kmc", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except click.exceptions.Exit as e:  # --help, --version
            rv = e.exit_code
        except click.ClickException as e:  # usage errors: bad option, missing argument
            failure["error"] = _err(e.format_message())
            rv = EXIT_BAD_INPUT
        except KmcError as e:
            failure["error"] = _err(e.one_line())
            _kept_run(e, failure)
            rv = e.exit_code
            if getattr(e, "after_summary", False):   # the run's JSON summary is printed already
                failure.clear()
        except ModelConfigError as e:
            failure["error"] = _err(f"constants rejected by the model: {e}")
            rv = EXIT_BAD_INPUT
        except OSError as e:  # a full disk, a folder gone or unreadable mid-run
            where = f" ({e.filename})" if e.filename else ""
            failure["error"] = _err(
                f"{e.strerror or e}{where}" + ("; free space on the disk of the results (--out) "
                                               "and of the temporary folder (TMPDIR), then run again"
                                               if disk_full(e) else ""))
            rv = EXIT_BAD_INPUT
        except (KeyboardInterrupt, click.exceptions.Abort) as e:
            # (click turns a KeyboardInterrupt into Abort, the interrupt as its cause)
            terminated = isinstance(e, Terminated) or isinstance(e.__cause__, Terminated)
            stop.handled()
            click.echo("kmc: terminated (SIGTERM)" if terminated else "kmc: interrupted", err=True)
            rv = EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
            failure["outcome"] = "terminated" if terminated else "interrupted"
            _kept_run(e, failure)
        rv = rv if isinstance(rv, int) else EXIT_OK
        if failure and "--json" in argv and "--" not in argv[:argv.index("--json")]:
            _json_failure(failure, rv)
        if standalone_mode:
            sys.exit(rv)
        return rv


class DepthType(click.ParamType):
    """--depth N (an int >= 0) or --depth none (no bound)."""

    name = "N|none"

    def convert(self, value, param, ctx):
        if value is None or value is UNSET or isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text in ("none", "inf", "unbounded"):
            return None
        try:
            n = int(text)
        except ValueError:
            self.fail(f"--depth expects a number of steps or 'none', not {value!r}", param, ctx)
        if n < 0:
            self.fail(f"--depth must be >= 0, not {n}", param, ctx)
        return n


DEFAULT_MEMORY = object()  # --max-memory not given: default_max_memory()


# --min-free-disk not given: room for the results and other programs once the
# next level is written (the guard also counts that level); small enough
# not to stop a run on a disk with a few hundred MB free
MIN_FREE_DISK = 128 << 20


class OutPath(click.Path):
    """--out / -o: a click.Path that refuses an empty value (it would mean the
    current folder, or a file named '')."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("must not be empty", param, ctx)
        return super().convert(value, param, ctx)


class SizeType(click.ParamType):
    """--max-memory / --min-free-disk SIZE: 8G, 500M, 1.5GiB, 64K (binary units), or none."""

    name = "SIZE|none"
    _UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

    def __init__(self, option: str = "--max-memory"):
        self.option = option

    def convert(self, value, param, ctx):
        if value is None or value is DEFAULT_MEMORY or isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text in ("none", "off", "unlimited"):
            return None
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt])(?:i?b)?", text)
        if m is None:
            self.fail(f"{self.option} expects a size with a unit (K, M, G or T: 8G, 500M) or 'none', not {value!r}",
                      param, ctx)
        n = int(float(m.group(1)) * self._UNITS[m.group(2)])
        if n <= 0:
            self.fail(f"{self.option} must be more than 0, not {value!r}", param, ctx)
        return n


def default_max_memory(fraction: float = 0.85) -> int | None:
    """85% of the machine's memory (MemTotal of /proc/meminfo; None where
    there is no /proc): stop before the machine swaps."""
    from checker.search.proc import machine_memory
    total = machine_memory("MemTotal")
    return int(total * fraction) if total is not None else None


def progress_printer(info: dict) -> None:
    click.echo(f"kmc: progress: level {info['level']}: {info['generated']:,} generated "
               f"({info['generated_per_s']:,.0f}/s), {info['distinct']:,} distinct "
               f"({info['distinct_per_s']:,.0f}/s), frontier {info['frontier']:,}, "
               f"{info['elapsed_s']:.0f}s", err=True)
