"""Profile opgrad's per-op overhead on the smallest autograd step.

Runs bench case (a), ``(x * w + b).sum().backward()`` on one float64 element
with leaf grads reset to None each step, many times under cProfile, and
prints the top functions by tottime (time spent in the function itself).
On one element numpy's work is negligible, so what shows up is the Python
around it: dispatch, kernel lookup, node construction, the engine loop.

Usage:  python tools/profile_tiny.py [--steps N] [--top K] [--sort KEY]
        [--out FILE.prof]  (FILE.prof opens in snakeviz or pstats)

OPGRAD_BENCH_FAKE=torch profiles torch imported as og (script testing only).
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # as in bench.py: before numpy loads BLAS

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

if os.environ.get("OPGRAD_BENCH_FAKE") == "torch":
    import torch as og
else:
    import opgrad as og


def make_step():
    x, w, b = (og.tensor(np.array([v]), requires_grad=True) for v in (0.5, -1.5, 2.0))

    def step():
        x.grad = None
        w.grad = None
        b.grad = None
        (x * w + b).sum().backward()

    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000, help="profiled steps")
    parser.add_argument("--top", type=int, default=25, help="functions to print")
    parser.add_argument("--sort", default="tottime", help="pstats sort key")
    parser.add_argument("--out", help="also save raw stats to this file")
    args = parser.parse_args()

    step = make_step()
    for _ in range(100):  # warm-up: caches filled before profiling
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    per_step = (time.perf_counter() - start) / args.steps
    print(f"{og.__name__}: {per_step * 1e6:.1f} µs per step without the profiler")

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.steps):
        step()
    profiler.disable()
    if args.out:
        profiler.dump_stats(args.out)
    stats = pstats.Stats(profiler)
    print(f"{args.steps} steps under cProfile; per-call times include its overhead")
    stats.sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
