"""The collector pause around a model's check (qlin_cli/gc_pause.py)."""

from __future__ import annotations

import gc
import os
import threading

from paths import MODELS

from qlin_cli.check.engine import check_file
from qlin_cli.gc_pause import paused_collection


def test_nested_pauses_switch_the_collector_back_on_once():
    assert gc.isenabled()
    with paused_collection():
        assert not gc.isenabled()
        with paused_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause is still on
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with paused_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_still_switches_it_back_on():
    try:
        with paused_collection():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()


def test_overlapping_pauses_in_threads():
    inside, release = threading.Event(), threading.Event()

    def hold():
        with paused_collection():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    inside.wait(10)
    with paused_collection():
        pass
    assert not gc.isenabled()  # the thread's pause outlives this one
    release.set()
    t.join()
    assert gc.isenabled()


def test_check_file_runs_paused_and_restores(monkeypatch):
    from qlin_cli.check import engine

    seen = []
    real = engine.check_analysis
    monkeypatch.setattr(engine, "check_analysis",
                        lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    result = check_file(os.path.join(MODELS, "rules", "QL405-bad.onnx"))
    assert seen == [False] and gc.isenabled()
    assert [d.code for d in result.diagnostics] == ["QL405"]
