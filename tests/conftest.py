import atexit
import gc
import os
import sys

import pytest
from paths import FIXTURES, ROOT, TOOLS

for p in (ROOT, FIXTURES, TOOLS):
    if p not in sys.path:
        sys.path.insert(0, p)

# qlin's results cache (qlin_cli/cache.py) off in every test and every qlin a test starts:
# each check is a check; tests/test_cache.py turns it on where it is what is tested
os.environ["QLIN_NO_CACHE"] = "1"


def _fsync_checked(fd: int) -> None:
    """os.fsync in the test processes: the descriptor must be open (os.fstat raises as fsync
    would), but nothing waits for the disk. qlin makes every write durable (convert/write.py:
    the file, then its folder), about 5 ms a conversion here and over a thousand in a run; the
    tests of durability kill real qlin processes mid-write (test_hardening_write.py,
    test_hardening2_write.py), whose os.fsync is the real one."""
    os.fstat(fd)


os.fsync = _fsync_checked



def _no_local_constants() -> None:
    """Hypothesis draws now and then from the literals of the project's own modules, which it
    finds by parsing every such module a test process has imported (about a second a worker on a
    clean clone, cached in .hypothesis/ after). Off: the examples of a derandomized test no longer
    change when a literal anywhere in qlin does, and a clean clone does not parse qlin twice more."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    if callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "_local_constants"):
        providers._get_local_constants = lambda: providers._local_constants


_no_local_constants()
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
_finished = False  # the session ended, its last report sent


def _leave_now() -> None:
    """A test worker that has sent its last report ends without the interpreter's teardown: freeing
    the modules and objects of some 4,000 tests took 3-4 s, which the run waited for. Registered
    first, it runs after every later atexit handler (pytest's, hypothesis', the fork servers')."""
    if _finished:
        from qlin_cli.entry import flush_std_streams

        flush_std_streams()
        os._exit(0)


def pytest_configure(config):
    if WORKER:
        atexit.register(_leave_now)


def pytest_collection_finish(session):
    """What collection made (the test modules, their items, the imports) lives to the end:
    it is kept out of the collector's walks. The walks of everything (the oldest generation)
    come a tenth as often: a worker holds a million objects by the end (the sources' trees, the
    target stores read whole), and its 12-14 full walks took 3-6 s."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def pytest_sessionfinish(session, exitstatus):
    global _finished
    _finished = True


@pytest.fixture(scope="session", autouse=True)
def _corpus_shared_by_the_workers(tmp_path_factory):
    """pytest-xdist's workers share one folder of quantized corpus models (fixtures/corpus.py
    SHARED, under the run's temporary folder, which pytest removes with old runs): each
    configuration is quantized by one worker of the run."""
    import corpus

    if os.environ.get("PYTEST_XDIST_WORKER") and not corpus.SHARED:
        corpus.SHARED = str(tmp_path_factory.getbasetemp().parent / "corpus_shared")
    yield


# Tests that measure a runtime rather than qlin: they run only when their marker is asked
# for (`make remeasure` is `pytest -m remeasure`), never in `make test`.
OPT_IN = {"remeasure": "re-measures the installed runtime release: `make remeasure`"}


def pytest_collection_modifyitems(config, items):
    asked = config.getoption("markexpr") or ""
    for item in items:
        for marker, why in OPT_IN.items():
            if marker in item.keywords and marker not in asked:
                item.add_marker(pytest.mark.skip(reason=why))
