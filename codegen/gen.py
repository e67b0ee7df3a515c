"""Entry point: render every template from the model into generated/.

``python -m codegen`` writes the files; ``python -m codegen --check`` only
compares and exits 1 naming the stale ones. Output is deterministic and
black-formatted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional

import black
import jinja2

from . import model as m
from .template_context import build_context, metadata_expr

ROOT = m.ROOT
TEMPLATES = Path(__file__).resolve().parent / "templates"
OUTPUTS = {
    "ops.py": "ops.py.j2",
    "cpu_kernels.py": "cpu_kernels.py.j2",
    "nodes.py": "nodes.py.j2",
    "autograd_kernels.py": "autograd_kernels.py.j2",
    "jvp_kernels.py": "jvp_kernels.py.j2",
    "plain_kernels.py": "plain_kernels.py.j2",
    "inplace_or_view_kernels.py": "inplace_or_view_kernels.py.j2",
    "registration.py": "registration.py.j2",
    "python_surface.py": "python_surface.py.j2",
    "tensor_methods.py": "tensor_methods.py.j2",
    "__init__.py": "__init__.py.j2",
}


BLACK_MODE = black.Mode(line_length=100)
#: cache entries older than a week are dropped when one is written
_OLDEST_KEPT = time.time() - 7 * 24 * 3600


def _black_formatted(item: tuple) -> str:
    """One rendered file, black-formatted (in a worker process)."""
    _, template, text = item
    try:
        return black.format_str(text, mode=BLACK_MODE)
    except black.InvalidInput as exc:  # a template bug: show the raw text's fault
        raise SystemExit(f"codegen: {template} rendered invalid Python: {exc}")


def render_all(yaml_path: Path) -> Dict[str, str]:
    """Every generated file's text, from ``yaml_path``."""
    model = m.load(yaml_path)
    context = build_context(model)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["metadata_expr"] = lambda kind, arg: metadata_expr(arg, kind)
    rendered = [
        (output, template, env.get_template(template).render(template_name=template, **context))
        for output, template in OUTPUTS.items()
    ]
    # black takes nine tenths of the time: a rendering formatted before is read back from
    # the cache, and the others are formatted side by side
    formatted = {output: _cached(text) for output, _, text in rendered}
    todo = [item for item in rendered if formatted[item[0]] is None]
    if todo:
        workers = min(len(todo), os.cpu_count() or 1)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for (output, _, text), result in zip(todo, pool.map(_black_formatted, todo)):
                formatted[output] = result
                _cache(text, result)
    return formatted


#: black's output for each rendering, by a hash of the rendering and black's version and
#: mode (outside git: a clean clone formats everything once)
CACHE = ROOT / ".codegen_cache"


def _cache_path(text: str) -> Path:
    key = f"{black.__version__}\0{BLACK_MODE!r}\0{text}".encode()
    return CACHE / hashlib.sha256(key).hexdigest()


def _cached(text: str) -> Optional[str]:
    try:
        return _cache_path(text).read_text()
    except OSError:
        return None


def _cache(text: str, formatted: str) -> None:
    try:
        CACHE.mkdir(exist_ok=True)
        for stale in CACHE.iterdir():  # keep a few generations, not every one ever made
            if stale.stat().st_mtime < _OLDEST_KEPT:
                stale.unlink()
        path = _cache_path(text)
        partial = path.with_suffix(".partial")
        partial.write_text(formatted)
        partial.replace(path)  # whole or absent, even with two runs at once
    except OSError:
        pass  # a read-only checkout formats every time


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if generated/ is stale")
    parser.add_argument("--yaml", type=Path, default=ROOT / "derivatives.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "generated")
    args = parser.parse_args(argv)
    try:
        files = render_all(args.yaml)
    except m.ModelError as exc:
        print(exc, file=sys.stderr)
        return 2
    stale = []
    for name, text in files.items():
        path = args.out / name
        current = path.read_text() if path.exists() else None
        if current != text:
            stale.append(name)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    extra = (
        sorted(p.name for p in args.out.glob("*.py") if p.name not in files)
        if args.out.exists()
        else []
    )
    if args.check:
        if stale or extra:
            for name in stale:
                print(f"stale: generated/{name}", file=sys.stderr)
            for name in extra:
                print(f"not made by codegen: generated/{name}", file=sys.stderr)
            print("run `python -m codegen` and commit the result", file=sys.stderr)
            return 1
        print(f"generated/ is up to date ({len(files)} files)")
        return 0
    for name in extra:
        (args.out / name).unlink()
    print(f"wrote {len(stale)} of {len(files)} files in {args.out}")
    return 0
