"""``opgrad.return_types``: the named tuples of ops with several named results.

PyTorch's Python functions and methods return a structseq for an op whose schema names
its results (``max.dim -> (Tensor values, Tensor indices)``): ``torch.return_types.max``,
a tuple whose items are also attributes. ``opgrad.ops.aten`` calls return plain tuples,
as torch's do. The out= form has a type of its own (``max_out``).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

#: the classes made so far (one per op with named results that the surface has)
__all__: List[str] = []


class _StructSeq(tuple):
    """A tuple with named items, built from one sequence as a structseq is."""

    __slots__ = ()
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields = 0
    _names: Tuple[str, ...]

    def __new__(cls, sequence):
        items = tuple(sequence)
        if len(items) != cls.n_sequence_fields:
            raise TypeError(
                f"opgrad.return_types.{cls.__name__}() takes a {cls.n_sequence_fields}-sequence "
                f"({len(items)}-sequence given)"
            )
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{n}={v!r}" for n, v in zip(self._names, self))
        return f"opgrad.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return type(self), (tuple(self),)


def struct_seq(name: str, fields: Tuple[str, ...]) -> type:
    """The named tuple class ``opgrad.return_types.<name>`` with ``fields``, made on first
    use (the Python surface asks for one per op with named results)."""
    found = globals().get(name)
    if isinstance(found, type) and issubclass(found, _StructSeq):
        if found._names != fields:
            raise RuntimeError(f"return_types.{name} has fields {found._names}, not {fields}")
        return found
    namespace: Dict[str, object] = {
        "__slots__": (),
        "__module__": __name__,
        "__qualname__": name,
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
        "_names": fields,
    }
    for index, field in enumerate(fields):
        namespace[field] = property(lambda self, i=index: tuple.__getitem__(self, i))
    cls = type(name, (_StructSeq,), namespace)
    globals()[name] = cls
    __all__.append(name)
    return cls


def is_struct_seq(value) -> bool:
    return isinstance(value, _StructSeq)
