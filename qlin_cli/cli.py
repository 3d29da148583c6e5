"""The `qlin` command line. Heavy modules are imported inside the commands."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from .errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK

FAIL_ON = ("error", "warning", "info")  # one word per severity, as in every report


def _codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


# commands whose modules are imported only when named (or listed, by --help): `qlin check`
# does not load convert's, inspect's and the targets' options and their imports
_LAZY = {"convert": ("convert_command", "convert"), "inspect": ("inspect_command", "inspect_model"),
         "targets": ("targets_command", "targets")}


class _Main(click.Group):
    """The command group: signals and a failing stdout end every command the same way
    (one line on stderr, a documented exit status, no traceback)."""

    def list_commands(self, ctx) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY})

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as e:  # the suggestion from every command, loaded or not
            raise click.exceptions.NoSuchCommand(e.command_name, possibilities=self.list_commands(ctx),
                                                 ctx=ctx) from None

    def get_command(self, ctx, cmd_name: str):
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in _LAZY:
            from importlib import import_module

            module, name = _LAZY[cmd_name]
            found = getattr(import_module(f"{__package__}.{module}"), name)
            self.add_command(found, cmd_name)
        return found

    def invoke(self, ctx):
        from . import output, signals
        from .errors import Interrupted

        output.prepare_stdout()
        with signals.handled():
            try:
                return super().invoke(ctx)
            except output.OutputFailed as e:
                output.fail_output(e)
            except (Interrupted, KeyboardInterrupt) as e:
                import signal

                signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
                output.error(f"interrupted by {signals.name(signum)}")
                sys.exit(signals.exit_status(signum))


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="qlin", prog_name="qlin")
def main() -> None:
    """qlin: check and convert QuantizeLinear / DequantizeLinear in ONNX models."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(readable=False))  # qlin says why, per file
@click.option("--format", "fmt", type=click.Choice(["text", "json", "jsonl", "sarif", "github"]),
              default="text", show_default=True,
              help="Report format (jsonl: one JSON object per file, written as each file is checked, "
                   "then a summary line).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these rule codes or prefixes (comma-separated, e.g. QL4,QL501).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Skip these rule codes or prefixes (comma-separated).")
@click.option("--fail-on", type=click.Choice(list(FAIL_ON)), default=None,
              help="Lowest severity that makes the exit status 1 [default: error, or fail-on "
                   "in [tool.qlin]].")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even with findings (2 still means a file could not be checked).")
@click.option("--statistics", is_flag=True,
              help="One line (JSON: one entry) per code found with its count, instead of each "
                   "finding (text and json).")
@click.option("-q", "--quiet", is_flag=True,
              help="Text: the findings only, no summary line and no progress bar.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--fix", is_flag=True,
              help="Apply the safe fixes (each node edit proven with qlin's evaluator), "
                   "writing each model in place.")
@click.option("--diff", is_flag=True, help="Print the edits --fix would make; write nothing.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Check files in N worker processes [default: every core]; the output is "
                   "the same as in one process, in the same order.")
@click.option("--shard", default=None, metavar="K/N",
              help="Check only shard K (1 to N) of N: every N-th file of the files found, sorted by "
                   "path (the N shards together check every file once).")
@click.option("--no-config", is_flag=True, help="Ignore qlin.toml and [tool.qlin] in pyproject.toml.")
@click.option("--target", "targets", multiple=True, metavar="NAMES",
              help="Also check that these runtimes run the model and compute what the spec says "
                   "(comma-separated; see `qlin targets`).")
@click.option("--confirm", is_flag=True,
              help="Load, compile and run each model once in every target whose release is the one "
                   "installed here (onnxruntime, openvino), and report where it and the prediction "
                   "differ (QT208, QT209; QT210: not confirmed, and why). Reads no results cache.")
@click.option("--exclude", multiple=True, metavar="GLOBS",
              help="Leave these out of folder walks, in place of the default list (.git, .venv, "
                   "site-packages, build, dist, ...; comma-separated).")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS",
              help="Leave these out of folder walks too (comma-separated).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Leave out what .gitignore ignores in a git repository [default: respect].")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Exclude files named on the command line too (for pre-commit).")
@click.option("--show-all", is_flag=True,
              help="Text: a line for every node a runtime's warning is found on (by default a "
                   "behaviour found on many nodes of a file is one line with the count).")
@click.option("--no-cache", is_flag=True,
              help="Check every file again: neither read nor write the results cache (or set "
                   "QLIN_NO_CACHE).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="The results cache folder [default: QLIN_CACHE_DIR, else .qlin_cache in the "
                   "working folder].")
def check(paths, fmt, select, ignore, fail_on, exit_zero, statistics, quiet, output_file,
          fix, diff, jobs, shard, no_config, targets, confirm, exclude, extend_exclude,
          respect_gitignore, force_exclude, show_all, no_cache, cache_dir):
    """Check every Q/DQ node of the models at PATHS (files or folders of *.onnx; default:
    the working directory). Folder walks leave out --exclude globs and what .gitignore
    ignores.

    One line per finding: PATH:GRAPH:NODE: CODE SEVERITY [OP-VERSION DOMAIN] MESSAGE.
    Settings come from the nearest qlin.toml or pyproject.toml [tool.qlin] above each
    checked file (else above the working directory); flags given here win. Exit status:
    0 nothing at or above --fail-on, 1 findings at or above it, 2 a file could not be
    checked.
    """
    from . import output
    from .check.result import summarize
    from .progress import track

    for flag, given in (("--statistics", statistics), ("--diff", diff)):
        if given and fmt in ("sarif", "github", "jsonl"):
            raise click.UsageError(f"{flag} gives text or json, not {fmt}")
    part = _shard(shard) if shard is not None else None
    cli_select, cli_ignore = _codes(select), _codes(ignore)
    _validate_codes(cli_select + cli_ignore)
    cli_targets = _target_names(targets) if targets else None
    from .discover import Flags

    flags = Flags(_globs(exclude) if exclude else None, _globs(extend_exclude), respect_gitignore,
                  force_exclude)
    files, configs = _selected(paths or (".",), no_config, flags, part)
    _confirmable(confirm, cli_targets, configs)
    results, fixes, failures, frames = [], [], 0, _frames(fmt, statistics or quiet or output_file or diff)
    work = [(path, problem, cfg, cli_select, cli_ignore, cli_targets, fix or diff, frames, confirm)
            for (path, problem), cfg in zip(files, configs, strict=True)]
    checked = _checked(work, jobs, _results_cache(cache_dir, fresh=no_cache or fix or diff or confirm))
    stream = fmt == "jsonl"  # each file's line written as it is checked, then the summary line
    with output.report_to(output_file) if stream else contextlib.nullcontext():
        for r, cfg in track(zip(checked, configs, strict=True), len(files), "Checking models",
                            enabled=not quiet):
            if (fix or diff) and r.error is None:
                fixes.append(_fix(r, cfg, cli_select, cli_ignore, write=not diff))
            if r.error is not None:
                output.error_at(r.path, r.error)
            failures += failing(summarize([r]), fail_on or cfg.fail_on)
            results.append(r)
            if stream:
                _line(r)
        summary = summarize(results) | ({"fixed": sum(len(f.fixed) for f in fixes)} if fix else {})
        if stream:
            _line(summary)
    if diff:
        with output.report_to(output_file):
            _print_diff(fixes) if fmt != "json" else _print_diff_json(fixes)
        sys.exit(EXIT_FINDINGS if any(f.fixed for f in fixes) else EXIT_OK)
    if not stream:
        with output.report_to(output_file):
            _report(results, summary, fmt, quiet=quiet, statistics=statistics, frames=frames,
                    show_all=show_all)
    if any(r.error is not None for r in results) or any(f.error is not None for f in fixes):
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(EXIT_OK if exit_zero or not failures else EXIT_FINDINGS)


def _frames(fmt: str, plain) -> bool:
    """Whether the text report shows each finding's node (text on a terminal, not ``plain``)."""
    return fmt == "text" and not plain and _terminal()


def _confirmable(confirm: bool, cli_targets, configs) -> None:
    """--confirm needs a target: named by --target, or in some file's configuration."""
    if confirm and not cli_targets and not any(cfg.target for cfg in configs):
        raise click.UsageError("--confirm runs the targets' releases: give --target NAMES")


def _selected(paths, no_config: bool, flags, part: tuple[int, int] | None) -> tuple[list, list]:
    """The files to check (with --shard K/N, shard K's) and the configuration of each."""
    finder = _finder(no_config)
    files = _files(paths, finder, flags)
    if part is not None:
        from .discover import shard

        files = shard(files, *part)
    return files, _configs(files, finder, no_config)


def _shard(text: str) -> tuple[int, int]:
    """--shard K/N as (K, N), or exit 2 with one line saying what is wrong."""
    from . import output
    from .discover import parse_shard

    try:
        return parse_shard(text)
    except ValueError as e:
        output.error(f"--shard: {e}")
        sys.exit(EXIT_BAD_INPUT)


def _line(item) -> None:
    """One line of --format jsonl (a file's result, or the summary), flushed at once."""
    from .report.json_report import file_line, summary_line

    click.echo(summary_line(item) if isinstance(item, dict) else file_line(item))
    sys.stdout.flush()


def _globs(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(g.strip() for v in values for g in v.split(",") if g.strip())


def _files(paths, finder, flags) -> list[tuple[str, str | None]]:
    """(path, why it cannot be checked or None) of every model the paths name; an empty
    folder is a warning, and is left out."""
    from . import output
    from .config import ConfigError
    from .discover import NO_MODELS, Discovery, walk

    files = []
    try:
        found = walk(paths, Discovery(finder.for_folder, flags))
    except ConfigError as e:
        output.error(str(e))
        sys.exit(EXIT_BAD_INPUT)
    if not found and paths:
        output.warning("no model to check: every path given is excluded (--force-exclude)")
    for path, problem in found:
        # an empty folder is a warning; a folder named like a model (m.onnx/) given in
        # place of one stays an error, like any other path that is not a model
        if problem == NO_MODELS and not path.rstrip("/" + os.sep).endswith(".onnx"):
            output.warning(f"{path}: {problem}")
        else:
            files.append((path, problem))
    return files


def _finder(no_config: bool):
    """Each folder's configuration (the nearest qlin.toml or [tool.qlin] above it), or exit
    2 naming a bad one."""
    from . import output
    from .config import Config, ConfigError, Finder, load_config

    try:
        default = Config() if no_config else load_config()
    except ConfigError as e:
        output.error(str(e))
        sys.exit(EXIT_BAD_INPUT)
    return Finder(default, search=not no_config)


def _configs(files, finder, no_config: bool) -> list:
    """The configuration of each file, or exit 2 naming a bad one."""
    from . import output
    from .config import ConfigError

    try:
        return [finder.default if no_config or problem is not None else finder.for_file(path)
                for path, problem in files]
    except ConfigError as e:
        output.error(str(e))
        sys.exit(EXIT_BAD_INPUT)


def _fix(result, cfg, cli_select, cli_ignore, *, write: bool):
    """--fix / --diff on one checked file; the fixed findings leave ``result``."""
    from . import output
    from .fix import fix_file

    def post(diagnostics):
        from .api import suppress
        from .check.engine import FileResult

        r = FileResult(result.path, diagnostics=list(diagnostics))
        suppress(r, cfg)
        return r.diagnostics

    outcome = fix_file(result.path, result.diagnostics, cli_select or cfg.select,
                       cli_ignore or cfg.ignore, write=write, post=post, types=result.types)
    if outcome.error is not None:  # the check stands: its findings are reported, the run exits 2
        output.error_at(result.path, f"not fixed: {outcome.error}")
        return outcome
    for d, why in outcome.skipped:
        output.warning(f"{result.path}:{d.graph}:{d.node}: {d.code} not fixed: {why}")
    if write:
        fixed = {id(d) for d in outcome.fixed}
        result.diagnostics = [d for d in result.diagnostics if id(d) not in fixed]
    return outcome


def _print_diff(outcomes) -> None:
    """What --fix would do: per file, each finding it fixes (place, code, fix), then the
    unified diff of the model's text form before and after (fix/text.py)."""
    from .report.safe import printable

    n = 0
    for o in outcomes:
        for d in o.fixed:
            n += 1
            click.echo(printable(f"{o.path}:{d.graph}:{d.node}: {d.code} {d.fix.title}"))
        for line in o.diff.splitlines():
            click.echo(printable(line))
    files = sum(1 for o in outcomes if o.fixed)
    click.echo(f"{n} fix{'es' if n != 1 else ''} would be applied in {files} "
               f"file{'s' if files != 1 else ''}; nothing written (--fix applies them)")


def _print_diff_json(outcomes) -> None:
    """--diff --format json: per file, each fix it would apply (the finding's place and code,
    the fix's title and edits) and the unified diff of the model's text form."""
    import json

    from .report.safe import unicode_tree

    files = [{"path": o.path,
              "fixes": [{"code": d.code, "graph": d.graph, "node": d.node, "title": d.fix.title,
                         "edits": [e.describe() for e in d.fix.edits]} for d in o.fixed],
              "diff": o.diff} for o in outcomes if o.fixed]
    doc = {"version": 2, "files": files,
           "summary": {"fixes": sum(len(f["fixes"]) for f in files), "files": len(files), "written": False}}
    click.echo(json.dumps(unicode_tree(doc), indent=2))


def _results_cache(cache_dir, *, fresh: bool):
    """The results cache, or None when every file is checked afresh (--no-cache, QLIN_NO_CACHE,
    --fix, --diff, and --confirm: what the runtimes installed here say is not the file's alone)."""
    if fresh or os.environ.get("QLIN_NO_CACHE"):
        return None
    from .cache import ResultsCache, folder

    return ResultsCache(folder(cache_dir))


def _checked(work: list, jobs, store):
    """Each file's result, in order: from the results cache where it holds one (cache.py),
    else checked (in worker processes when that pays off) and kept in the cache."""
    kept: list = [None] * len(work)
    keys: list = [None] * len(work)
    if store is not None:
        from .cache import content_digest, settings, stamp

        made: dict = {}  # one key per configuration and flags
        for i, (path, problem, cfg, select, ignore, targets, _, frames, _) in enumerate(work):
            if problem is not None:
                continue
            key = made.get(id(cfg))
            if key is None:
                key = made[id(cfg)] = settings(cfg, select, ignore, targets, frames)
            before = stamp(path)
            digest = content_digest(path)
            keys[i] = (key, digest, before)
            kept[i] = store.get(path, key, digest)
    missing = [i for i, found in enumerate(kept) if found is None]
    if any(work[i][1] is None for i in missing):
        from . import rules

        rules.all_rules()  # built once here: forked workers inherit the registry
    todo = [work[i] for i in missing]
    if len(todo) <= 1:  # a pool of one never pays: parallel (and multiprocessing) not even imported
        fresh = map(_check_one, todo)
    else:
        from .parallel import default_jobs, ordered_map

        fresh = ordered_map(_check_one, todo, jobs or default_jobs(),
                            [work[i][0] for i in missing if work[i][1] is None], lost=_not_checked)
    for i, found in enumerate(kept):
        if found is None:
            found = next(fresh)
            if store is not None and keys[i] is not None:
                key, digest, before = keys[i]
                if stamp(work[i][0]) == before:  # not changed while it was checked
                    store.put(work[i][0], key, digest, found)
        yield found


def _not_checked(item, why: str):
    """The result of a file whose worker process ended before it answered."""
    from .check.engine import FileResult

    return FileResult(item[0], error=f"not checked: {why}")


def _check_one(item):
    """One file checked with its configuration (in this process or a worker)."""
    from .api import check_file_with
    from .check.engine import FileResult

    path, problem, cfg, cli_select, cli_ignore, cli_targets, keep_types, frames, confirm = item
    if problem is not None:
        return FileResult(path, error=problem)
    return check_file_with(path, cfg, cli_select, cli_ignore, cli_targets, keep_types=keep_types,
                           frames=frames, confirm=confirm)


def _terminal() -> bool:
    """Whether the text report goes to a terminal, which shows each finding's node (rich's
    answer, FORCE_COLOR and TTY_COMPATIBLE included). Without those variables, a stdout that
    is not a tty is answered without loading rich (38 ms of a 1-node check into a pipe)."""
    if not ({"FORCE_COLOR", "TTY_COMPATIBLE"} & os.environ.keys()):
        isatty = getattr(sys.stdout, "isatty", None)
        try:
            if isatty is None or not isatty():
                return False
        except ValueError:  # a closed stdout: rich says False too
            return False
    from .report.console import console

    return console(file=sys.stdout).is_terminal


def failing(summary: dict, fail_on: str) -> int:
    """How many findings are at or above ``fail_on``."""
    keys = {"error": ["errors"], "warning": ["errors", "warnings"],
            "info": ["errors", "warnings", "infos"]}[fail_on]
    return sum(summary[k] for k in keys)


def _target_names(values: tuple[str, ...]) -> list[str]:
    """Target names from --target, each known, or exit 2 naming the unknown one."""
    from . import output
    from .targets import registry

    names = registry.split_names(values)
    for n in names:
        try:
            registry.get(n)
        except LookupError as e:
            output.error(f"--target: {registry.why(n, e)}")
            sys.exit(EXIT_BAD_INPUT)
    return names


def _report(results, summary, fmt, *, quiet=False, statistics=False, frames=False, show_all=True) -> None:
    if fmt == "json":
        from .report.json_report import render, render_statistics

        click.echo(render_statistics(results, summary) if statistics else render(results, summary))
    elif fmt == "sarif":
        from .report.sarif import render

        click.echo(render(results))
    elif fmt == "github":
        from .report.github import render

        text = render(results)
        if text:
            click.echo(text)
    else:
        from .report.console import Plain, console
        from .report.text import render

        shown = console(file=sys.stdout, highlight=False) if _terminal() else Plain(sys.stdout)
        render(results, summary, shown, quiet=quiet, statistics=statistics, frames=frames, show_all=show_all)


def _validate_codes(codes: list[str]) -> None:
    if not codes:
        return
    from .config import known_prefix

    for c in codes:
        if not known_prefix(c):
            raise click.BadParameter(f"{c!r} matches no rule code (see `qlin rules`)")


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def list_rules(fmt):
    """List every rule with its code, name, severity and summary."""
    from . import codes  # read from the rule modules' source: onnx is not imported

    items = [{"code": c.code, "name": c.name, "severity": c.severity, "summary": c.summary,
              "fixable": c.fixable, "default": c.default} for c in codes.all_codes()]
    from . import output

    with output.report():
        if fmt == "json":
            import json

            click.echo(json.dumps(items, indent=2))
            return
        from .report.table import show

        show(["code", "name", "severity", "fix", "default", "summary"],  # default: "off" = only selected
             [[it["code"], it["name"], it["severity"], "yes" if it["fixable"] else "",
               "" if it["default"] else "off", it["summary"]] for it in items])


@main.command("rule")
@click.argument("code")
def show_rule(code):
    """Show the documentation of rule CODE (what it checks, why, example, fix)."""
    from . import codes, output

    rule = codes.get(code)
    if rule is None:
        output.error(f"no rule {code!r} (see `qlin rules`)")
        sys.exit(EXIT_BAD_INPUT)
    if rule.kind == "convert":
        fixable = "Reported by `qlin convert` when it refuses a node (nothing is written)."
    elif rule.kind == "target":
        fixable = "Reported by `qlin check --target` and `qlin convert --target`."
    elif rule.fixable:
        fixable = "Fixable: `qlin check --fix` applies this rule's fix (`--diff` shows it)."
    else:
        fixable = "Fixable: no, `qlin check --fix` leaves it to you."
    if not rule.default:
        fixable += (f"\n\nOff by default: it runs only when selected (`--select {rule.code}`, a prefix "
                    f"of it, or `select` in [tool.qlin]).")
    text = (f"# {rule.code} {rule.name} ({rule.severity})\n\n{rule.summary}\n\n{fixable}\n\n"
            f"{rule.doc()}")
    with output.report():
        if sys.stdout.isatty():  # rendered Markdown on a terminal; rich only loaded here
            from rich.markdown import Markdown

            from .report.console import console

            console().print(Markdown(text))
        else:
            click.echo(text)

