"""Forward-mode AD levels are global, as PyTorch's: a level entered on one thread is
the level of every thread, while switching forward AD off (a custom Function's
forward, a formula's evaluation) concerns only the thread that does it."""

from __future__ import annotations

import importlib
import threading

from torch_oracle import assert_same


def _fw_ad(lib):
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _in_thread(fn):
    result = {}

    def run():
        try:
            result["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - compared by type and text
            result["value"] = (type(exc).__name__, str(exc))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return result["value"]


def test_a_thread_makes_duals_at_the_level_another_entered(torch):
    def scenario(lib):
        fwAD = _fw_ad(lib)

        def work():
            dual = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
            return fwAD.unpack_dual(dual * dual * 3).tangent.tolist()

        with fwAD.dual_level():
            return _in_thread(work)

    assert_same(torch, scenario)


def test_a_level_entered_on_another_thread_is_seen_and_cannot_be_nested(torch):
    def scenario(lib):
        fwAD = _fw_ad(lib)
        entered, done = threading.Event(), threading.Event()

        def hold_a_level():
            with fwAD.dual_level():
                entered.set()
                done.wait()

        holder = threading.Thread(target=hold_a_level)
        holder.start()
        entered.wait()
        try:
            dual = fwAD.make_dual(lib.ones(2), lib.ones(2))
            seen = fwAD.unpack_dual(dual * 3).tangent.tolist()
            try:
                fwAD.enter_dual_level()
                nested = "entered"
            except RuntimeError as exc:
                nested = str(exc)
        finally:
            done.set()
            holder.join()
        after = fwAD.unpack_dual(lib.ones(2)).tangent
        return seen, nested, after

    assert_same(torch, scenario)


def test_a_custom_function_forward_switches_forward_ad_off_for_its_thread_only(torch):
    def scenario(lib):
        fwAD = _fw_ad(lib)
        inside, resume = threading.Event(), threading.Event()
        seen_inside = {}

        class Waits(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen_inside["tangent"] = fwAD.unpack_dual(x).tangent
                inside.set()
                resume.wait()
                return x * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 2

        with fwAD.dual_level():
            worker = threading.Thread(
                target=lambda: Waits.apply(fwAD.make_dual(lib.ones(2), lib.ones(2)))
            )
            worker.start()
            inside.wait()
            try:  # the worker is inside forward: this thread still computes tangents
                dual = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
                here = fwAD.unpack_dual(dual * dual).tangent.tolist()
            finally:
                resume.set()
                worker.join()
            later = fwAD.unpack_dual(fwAD.make_dual(lib.ones(2), lib.ones(2)) * 5).tangent
        return here, seen_inside["tangent"], later.tolist()

    assert_same(torch, scenario)
