import sys

import pytest
from paths import FIXTURES, ROOT, TOOLS

for p in (ROOT, FIXTURES, TOOLS):
    if p not in sys.path:
        sys.path.insert(0, p)

# Tests that measure a runtime rather than qlin: they run only when their marker is asked
# for (`make remeasure` is `pytest -m remeasure`), never in `make test`.
OPT_IN = {"remeasure": "re-measures the installed runtime release: `make remeasure`"}


# The modules whose tests or fixtures take longest (5 to 16 s each on 2 cores) run first, so
# that `make test`'s two workers do not end with one of them running alone.
FIRST = ("test_producers", "test_targets_matrix", "test_validity_differential", "test_probe_store",
         "test_hardening_structure", "test_convert_corpus", "test_hardening2_bounds",
         "test_hardening2_fuzz", "test_hardening2_write", "test_targets_arithmetic")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.module.__name__ not in FIRST if item.module else True)  # stable
    asked = config.getoption("markexpr") or ""
    for item in items:
        for marker, why in OPT_IN.items():
            if marker in item.keywords and marker not in asked:
                item.add_marker(pytest.mark.skip(reason=why))
