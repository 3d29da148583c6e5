"""The structure the code promises (docs/architecture.md), held by tests.

* findings do not depend on the clean-verdict cache, on what the process checked before,
  or on node order;
* the rule registry is complete whichever threads ask for it first;
* no package imports another in a cycle; convert does not import check;
* schema facts (vendor domains, the axis policy) are stated only in schema/;
* read_facts, which builds NodeFacts by position for speed, gives each field its value.
"""

from __future__ import annotations

import ast
import functools
import glob
import os
import sys
from collections import Counter

import fast_process
import onnx
import pytest
import source_trees
from paths import MODELS, ROOT

from qlin_cli import rules
from qlin_cli.check.engine import check_model
from qlin_cli.model.graphs import bodies
from qlin_cli.model.load import load_model

PACKAGE = os.path.join(ROOT, "qlin_cli")
FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def _named(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose unnamed nodes get names (an unnamed node is named by its index,
    which reversing changes)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for b in bodies(m):
        for i, n in enumerate(b.owner.node):
            if not n.name:
                n.name = f"{b.path}#{i}"
    return m


def _reversed(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for b in bodies(m):
        nodes = list(b.owner.node)[::-1]
        del b.owner.node[:]
        b.owner.node.extend(nodes)
    return m


ORDER_RULE = "QL108"  # topological order: the one rule about node order itself


def _findings(model, base, cache: bool) -> Counter:
    return Counter((d.code, d.node, d.graph, d.message) for d in check_model(model, base, cache=cache))


def _unordered(found: Counter) -> Counter:
    """The findings without the order rule's (reversing the nodes changes those alone)."""
    return Counter({k: n for k, n in found.items() if k[0] != ORDER_RULE})


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_findings_do_not_depend_on_the_cache_or_node_order(path):
    base = os.path.dirname(path)
    model = _named(load_model(path))
    want = _findings(model, base, cache=False)
    assert _findings(model, base, cache=True) == want
    backwards = _reversed(model)
    back_cached = _findings(backwards, base, cache=True)
    assert _unordered(back_cached) == _unordered(want)
    assert _unordered(_findings(backwards, base, cache=False)) == _unordered(want)
    # a sorted model where some node reads another's output is out of order reversed
    chained = any(set(n.output) & {i for m in b.owner.node for i in m.input}
                  for b in bodies(model) for n in b.owner.node)
    if chained and not any(k[0] == ORDER_RULE for k in want):
        assert any(k[0] == ORDER_RULE for k in back_cached), path


def test_findings_do_not_depend_on_what_the_process_checked_before():
    """The clean verdicts kept across models (check/engine.py ``_CLEAN_ANYWHERE``) change
    no finding: every fixture checked with the process's store empty, then again after
    every fixture filled it, gives the same findings."""
    from qlin_cli.check import engine

    models = [(load_model(p), os.path.dirname(p)) for p in FIXTURES]
    engine._CLEAN_ANYWHERE.clear()
    cold = []
    for model, base in models:
        engine._CLEAN_ANYWHERE.clear()
        cold.append(_findings(model, base, cache=True))
    warm = [_findings(model, base, cache=True) for model, base in models]
    assert warm == cold
    assert engine._CLEAN_ANYWHERE  # the store was used


def test_a_large_constant_is_never_judged_by_another_models_verdict():
    """A constant above facts.SMALL is known by identity within its model only: a node
    whose large scale holds a zero is found after a node of the same shape, types and
    attributes whose scale is good was checked clean in another model."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def model(scale):
        node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1)
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2048])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 2048])],
                              [numpy_helper.from_array(scale, "s")])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

    good = np.full(2048, 0.5, np.float32)
    bad = good.copy()
    bad[7] = 0
    assert "QL501" not in {d.code for d in check_model(model(good), "")}
    assert "QL501" in {d.code for d in check_model(model(bad), "")}
    small = model(np.full(4, 0.5, np.float32))  # small constants are keyed by content
    small.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 4
    small.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 4
    zero = onnx.ModelProto()
    zero.CopyFrom(small)
    zero.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([0.5, 0, 0.5, 0.5], np.float32), "s"))
    assert "QL501" not in {d.code for d in check_model(small, "")}
    assert "QL501" in {d.code for d in check_model(zero, "")}


def test_fixtures_exist():
    assert len(FIXTURES) >= 50


THREADS = """
import threading
from qlin_cli import rules
barrier = threading.Barrier(8)
seen = []
def ask():
    barrier.wait()
    seen.append(tuple(r.code for r in rules.all_rules()))
threads = [threading.Thread(target=ask) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(len(seen), len(set(seen)), len(seen[0]))
"""


def test_registry_used_first_from_eight_threads_gives_every_rule():
    expected = len(rules.all_rules())
    # a new process each time, where qlin was never imported: the registry is built on first use.
    # fast_process forks it from a server with numpy and onnx imported (nothing of qlin's: -c
    # code runs as in a new interpreter), which the race between the threads does not read
    for _ in range(5):
        out = fast_process.run([sys.executable, "-c", THREADS], capture_output=True, text=True,
                               check=True, cwd=ROOT).stdout.split()
        assert out == ["8", "1", str(expected)], out


# ---- imports ------------------------------------------------------------------------
def _unit(module: str) -> str:
    """The unit a module belongs to: its subpackage (qlin_cli.check) or itself."""
    parts = module.split(".")
    if len(parts) >= 2 and os.path.isdir(os.path.join(PACKAGE, parts[1])):
        return ".".join(parts[:2])
    return module


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _imports(path: str) -> set[str]:
    """Every qlin_cli module a file imports, at any depth (function-level imports too)."""
    name = _module_name(path)
    package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    return set(_imports_of(path, package))


@functools.cache
def _imports_of(path: str, package: str) -> frozenset[str]:
    """``_imports`` of a file, its tree walked once per process (three tests read every file's
    imports)."""
    return frozenset(_imports_of_tree(source_trees.tree(path), package))


def _unit_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True):
        unit = _unit(_module_name(path))
        deps = {_unit(m) for m in _imports(path)} - {unit, "qlin_cli"}
        graph.setdefault(unit, set()).update(d for d in deps if os.path.exists(
            os.path.join(ROOT, *d.split("."))) or os.path.exists(os.path.join(ROOT, *d.split(".")) + ".py"))
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    for start in graph:
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return None


def test_no_package_imports_another_in_a_cycle():
    graph = _unit_graph()
    assert "qlin_cli.check" in graph and "qlin_cli.rules" in graph["qlin_cli.check"]
    assert _cycle(graph) is None, _cycle(graph)


def test_the_layers():
    g = _unit_graph()
    assert "qlin_cli.check" not in g["qlin_cli.convert"]
    assert "qlin_cli.check" not in g["qlin_cli.rules"]
    assert g["qlin_cli.schema"] == set(), g["qlin_cli.schema"]
    assert g["qlin_cli.model"] <= {"qlin_cli.schema", "qlin_cli.errors"}, g["qlin_cli.model"]
    assert "qlin_cli.convert" not in g["qlin_cli.evaluator"]


def test_no_module_of_the_targets_imports_another_in_a_cycle():
    """Within qlin_cli/targets/, module by module (function-level imports too): the profiles
    list their targets and the registry registers them (targets/registry.py), so no profile
    imports what imports it."""
    folder = os.path.join(PACKAGE, "targets")
    graph = {}
    for path in glob.glob(os.path.join(folder, "*.py")):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path) if m.count(".") == 2 and m.startswith("qlin_cli.targets.")
                       and os.path.exists(os.path.join(ROOT, *m.split(".")) + ".py")} - {name}
    assert "qlin_cli.targets.versions" in graph["qlin_cli.targets.registry"]
    assert _cycle(graph) is None, _cycle(graph)


def _load_imports(path: str) -> set[str]:
    """The qlin_cli modules a file imports when it is loaded (its top-level statements, ``if``
    and ``try`` blocks included, ``if TYPE_CHECKING`` left out), each with the packages above
    it that are not above the file (those are loaded before it, whatever imports it)."""
    name = _module_name(path)
    package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    mine = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    found: set[str] = set()
    todo = list(source_trees.tree(path).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        if isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "finalbody", []) + [
                x for h in getattr(node, "handlers", []) for x in h.body]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            one = ast.Module(body=[node], type_ignores=[])
            found.update(_imports_of_tree(one, package))
    out = set()
    for m in found:
        parts = m.split(".")
        out.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return {m for m in out - mine if _is_module(m)}


def _imports_of_tree(tree, package: str) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("qlin_cli"))
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.startswith("qlin_cli"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
    return found


def _is_module(name: str) -> bool:
    at = os.path.join(ROOT, *name.split("."))
    return os.path.exists(at + ".py") or os.path.exists(os.path.join(at, "__init__.py"))


def test_no_module_imports_another_in_a_cycle_when_loaded():
    """Module by module, the imports made when a module is loaded: a cycle among them breaks
    an import in one order and not in another (formats/fuse.py, loaded first, once read
    passes/common.py, whose package loads passes/format.py, which reads fuse's
    plan_qoperator before fuse has defined it)."""
    graph = {_module_name(p): _load_imports(p)
             for p in glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True)}
    assert "qlin_cli.convert.formats.measure" in graph["qlin_cli.convert.formats.fuse"]
    assert _cycle(graph) is None, _cycle(graph)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# ---- schema facts live once -------------------------------------------------------------
VENDOR_CONSTANTS = {"MICROSOFT", "QUARK"}
DOMAIN_STRINGS = {"com.microsoft", "com.amd.quark", "ai.onnx"}
POLICY_LITERALS = ("per-tensor", "default")


def _restated(path: str) -> list[str]:
    """Places outside schema/ that restate a domain fact: vendor domain constants or
    strings in code, the axis-policy constants written out."""
    tree = source_trees.tree(path)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in VENDOR_CONSTANTS:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in VENDOR_CONSTANTS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and node.value in DOMAIN_STRINGS):
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value in POLICY_LITERALS for c in node.comparators):
            found.append(f"{node.lineno}: compares with a policy literal")
    return found


def test_domain_facts_are_stated_only_in_schema():
    bad = {}
    for path in glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True):
        if os.sep + "schema" + os.sep in path or os.sep + "targets" + os.sep in path:
            continue
        found = _restated(path)
        if found:
            bad[os.path.relpath(path, ROOT)] = found
    assert bad == {}


def test_the_restatement_finder_finds_restatements(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('"""com.microsoft in a docstring is fine."""\n'
                 'from qlin_cli.schema import MICROSOFT\n'
                 'def f(d):\n    return d == "com.amd.quark" or d == MICROSOFT\n')
    assert len(_restated(str(p))) == 2


@pytest.mark.parametrize("rule", rules.all_rules(), ids=lambda r: r.code)
def test_fixable_rules_attach_a_fix_and_others_do_not(rule):
    from qlin_cli.check.engine import check_file

    bad = os.path.join(MODELS, "rules", f"{rule.code}-bad.onnx")
    found = [d for d in check_file(bad, [rule.code]).diagnostics if d.code == rule.code]
    assert found
    assert all((d.fix is not None) == rule.fixable for d in found), [d.fix for d in found]
    for d in found:
        if d.fix is not None:
            assert d.fix.edits and all(e.describe() for e in d.fix.edits)


def _slow_facts(node, index, scope, base_dir):
    """NodeFacts built by keyword, field by field, the slow way: what read_facts (which
    passes them by position, for speed) must give. Also what the derived input and
    output views must read, each from the node itself."""
    from qlin_cli import schema
    from qlin_cli.model.facts import UNKNOWN, Const, Location, NodeFacts, _attr_item, op_in_scope
    from qlin_cli.schema import dtypes

    op = op_in_scope(scope, node.domain, node.op_type)
    types = [scope.find_type(n) if n else None for n in node.input]
    outs = [scope.find_type(n) if n else None for n in node.output]
    values = []
    for i, n in enumerate(node.input):
        role = op.spec.inputs[i].role if op.spec is not None and i < len(op.spec.inputs) else None
        tensor = scope.find_value(n) if n and role in (schema.SCALE, schema.ZERO_POINT) else None
        values.append(None if tensor is None else Const(tensor, base_dir, {}))
    name = lambda t: None if t is None or not t[0] else dtypes.name_of(t[0])  # noqa: E731
    facts = NodeFacts(
        op=node.op_type, domain=op.domain, opset=op.opset, imported=op.imported, spec=op.spec,
        in_typed=tuple((t or UNKNOWN) if n else None for n, t in zip(node.input, types, strict=True)),
        out_typed=tuple((t or UNKNOWN) if n else None for n, t in zip(node.output, outs, strict=True)),
        attr_items=tuple(_attr_item(a) for a in node.attribute), values=tuple(values),
        inputs=tuple(node.input), outputs=tuple(node.output),
        location=Location(scope.path, index, node.name, scope.is_function))
    derived = {
        "present": tuple(bool(n) for n in node.input),
        "in_types": tuple(name(t) for t in types),
        "in_shapes": tuple(None if t is None else t[1] for t in types),
        "out_present": tuple(bool(n) for n in node.output),
        "out_types": tuple(name(t) for t in outs),
    }
    return facts, derived


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_read_facts_gives_every_field_its_value(path):
    """read_facts builds NodeFacts by position: each field holds what it is named for."""
    from dataclasses import fields

    from qlin_cli import schema
    from qlin_cli.model.facts import read_facts
    from qlin_cli.model.infer import inferred_types
    from qlin_cli.model.walk import walk

    model = load_model(path)
    base = os.path.dirname(path)
    extra = inferred_types(model)
    seen = 0
    for scope, index, node in walk(model, extra):
        if not schema.knows(node.domain, node.op_type):
            continue
        got = read_facts(node, index, scope, base)
        want, derived = _slow_facts(node, index, scope, base)
        for f in fields(got):
            assert getattr(got, f.name) == getattr(want, f.name), (path, node.name, f.name)
        for view, value in derived.items():
            assert getattr(got, view) == value, (path, node.name, view)
        for i in range(len(node.input) + 1):
            assert got.present_at(i) == (i < len(node.input) and bool(node.input[i]))
            assert got.in_type(i) == (derived["in_types"][i] if i < len(node.input) else None)
            assert got.in_shape(i) == (derived["in_shapes"][i] if i < len(node.input) else None)
        assert got.out_type == (derived["out_types"][0] if node.output else None)
        seen += 1
    assert seen or "no_quant" in path or "empty" in path


def test_an_initializer_keeps_its_type_over_a_constant_of_the_same_name():
    """Initializer types are entered on first use; a Constant node that produces a name an
    initializer already has must not take its place in the scope's types (its value
    does, as it always has)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from qlin_cli.model.walk import walk

    const = helper.make_node("Constant", [], ["s"],
                             value=numpy_helper.from_array(np.array(0.5, np.float16)))
    dq = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq")
    g = helper.make_graph([const, dq], "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                          initializer=[numpy_helper.from_array(np.float32(0.25), "s")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    scope = next(scope for scope, _, _ in walk(model))
    assert scope.find_type("s") == (TensorProto.FLOAT, ())
    assert scope.find_value("s").data_type == TensorProto.FLOAT16
