"""The collector is off while the command line starts and back on once the first model has
been read (gc_pause.pause_for_start): a command never runs its checks with it off for good."""

import gc

import pytest

from qlin_cli import gc_pause


@pytest.fixture
def restore():
    was = gc.isenabled()
    yield
    gc_pause._starting = False
    (gc.enable if was else gc.disable)()


def test_off_at_start_and_on_after_the_first_model(restore):
    gc.enable()
    gc_pause.pause_for_start()
    assert not gc.isenabled()
    with gc_pause.paused_collection():
        assert not gc.isenabled()
        with gc_pause.paused_collection():  # nested: still off
            pass
        assert not gc.isenabled()
    assert gc.isenabled()  # the first model read: on again
    with gc_pause.paused_collection():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_off_when_the_caller_had_it_off(restore):
    gc.disable()
    gc_pause.pause_for_start()  # nothing to switch off: nothing to switch back on
    with gc_pause.paused_collection():
        pass
    assert not gc.isenabled()


def test_the_command_line_ends_its_check_with_the_collector_on(restore, tmp_path):
    import subprocess
    import sys

    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    code = ("import atexit, gc, sys; from qlin_cli import entry; "
            "atexit.register(lambda: print('gc on' if gc.isenabled() else 'gc off')); "
            "sys.argv = ['qlin', 'check', '--no-cache', sys.argv[1]]; entry.run()")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "gc on", out.stdout + out.stderr
