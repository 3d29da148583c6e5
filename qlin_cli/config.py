"""qlin's configuration, found like ruff's: for each checked file, the nearest
``qlin.toml`` (settings at its top level) or ``pyproject.toml`` with a ``[tool.qlin]``
table in the file's folder or above it (``qlin.toml`` first in one folder); a file with
none above it gets the one found from the working directory. Command-line flags win.

    [tool.qlin]
    select = ["QL"]                    # codes or prefixes to run (default: all but QL409)
    ignore = ["QL409"]                 # codes or prefixes to skip
    fail-on = "error"                  # "error", "warning" or "info": what makes exit status 1
    extend-exclude = ["third_party"]   # left out of folder walks (discover.py), added to
                                       # the default list; `exclude` replaces that list
    respect-gitignore = true           # leave out what .gitignore ignores (default true)
    force-exclude = false              # exclude files named on the command line too
    [tool.qlin.per-path-ignores]
    "models/legacy/*.onnx" = ["QL403"] # globs relative to the pyproject.toml's folder;
                                       # [] ignores every code
    [tool.qlin.per-node-ignores]
    "weight_*" = ["QL604"]             # node-name globs (any graph); [] ignores every code

A node can also carry its own suppression: a ``metadata_props`` entry ``qlin:ignore``
whose value is codes or prefixes (comma-separated), or empty for every code.

Every pyproject.toml met on the way up is read: one that cannot be read or
parsed (bad TOML, arrays nested past what the parser can take, a file over
MAX_BYTES, ``tool`` that is not a table) stops the search with a ConfigError
naming it, since qlin cannot tell whether it was meant to configure qlin. The
message is one line; the CLI prints it and exits 2.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

from .gc_pause import paused_collection


def _tomllib():
    """tomllib (tomli on Python 3.10), imported where toml_fast cannot read a file: most
    configuration files never need it (its import compiles a dozen expressions)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib


FAIL_ON = ("error", "warning", "info")
MAX_BYTES = 16 * 2**20  # no real pyproject.toml comes near this
KEYS = {"select", "ignore", "fail-on", "per-path-ignores", "per-node-ignores", "target", "exclude",
        "extend-exclude", "respect-gitignore", "force-exclude"}
QLIN_TOML = "qlin.toml"


class ConfigError(ValueError):
    """A pyproject.toml whose [tool.qlin] table qlin cannot use; the message says why."""


@dataclass
class Config:
    path: str | None = None  # the pyproject.toml it came from
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    fail_on: str = "error"
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    per_node_ignores: dict[str, list[str]] = field(default_factory=dict)
    target: list[str] = field(default_factory=list)  # deployment targets checked too
    # file discovery (discover.py): None keeps discover.DEFAULT_EXCLUDE
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    force_exclude: bool = False

    def _globs(self, key: str, table: dict[str, list[str]], strip: bool = False) -> tuple:
        """(globs.GlobSet of the patterns of ``table``, each less its "/"s at the end if
        ``strip``; the patterns; their codes), made once per key: a configuration of 100,000
        patterns is compared with a text by the few that can match it, not through 100,000
        regular expressions."""
        from .globs import GlobSet

        if key not in self.__dict__:
            patterns = list(table)
            globs = GlobSet([p.rstrip("/") for p in patterns] if strip else patterns)
            self.__dict__[key] = (globs, patterns, list(table.values()))
        return self.__dict__[key]

    def ignored_for_node(self, label: str) -> list[str] | None:
        """Codes per-node-ignores drops for a node (``[]``: every code; None: nothing)."""
        if not self.per_node_ignores:
            return None
        globs, _, codes_of = self._globs("_node_globs", self.per_node_ignores)
        return _joined(codes_of[i] for i in globs.matching(label))

    @property
    def root(self) -> str:
        return os.path.dirname(self.path) if self.path else os.getcwd()

    def ignored_for(self, model_path: str) -> list[str] | None:
        """Codes per-path-ignores drops for one model (``[]``: every code, as in
        per-node-ignores; None: nothing)."""
        if not self.per_path_ignores:
            return None
        rel = os.path.relpath(os.path.abspath(model_path), self.root).replace(os.sep, "/")
        # A pattern holds for the path itself, or for a folder above it: "pattern/*" (the
        # pattern's own "/"s at its end left out) matches the path where the pattern matches
        # the part before one of the path's "/"s. One set of patterns answers both, but a
        # pattern that ends in "/" never matches the path itself (it has no "/" at its end).
        globs, patterns, ignored_lists = self._globs("_path_globs", self.per_path_ignores, strip=True)
        found = {i for i in globs.matching(rel) if not patterns[i].endswith("/")}
        cut = rel.find("/")
        while cut >= 0:
            found.update(globs.matching(rel[:cut]))
            cut = rel.find("/", cut + 1)
        return _joined(ignored_lists[i] for i in sorted(found))


def _joined(lists) -> list[str] | None:
    """The codes of the entries that hold for a text, each once, in order (``[]``: one of
    them ignores every code; None: there are none). Joined in one list: adding list to list
    took time quadratic in the number of entries that hold (100,000 patterns matching one
    node name)."""
    codes: dict[str, None] = {}
    held = False
    for entry in lists:
        if not entry:
            return []
        codes.update(dict.fromkeys(entry))
        held = True
    return list(codes) if held else None


def _read_toml(path: str) -> dict:
    """The parsed file; ConfigError (one line, naming ``path``) for anything else."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: over {MAX_BYTES // 2**20} MiB, not a configuration file")
    key = (os.path.abspath(path), data)
    if _PARSED.get("key") == key:  # the file found is read again to load it: parsed once
        return _PARSED["value"]
    try:
        text = data.decode("utf-8")
        # the usual part of TOML read fast (200,000 entries: 0.26 s, tomllib 2.2 s); anything
        # else, invalid TOML included, is tomllib's to read and to report. The collector
        # waits (gc_pause.py): the values are not cycles, and it walked them all again and
        # again as they were made.
        from . import toml_fast  # only where a configuration file is read

        with paused_collection():
            value = toml_fast.loads(text)
            if value is None:
                value = _tomllib().loads(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8 (TOML files are UTF-8)") from None
    except ValueError as e:  # TOMLDecodeError, or an integer past int()'s 4300 digits
        raise ConfigError(f"{path}: not valid TOML ({_first_line(e)})") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or tables nested too deeply to read") from None
    except MemoryError:
        raise ConfigError(f"{path}: too large to read") from None
    _PARSED.update(key=key, value=value)
    return value


# The last file parsed, by its path and bytes: finding a configuration reads it, and loading
# it reads it again (a pyproject.toml of 100,000 entries took tomllib 3 s a parse). Callers
# must not change what it returns.
_PARSED: dict = {}


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:160] if lines else type(e).__name__


def _brief(value) -> str:
    """A value from the file, quoted for a message, at most 60 characters."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"a deeply nested {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _tool_table(path: str) -> dict:
    tool = _read_toml(path).get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table ([tool.NAME] sections), "
                          f"not {type(tool).__name__}")
    return tool


def find_pyproject(start: str | None = None, known: dict[str, str | None] | None = None) -> str | None:
    """The nearest qlin.toml, or pyproject.toml with a [tool.qlin] table, at or above
    ``start`` (a folder). ``known``: {folder: its answer} of folders already searched, read
    and filled, so that a walk of a deep tree asks each folder once, not once per folder
    below it.

    Raises ConfigError for a pyproject.toml on the way that cannot be read.
    """
    d = os.path.abspath(start or os.getcwd())
    known = {} if known is None else known
    passed = []  # folders searched on the way up, each of which gets the answer
    found: str | None = None
    while True:
        if d in known:
            found = known[d]
            break
        passed.append(d)
        own = os.path.join(d, QLIN_TOML)
        if os.path.isfile(own):
            found = own
            break
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate) and "qlin" in _tool_table(candidate):
            found = candidate
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for folder in passed:
        known[folder] = found
    return found


class Finder:
    """The configuration of each checked file, each configuration file read once.

    ``default`` is the one found from the working directory, for files with none
    above them (for every file with ``search=False``). A configuration file qlin cannot
    use raises ConfigError naming it."""

    def __init__(self, default: Config, *, search: bool = True):
        self.default = default
        self.search = search  # False (--no-config): ``default`` for every file and folder
        self._by_folder: dict[str, str | None] = {}
        self._loaded: dict[str, Config] = {}
        if default.path:
            self._loaded[default.path] = default

    def for_file(self, model_path: str) -> Config:
        return self.for_folder(os.path.dirname(os.path.abspath(model_path)))

    def for_folder(self, folder: str) -> Config:
        if not self.search:
            return self.default
        folder = os.path.abspath(folder)
        known = self._by_folder
        path = known[folder] if folder in known else find_pyproject(folder, known)
        if path is None:
            return self.default
        if path not in self._loaded:
            self._loaded[path] = _load(path)
        return self._loaded[path]


def _code_lists(table: dict, where: str) -> dict[str, list[str]]:
    """per-path-ignores or per-node-ignores: {glob: codes}. Each different list is checked
    once, in the order of the file (100,000 entries hold the same few); a bad one is named
    by its first entry, as when each entry was checked."""
    lists = list(table.values())
    try:
        tuples = list(map(tuple, lists)) if set(map(type, lists)) <= {list} else None
        distinct = dict.fromkeys(tuples) if tuples is not None else None
    except TypeError:  # an item that cannot be hashed, so not a code
        distinct = None
    if tuples is None or distinct is None:  # an entry that is not a list of strings: named
        return {str(k): _codes(v, f"{where} {_brief(k)}") for k, v in table.items()}
    for codes in distinct:
        try:
            distinct[codes] = _codes(list(codes), where)
        except ConfigError:
            first = next(k for k, v in table.items() if tuple(v) == codes)
            _codes(table[first], f"{where} {_brief(first)}")  # the same error, naming it
            raise
    # (map and zip, not a loop of Python: 200,000 entries)
    return dict(zip(map(str, table), map(list, map(distinct.__getitem__, tuples)), strict=True))


def _codes(value, where: str) -> list[str]:
    """Rule codes or prefixes from the config, each matching a known code."""
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ConfigError(f"{where} must be a list of rule codes")
    codes = [c.strip().upper() for c in value]
    for c in codes:
        if not known_prefix(c):
            raise ConfigError(f"{where}: {_brief(c)} matches no rule code (see `qlin rules`)")
    return codes


@functools.lru_cache(maxsize=1024)  # the same few codes, listed in each of many entries
def known_prefix(code: str) -> bool:
    """Whether ``code`` (upper case) is a code `qlin check` reports or a prefix of one."""
    return bool(code) and any(k.startswith(code) for k in known_codes())


@functools.cache  # asked for each list of codes a configuration holds (100,000 lists took minutes)
def known_codes() -> tuple[str, ...]:
    """Every code `qlin check` reports: rule codes and target codes (not convert's QC)."""
    from . import codes

    return tuple(codes.known(codes.CHECKED))


def load_config(start: str | None = None) -> Config:
    path = find_pyproject(start)
    if path is None:
        return Config()
    return _load(path)


def _load(path: str) -> Config:
    own = os.path.basename(path) == QLIN_TOML
    table = _read_toml(path) if own else _tool_table(path)["qlin"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.qlin] must be a table")
    sec = "" if own else " [tool.qlin]"  # how messages name where a key is
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{path}:{sec} has unknown key {unknown[0]!r} "
                          f"(known: {', '.join(sorted(KEYS))})")
    cfg = Config(path=path)
    if "select" in table:
        cfg.select = _codes(table["select"], f"{path}:{sec} select")
    if "ignore" in table:
        cfg.ignore = _codes(table["ignore"], f"{path}:{sec} ignore")
    if "fail-on" in table:
        if table["fail-on"] not in FAIL_ON:
            raise ConfigError(f"{path}:{sec} fail-on must be one of {', '.join(FAIL_ON)}, "
                              f"not {_brief(table['fail-on'])}")
        cfg.fail_on = table["fail-on"]
    if "target" in table:
        cfg.target = _targets(table["target"], f"{path}:{sec} target")
    for key in ("exclude", "extend-exclude"):
        if key in table:
            globs = table[key]
            if not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs):
                raise ConfigError(f"{path}:{sec} {key} must be a list of globs, not {_brief(globs)}")
            setattr(cfg, key.replace("-", "_"), list(globs))
    for key in ("respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{path}:{sec} {key} must be true or false, not {_brief(table[key])}")
            setattr(cfg, key.replace("-", "_"), table[key])
    with paused_collection():
        _ignores(cfg, table, path, sec)
    return cfg


def _ignores(cfg: Config, table: dict, path: str, sec: str) -> None:
    """per-path-ignores and per-node-ignores into ``cfg``."""
    ppi = table.get("per-path-ignores", {})
    if not isinstance(ppi, dict):
        raise ConfigError(f"{path}:{sec} per-path-ignores must be a table of glob = [codes]")
    cfg.per_path_ignores = _code_lists(ppi, f"{path}: per-path-ignores")
    pni = table.get("per-node-ignores", {})
    if not isinstance(pni, dict):
        raise ConfigError(f"{path}:{sec} per-node-ignores must be a table of "
                          f"node-name glob = [codes]")
    cfg.per_node_ignores = _code_lists(pni, f"{path}: per-node-ignores")


def _targets(value, where: str) -> list[str]:
    """Target names from the config, each one qlin knows."""
    from .targets import registry

    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{where} must be a list of target names")
    for n in names:
        try:
            registry.get(n)
        except registry.UnknownTarget as e:
            if e.reason is not None:
                raise ConfigError(f"{where}: target {_brief(n)}: {e.reason}") from None
            known = ", ".join(registry.names())
            raise ConfigError(f"{where}: unknown target {_brief(n)} (known: {known})") from None
    return list(names)
