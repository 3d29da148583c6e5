"""QT207 kind-not-measured. The measured targets (onnxruntime and openvino releases) report
it from their own probe data, in base.Target.probe_data."""

from __future__ import annotations

from ...code import Code
from ...severity import INFO


class KindNotMeasured(Code):
    """
    ## What it checks
    That the release judged was measured on the node's kind: the probe key of the node
    (its op, version, element types, granularity and the attributes a runtime decides on;
    targets/probe_keys.py) is one of the keys tools/gen_target_data.py ran probe models of
    in that release.

    ## Why is this bad?
    A release's verdict on a node comes from its own measurements. Where it has none of
    the node's kind, qlin answers from the kinds of the same release nearest to it (the
    key without its last details: "blocked axis=0 rank=2" for "blocked axis=0 rank=2
    one block"), or from the hand-written checks of the target alone, never from another
    release. The finding says which, so that a verdict resting on less than a
    measurement of the kind is not mistaken for one. An info: nothing is known to fail.

    ## Example
    ```
    QLinearConv-10(x: int8, w: int8, ...) with no bias   # probed with a bias only
    ```

    ## Fix
    Run the model in the release to be sure, or add a probe of the kind to
    tools/probe_models.py and measure each release
    (`python tools/gen_target_data.py RUNTIME VERSION --missing`).
    """

    code = "QT207"
    name = "kind-not-measured"
    severity = INFO
    summary = "The release was not measured on the node's kind; judged from the nearest kinds measured."

    @staticmethod
    def check(target, site):
        table = target.probe_data
        key = site.node_key
        if table is None or key is None or table.exact(key) is not None:
            return
        near = table.outcome(key)
        how = ("from the nearest kinds it was measured on" if near is not None
               else "by its hand-written checks alone")
        yield target.finding(
            "QT207",
            f"{table.runtime} {table.version} was not measured on this kind of node ({key}): judged {how}",
            fix="run the model in that release to be sure",
        )
