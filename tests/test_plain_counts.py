"""Issue 12's deterministic gates for the plain path: counts, not timings.

(a) Python-level calls in one warm case-a step, ``(x * w + b).sum().backward()``;
(b) GC-tracked objects each recorded op keeps alive on a 1,000-op chain.

Both fail today (about 118 calls and 7 objects): they are strict xfails, so the suite
turns red (XPASS) the moment a gate is met; whoever meets it removes the mark.
"""

from __future__ import annotations

import gc
import os
import sys

import pytest

import opgrad as og

pytestmark = pytest.mark.skipif(
    os.environ.get("OPGRAD_PLAIN") == "0", reason="OPGRAD_PLAIN=0: the gates are the plain path's"
)

NOT_YET = pytest.mark.xfail(strict=True, reason="issue 12: plain path not complete")

MAX_CALLS_PER_STEP = 55
MAX_OBJECTS_PER_OP = 3
CHAIN_LENGTH = 1000


def count_python_calls_of_case_a_step() -> int:
    x, w, b = (og.tensor([v], dtype=og.float64, requires_grad=True) for v in (0.5, 1.5, -0.25))
    for _ in range(3):  # warm: first-call caches, lazy imports
        x.grad = w.grad = b.grad = None
        (x * w + b).sum().backward()
    calls = []

    def profile(frame, event, arg):
        if event == "call":  # Python frames only; "c_call" events are builtins
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        x.grad = w.grad = b.grad = None
        (x * w + b).sum().backward()
    finally:
        sys.setprofile(None)
    return len(calls)


def chain(length: int):
    leaf = og.tensor([1.0] * 100, dtype=og.float64, requires_grad=True)
    y = leaf
    for _ in range(length):
        y = y * 1.0001
    return leaf, y


def gc_tracked_objects_per_recorded_op() -> float:
    # Chosen: no gc.collect() after building, with the collector enabled as in a user's
    # process. A collection after building would untrack the tuples that hold only
    # atomic values (a shape), hiding objects each op did allocate as tracked and that
    # the collector had to traverse while the chain was recorded, which is what costs
    # case d its time. This is the measure, 7 per op today (a collection after
    # building reads 6; with the collector off during the build, 8, the issue's
    # breakdown of 5 tuples, the wrapped number, the node and a SavedVariable). It is
    # deterministic: gc.collect() just before the baseline resets the generation counts,
    # so the automatic collections during the build always fall at the same points.
    chain(CHAIN_LENGTH)  # warm-up: first-call caches, lazy imports
    gc.collect()
    before = len(gc.get_objects())
    kept = chain(CHAIN_LENGTH)
    after = len(gc.get_objects())
    del kept
    return (after - before) / CHAIN_LENGTH


@NOT_YET
def test_case_a_step_makes_at_most_55_python_calls():
    calls = count_python_calls_of_case_a_step()
    assert calls <= MAX_CALLS_PER_STEP, f"{calls} Python-level calls in one case-a step"


@NOT_YET
def test_a_recorded_op_keeps_at_most_3_gc_tracked_objects_alive():
    per_op = gc_tracked_objects_per_recorded_op()
    assert (
        per_op <= MAX_OBJECTS_PER_OP
    ), f"{per_op:.3f} GC-tracked objects kept alive per recorded op"
