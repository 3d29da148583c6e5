"""qlin from Python: what the commands do, as functions that return values and raise
``QlinError``; nothing here prints or exits. ``import qlin`` gives the same names.

    import qlin

    result = qlin.check("model.onnx", targets=["onnxruntime"])   # one file, its config
    for f in result.findings:                                   # qlin.Finding
        print(f.code, f.severity, f.graph, f.node, f.detail)
    findings = qlin.check_model(model_proto)                    # an onnx.ModelProto
    converted = qlin.convert("model.onnx", to_opset=21)         # .model, .entries, .refused
    scheme = qlin.inspect("model.onnx")                         # the dict `qlin inspect` shows
    rows = qlin.targets()                                       # what each target accepts

The command line is built on these: `qlin check` runs ``check_file_with`` on each file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import onnx

from . import schema
from .check.engine import FileResult, check_analysis, check_file, selected, target_diagnostics
from .config import Config, ConfigError, Finder, load_config
from .errors import QlinError
from .finding import Finding

__all__ = ["Config", "FileResult", "Finding", "QlinError", "check", "check_file_with", "check_model",
           "convert", "inspect", "targets"]


def check(path: str | os.PathLike, *, select: Sequence[str] | None = None,
          ignore: Sequence[str] | None = None, targets: Sequence[str] | None = None,
          config: bool | Config = True) -> FileResult:
    """Check one model file as `qlin check PATH` does: its findings (``result.findings``),
    the settings of the nearest qlin.toml / [tool.qlin] above it applied (``config=False``
    for none, or a ``Config`` of your own), ``select`` / ``ignore`` / ``targets`` winning
    over them. Raises QlinError when the file cannot be checked, or a setting is wrong."""
    path = os.fspath(path)
    cfg = _config(path, config)
    _known_targets(targets)
    result = check_file_with(path, cfg, select, ignore, targets)
    if result.error is not None:
        raise QlinError(path, result.error)
    return result


def check_file_with(path: str, cfg: Config, select=None, ignore=None, targets=None, *,
                    keep_types: bool = False) -> FileResult:
    """One file checked with its configuration (``cfg``), flags (``select``, ``ignore``,
    ``targets``, each None when not given) winning; a file that cannot be checked comes
    back with ``error`` set."""
    select_codes = list(select) if select else cfg.select
    ignore_codes = list(ignore) if ignore else cfg.ignore
    target_names = list(targets) if targets is not None else cfg.target
    r = check_file(path, select_codes, ignore_codes, target_names or None, keep_types=keep_types)
    suppress(r, cfg)
    return r


def suppress(result: FileResult, cfg: Config) -> None:
    """Drop the findings the file's configuration ignores: per-path-ignores for the
    file, per-node-ignores for a node."""
    extra = cfg.ignored_for(result.path)
    if extra:
        result.diagnostics = [d for d in result.diagnostics if selected(d.code, None, extra)]
    if cfg.per_node_ignores:
        kept = []
        for d in result.diagnostics:
            codes = cfg.ignored_for_node(d.node) if d.node else None
            if codes is None or (codes and selected(d.code, None, codes)):
                kept.append(d)
        result.diagnostics = kept


def check_model(model: onnx.ModelProto, base_dir: str | os.PathLike = ".", *,
                select: Sequence[str] | None = None, ignore: Sequence[str] | None = None,
                targets: Sequence[str] | None = None) -> list[Finding]:
    """The findings of a model in memory (tensors stored outside it are read relative to
    ``base_dir``); no configuration file is read."""
    from .gc_pause import paused_collection
    from .model.analysis import analyze
    from .model.graphs import reading

    _known_targets(targets)
    base_dir = os.fspath(base_dir)
    with paused_collection(), reading(model):
        a = analyze(model, base_dir)
        found = check_analysis(a, select, ignore)
        if targets:
            found += target_diagnostics(a, list(targets), select, ignore)
    return found


def convert(path: str | os.PathLike, *, to_opset: int | None = None, to_domain: str | None = None,
            target: str | None = None, ir_version: int | None = None, lower: bool = False,
            verify: bool = True, output: str | os.PathLike | None = None):
    """Convert a model file as `qlin convert` does and return the conversion's result
    (``.model``: the converted ModelProto, None when something is refused; ``.entries``;
    ``.refused``). With ``target``, the opset, domain and lowering are chosen for it. With
    ``output``, the converted model is written there (never over the source). Raises
    QlinError when the file cannot be read, has errors, or no conversion makes the target
    run it."""
    from .convert.run import Options, convert_model
    from .convert.write import check_target, write_model
    from .model.analysis import analyze
    from .model.load import load_model
    from .model.safety import validate_model_files
    from .targets import predict

    path = os.fspath(path)
    if output is not None:
        check_target(os.fspath(output), path, False)
    proto = load_model(path)
    base_dir = os.path.dirname(os.path.abspath(path))
    validate_model_files(proto, base_dir, path)
    a = analyze(proto, base_dir)
    errors = [d for d in check_analysis(a) if d.severity == "error" and not _mended(d.code)]
    if errors:
        raise QlinError(path, f"the model has {len(errors)} error(s) ({errors[0].code}: {errors[0].message})")
    if target is not None:
        _known_targets([target])
        plan = predict.plan_in(a, target)
        if plan.needed and plan.choice is None:
            raise QlinError(path, f"no conversion makes {target} run it ({plan.blocking[0].message})")
        if plan.needed:
            to_opset, to_domain, lower = plan.choice.to_opset, plan.choice.to_domain, plan.choice.lower
    if to_opset is None:
        to_opset = schema.opset_of({o.domain: o.version for o in proto.opset_import}, schema.AI_ONNX)
        if to_opset is None:
            raise QlinError(path, "the model imports no ai.onnx opset: give to_opset")
    result = convert_model(proto, base_dir, Options(to_opset, to_domain, ir_version, lower, verify),
                           source=path, types=a.inferred)
    if output is not None and result.model is not None:
        write_model(result.model, base_dir, os.fspath(output), source=path)
    return result


def inspect(path: str | os.PathLike, targets: Sequence[str] | None = None) -> dict:
    """The scheme of a model file, as `qlin inspect --format json` gives it."""
    from .inspect_command import describe

    _known_targets(targets)
    try:
        return describe(os.fspath(path), list(targets) if targets else None)
    except QlinError:
        raise
    except OSError as e:
        raise QlinError(os.fspath(path), e.strerror or str(e)) from None


def targets() -> list[dict]:
    """Each deployment target qlin knows: its limits, types, granularities and sources."""
    from .targets import predict

    return predict.capability_matrix()


def _mended(code: str) -> bool:
    from . import rules

    rule = rules.get(code)
    return rule is not None and rule.mended_by_convert


def _known_targets(names) -> None:
    from .targets import base

    for n in names or ():
        try:
            base.get(n)
        except LookupError:
            raise QlinError(n, f"unknown target (known: {', '.join(base.names())})") from None


def _config(path: str, config: bool | Config) -> Config:
    if isinstance(config, Config):
        return config
    if not config:
        return Config()
    try:
        return Finder(load_config()).for_file(path)
    except ConfigError as e:
        raise QlinError(path, str(e)) from None
