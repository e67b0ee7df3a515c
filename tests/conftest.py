"""Shared pytest setup: the ``torch`` oracle fixture.

``torch_oracle.require_torch`` is the single place that decides what happens
without PyTorch: skip on a user's machine, fail under ``CI=true``.
"""

import os
import sys

import pytest

# The helpers module sits next to the tests; make it importable whatever
# pytest's import mode is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# its assert_same then shows pytest's diff of the two libraries' results
pytest.register_assert_rewrite("torch_oracle")

from torch_oracle import require_torch, reset_global_modes  # noqa: E402


@pytest.fixture(scope="session")
def torch():
    """Real PyTorch, the oracle (skips without it, fails under CI=true)."""
    return require_torch()


@pytest.fixture
def fresh_global_modes(torch):
    """Grad mode on and anomaly mode off in both libraries before and after a test, so a
    test that leaks a mode cannot fail the ones after it (opt in with usefixtures)."""
    reset_global_modes(torch)
    yield
    reset_global_modes(torch)


@pytest.fixture(autouse=True)
def _same_random_stream_every_test():
    """opgrad seeds its generator at random when it starts, as torch does; each test
    starts from seed 0 so that a run repeats the last one."""
    import opgrad

    opgrad.manual_seed(0)
