"""qlin from Python: what the commands do, as functions that return values and raise
``QlinError``; nothing here prints or exits. ``import qlin`` gives the same names.

    import qlin

    result = qlin.check("model.onnx", targets=["onnxruntime"])   # one file, its config
    results = qlin.check_paths(["models"])                      # folders walked as the CLI does
    for f in result.findings:                                   # qlin.Finding
        print(f.code, f.severity, f.graph, f.node, f.detail)
    findings = qlin.check_model(model_proto)                    # an onnx.ModelProto
    converted = qlin.convert("model.onnx", to_opset=21)         # .model, .entries, .refused (Findings)
    scheme = qlin.inspect("model.onnx")                         # the dict `qlin inspect` shows
    rows = qlin.targets()                                       # what each target accepts

The command line is built on these: `qlin check` runs ``check_file_with`` on each file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import onnx

from .check.engine import check_analysis, check_file, target_diagnostics
from .check.result import FileResult
from .check.suppress import Suppression
from .config import Config, ConfigError, Finder, load_config
from .errors import QlinError
from .finding import Finding

if TYPE_CHECKING:  # at run time, read when asked for (__getattr__): `qlin check` does not load convert
    from .convert.state import Result as Converted
    from .convert_pipeline import Stop as ConversionStopped

__all__ = ["Config", "ConversionStopped", "FileResult", "Finding", "QlinError", "check",
           "check_file_with", "check_model", "check_paths", "convert", "discover", "inspect", "targets"]

# What the functions take: a path as a string or an os.PathLike; names (codes, targets) as a
# list or one comma-separated string, as the flags take them
StrPath = str | os.PathLike[str]
Names = Sequence[str] | str | None

if not TYPE_CHECKING:  # hidden from type checkers, which see the import above (and no other name)

    def __getattr__(name: str) -> type:
        """``ConversionStopped``, read when asked for: `qlin check` does not load convert."""
        if name == "ConversionStopped":
            from .convert_pipeline import Stop

            return Stop
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check(path: StrPath, *, select: Names = None, ignore: Names = None, targets: Names = None,
          config: bool | Config = True, confirm: bool = False) -> FileResult:
    """Check one model file as `qlin check PATH` does: its findings (``result.findings``),
    the settings of the nearest qlin.toml / [tool.qlin] above it applied (``config=False``
    for none, or a ``Config`` of your own), ``select`` / ``ignore`` / ``targets`` winning
    over them (each a list, or one string of comma-separated names as the flags take).
    ``confirm=True`` (`--confirm`): each target whose release is the one installed here
    loads, compiles and runs the model once, and where it and the prediction differ a
    finding says so (QT208, QT209; QT210 where a target cannot be confirmed).
    Raises QlinError when the file cannot be checked, or a setting is wrong: an unknown
    code or target, as the command exits 2 on one, or ``confirm`` without a target."""
    path = _one_path(path, "check")
    select, ignore, targets = _codes(select, "select"), _codes(ignore, "ignore"), _names(targets)
    cfg = _config(path, config)
    _known_targets(targets)
    _confirmable(confirm, targets, [cfg])
    result = check_file_with(path, cfg, select, ignore, targets, confirm=confirm)
    if result.error is not None:
        raise QlinError(path, result.error)
    return result


def discover(paths: Sequence[StrPath] | StrPath = (".",), *,
             exclude: Sequence[str] | None = None,
             extend_exclude: Sequence[str] = (), respect_gitignore: bool | None = None,
             force_exclude: bool | None = None, config: bool = True) -> list[str]:
    """The model files `qlin check PATHS` checks: files as named, folders walked for
    ``*.onnx`` leaving out excluded names and what .gitignore ignores (discover.py); the
    arguments are the flags of the same names (``paths``: a list, or one path). Raises
    QlinError for a folder that cannot be read or a configuration that cannot be used."""
    from .discover import NO_MODELS, Discovery, Flags, walk

    paths = _paths(paths)
    finder = _finder(config)
    flags = Flags(None if exclude is None else tuple(exclude), tuple(extend_exclude), respect_gitignore,
                  force_exclude)
    try:
        found = walk([os.fspath(p) for p in paths], Discovery(finder.for_folder, flags))
    except ConfigError as e:
        raise QlinError(os.fspath(paths[0]) if paths else ".", str(e)) from None
    for path, problem in found:
        if problem is not None and problem != NO_MODELS:
            raise QlinError(path, problem)
    return [path for path, problem in found if problem is None]


def check_paths(paths: Sequence[StrPath] | StrPath = (".",), *, select: Names = None, ignore: Names = None,
                targets: Names = None, config: bool = True, exclude: Sequence[str] | None = None,
                extend_exclude: Sequence[str] = (), respect_gitignore: bool | None = None,
                force_exclude: bool | None = None, confirm: bool = False) -> list[FileResult]:
    """Check every model ``discover(paths, exclude=..., ...)`` finds, each with its own
    configuration, as `qlin check PATHS` does (in this process). A file that cannot be
    checked comes back with ``error`` set, so one bad file does not hide the others.
    ``paths``: a list, or one path; ``confirm``: as ``check``'s."""
    select, ignore, targets = _codes(select, "select"), _codes(ignore, "ignore"), _names(targets)
    _known_targets(targets)
    files = discover(paths, config=config, exclude=exclude, extend_exclude=extend_exclude,
                     respect_gitignore=respect_gitignore, force_exclude=force_exclude)
    finder = _finder(config)
    try:
        configs = [finder.for_file(p) for p in files]
        _confirmable(confirm, targets, configs)
        return [check_file_with(p, c, select, ignore, targets, confirm=confirm)
                for p, c in zip(files, configs, strict=True)]
    except ConfigError as e:
        raise QlinError(files[0], str(e)) from None


def _finder(config: bool) -> Finder:
    try:
        return Finder(load_config(), search=True) if config else Finder(Config(), search=False)
    except ConfigError as e:
        raise QlinError(".", str(e)) from None


def check_file_with(path: str, cfg: Config, select: Sequence[str] | None = None,
                    ignore: Sequence[str] | None = None, targets: Sequence[str] | None = None, *,
                    keep_types: bool = False, frames: bool = True, confirm: bool = False) -> FileResult:
    """One file checked with its configuration (``cfg``), flags (``select``, ``ignore``,
    ``targets``, each None when not given) winning; a file that cannot be checked comes
    back with ``error`` set. ``frames=False`` leaves out each finding's node view
    (``Finding.frame``, what the text report shows on a terminal). ``confirm``: the
    targets' predictions held against the runtimes installed here (targets/confirm.py),
    compared with the findings the check reports."""
    select_codes = list(select) if select else cfg.select
    ignore_codes = list(ignore) if ignore else cfg.ignore
    target_names = list(targets) if targets is not None else cfg.target
    result = check_file(path, select_codes, ignore_codes, target_names or None, keep_types=keep_types,
                        frames=frames, config=cfg)
    if confirm and target_names and result.error is None:
        from .targets.confirm import confirm_findings

        found = confirm_findings(path, target_names, result.diagnostics)
        result.diagnostics += Suppression(select_codes, ignore_codes, cfg, path).kept(found)
    return result


def _confirmable(confirm: bool, targets: Sequence[str] | None, configs: Sequence[Config]) -> None:
    """``confirm`` needs a target to confirm: named, or in some file's configuration."""
    if confirm and not targets and not any(c.target for c in configs):
        raise QlinError("confirm", "it runs the targets' releases: give targets (targets=['onnxruntime'])")


def suppress(result: FileResult, cfg: Config) -> None:
    """Drop the findings the file's configuration ignores (per-path-ignores for the
    file, per-node-ignores for a node): check/suppress.py, as ``check_file_with`` does."""
    result.diagnostics = Suppression(cfg=cfg, path=result.path).kept(result.diagnostics)


def check_model(model: onnx.ModelProto, base_dir: StrPath = ".", *, select: Names = None,
                ignore: Names = None, targets: Names = None) -> list[Finding]:
    """The findings of a model in memory (tensors stored outside it are read relative to
    ``base_dir``); no configuration file is read. A TypeError for anything but an
    onnx.ModelProto (a file is ``check``'s)."""
    from .gc_pause import paused_collection
    from .model.analysis import analyze
    from .model.graphs import reading

    if not isinstance(model, onnx.ModelProto):
        hint = " (for a file, use qlin.check(path))" if isinstance(model, (str, os.PathLike)) else ""
        raise TypeError(f"check_model takes an onnx.ModelProto, not {type(model).__name__}{hint}")
    select, ignore, targets = _codes(select, "select"), _codes(ignore, "ignore"), _names(targets)
    _known_targets(targets)
    base_dir = os.fspath(base_dir)
    with paused_collection(), reading(model):
        a = analyze(model, base_dir)
        found = check_analysis(a, select, ignore)
        if targets:
            found += target_diagnostics(a, list(targets), select, ignore)
    return found


def convert(path: StrPath, *, to_opset: int | None = None, to_domain: str | None = None,
            target: str | None = None, ir_version: int | None = None, lower: bool = False,
            verify: bool = True, output: StrPath | None = None, vendor_axis: int | None = None,
            to_format: str | None = None, tolerance: int = 0, weights: str | None = None,
            to_int8: bool = False, to_symmetric: bool = False) -> Converted:
    """Convert a model file as `qlin convert` does (convert/pipeline.py) and return the
    result: ``.model`` (the converted ModelProto; None when some node is refused),
    ``.entries``, ``.refused``, ``.resolved`` (the source's errors the conversion is the
    fix of), ``.note``, ``.written``. With ``target`` the opset, domain and lowering are
    chosen for it; a model it already runs comes back unchanged (``.note`` says so).
    ``to_format="qdq"`` rewrites QOperator nodes into QDQ form, each measured (an entry's
    ``.measured``) and refused beyond ``tolerance`` steps. ``weights="fold"`` / ``"unfold"``
    stores constant weights as a QuantizeLinear / DequantizeLinear of them computes.
    ``to_int8`` moves uint8 Q/DQ tensors to int8 (exact); ``to_symmetric`` moves 8-bit ones
    with a non-zero zero point to int8 with zero point 0 (measured, within ``tolerance``). With
    ``output`` the result is written there, never over the source. Raises
    ``ConversionStopped`` (a QlinError; ``.findings`` says why) when the model has errors
    the conversion does not resolve or the target would still refuse it, QlinError when
    the file cannot be read."""
    from .convert_pipeline import Request, run

    if target is not None and (to_opset is not None or to_domain is not None or lower or to_format):
        raise QlinError("target", "it chooses the opset, domain and lowering itself: give it alone")
    if (to_opset is None and to_domain is None and target is None and to_format is None and weights is None
            and not to_int8 and not to_symmetric):
        raise QlinError("to_opset", "give a target opset (to_opset=N), a domain (to_domain=D), a "
                                    "format (to_format='qdq'), weights='fold' or 'unfold', a runtime "
                                    "(target=NAME), or several of the first four")
    from .convert.formats import FORMATS, WEIGHTS

    if weights is not None and weights not in WEIGHTS:
        raise QlinError("weights", f"{weights!r}: give one of {', '.join(map(repr, WEIGHTS))}")
    if to_format is not None and to_format not in FORMATS:
        raise QlinError("to_format", f"{to_format!r} is not a format qlin writes "
                                     f"({', '.join(map(repr, FORMATS))})")
    if tolerance < 0:
        raise QlinError("tolerance", f"{tolerance} is below 0")
    if target is not None:
        _known_targets([target])
    req = Request(os.fspath(path), to_opset, to_domain, target, ir_version, lower, verify, vendor_axis,
                  None if output is None else os.fspath(output), to_format=to_format, tolerance=tolerance,
                  weights=weights, to_int8=to_int8, to_symmetric=to_symmetric)
    try:
        return run(req)
    except QlinError as e:  # the pipeline speaks the command's flags: name this function's arguments
        e.path, e.reason = _arguments(e.path), _arguments(e.reason)
        e.args = (f"{e.path}: {e.reason}",)
        raise


# What the convert pipeline's messages name by the command's flags, and this API's
# arguments for them (the API never writes over its source: it has no --in-place).
_FLAGS = (("pass --in-place to overwrite it", "qlin.convert never writes over its source: give another path"),
          ("--no-verify", "verify=False"), ("--to-opset", "to_opset"), ("--to-domain", "to_domain"),
          ("--ir-version", "ir_version"), ("--quark-axis", "vendor_axis"), ("--target", "target"),
          ("--lower", "lower=True"), ("--to-format", "to_format"), ("--tolerance", "tolerance"),
          ("--weights", "weights"), ("--to-int8", "to_int8=True"),
          ("--to-symmetric", "to_symmetric=True"))


def _arguments(text: str) -> str:
    for flag, argument in _FLAGS:
        text = text.replace(flag, argument)
    return text


def inspect(path: StrPath, targets: Names = None) -> dict[str, Any]:
    """The scheme of a model file, as `qlin inspect --format json` gives it."""
    from .inspect_command import describe

    targets = _names(targets)
    _known_targets(targets)
    try:
        return describe(os.fspath(path), list(targets) if targets else None)
    except QlinError:
        raise
    except OSError as e:
        raise QlinError(os.fspath(path), e.strerror or str(e)) from None


def targets() -> list[dict[str, Any]]:
    """Each deployment target qlin knows: its limits, types, granularities and sources."""
    from .targets import predict

    return predict.capability_matrix()


def _split(values: Names, what: str) -> list[str] | None:
    """A list of names from a list or one string (comma-separated, as the flags take them)."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    out = []
    for v in values:
        if not isinstance(v, str):
            raise TypeError(f"{what} takes names (strings), not {type(v).__name__}")
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def _codes(values: Names, what: str) -> list[str] | None:
    """Rule and target codes for ``select`` / ``ignore``, each one qlin knows or a prefix of
    some (QlinError naming the first that is not, as `qlin check --select` exits 2)."""
    from .config import known_prefix

    codes = _split(values, what)
    if codes is None:
        return None
    codes = [c.upper() for c in codes]
    for c in codes:
        if not known_prefix(c):
            raise QlinError(what, f"{c!r} matches no rule code (see `qlin rules`)")
    return codes


def _names(values: Names) -> list[str] | None:
    """Target names: a PEP 440 specifier set keeps its commas ("onnxruntime>=1.18,<1.21")."""
    from .targets import registry

    names = _split(values, "targets")
    return None if names is None else registry.split_names(names)


def _one_path(path: object, what: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} takes the path of a model file, not {type(path).__name__}")
    return os.fspath(path)


def _paths(paths: Sequence[StrPath] | StrPath) -> list[str]:
    """A list of paths from a list or one path (a string is one path, not its letters)."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [_one_path(p, "paths") for p in paths]


def _known_targets(names: Iterable[str] | None) -> None:
    from .targets import registry

    for n in names or ():
        try:
            registry.get(n)
        except registry.UnknownTarget as e:
            if e.reason is not None:
                raise QlinError(n, e.reason) from None
            raise QlinError(n, f"unknown target (known: {', '.join(registry.names())})") from None


def _config(path: str, config: bool | Config) -> Config:
    if isinstance(config, Config):
        return config
    if not config:
        return Config()
    try:
        return Finder(load_config()).for_file(path)
    except ConfigError as e:
        raise QlinError(path, str(e)) from None
