"""The parts of TF's ``nest`` the RNN cells and drivers use: structures of tensors (tuples, lists, namedtuples
such as ``LSTMStateTuple``) flattened, rebuilt and mapped, plus ``map_structure_up_to`` and
``get_traverse_shallow_structure`` (the dropout wrapper's state filter)."""
from __future__ import annotations

from typing import Any, Callable, List

from ..control_flow.nest import assert_same_structure, flatten, is_nested, map_structure, pack_sequence_as

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as",
           "sequence_like", "map_structure_up_to", "get_traverse_shallow_structure"]


def sequence_like(instance: Any, items: List[Any]) -> Any:
    """``items`` in the container type of ``instance`` (a namedtuple keeps its class)."""
    if isinstance(instance, tuple) and hasattr(instance, "_fields"):
        return type(instance)(*items)
    return type(instance)(items)


def _flatten_up_to(shallow: Any, tree: Any) -> List[Any]:
    if not is_nested(shallow):
        return [tree]
    if not is_nested(tree) or len(tree) != len(shallow):
        raise ValueError("The input structure %r does not have the shallow structure %r" % (tree, shallow))
    out: list = []
    for s, t in zip(shallow, tree):
        out.extend(_flatten_up_to(s, t))
    return out


def map_structure_up_to(shallow: Any, fn: Callable, *structures: Any) -> Any:
    """``fn`` applied to the parts of ``structures`` at the leaves of ``shallow`` (deeper parts passed whole)."""
    flats = [_flatten_up_to(shallow, s) for s in structures]
    return pack_sequence_as(shallow, [fn(*xs) for xs in zip(*flats)])


def get_traverse_shallow_structure(traverse_fn: Callable, structure: Any) -> Any:
    """A shallow structure of bools: where ``traverse_fn`` says True, go deeper; False stops (TF's rule)."""
    to_traverse = traverse_fn(structure)
    if not is_nested(structure):
        if not isinstance(to_traverse, bool):
            raise TypeError("traverse_fn returned structure: %s for non-structure: %s" % (to_traverse, structure))
        return to_traverse
    if isinstance(to_traverse, bool):
        if not to_traverse:
            return False
        return sequence_like(structure, [get_traverse_shallow_structure(traverse_fn, b) for b in structure])
    if not is_nested(to_traverse) or len(to_traverse) != len(structure):
        raise TypeError("traverse_fn returned %r for input %r: expected a bool or a depth-1 structure of bools "
                        "shaped like the input" % (to_traverse, structure))
    level = []
    for t, branch in zip(to_traverse, structure):
        if not isinstance(t, bool):
            raise TypeError("traverse_fn didn't return a depth=1 structure of bools.  saw: %s  for structure: %s"
                            % (to_traverse, structure))
        level.append(get_traverse_shallow_structure(traverse_fn, branch) if t else False)
    return sequence_like(structure, level)
