"""TF's checkpoint I/O ops (``io_ops``) and the graph a V2 Saver builds with them: ``SaveV2``, ``RestoreV2``,
``MergeV2Checkpoints`` and the string ops of a sharded save (``ShardedFilename``, ``StringJoin``,
``StaticRegexFullMatch``), each registered with its numpy kernel; ``save_op``/``restore_ops``/``sharded_save_ops``
build TF's BulkSaverBuilder graph (``saver.py``'s Saver); ``restore_v2`` also backs ``init_from_checkpoint``.
The kernels read and write TF's tensor bundle (``tensor_bundle.py``)."""
from __future__ import annotations

import os
import re
from typing import Any, Optional

import numpy as np

from ...control_flow import group, with_dependencies
from ...framework import dtypes as _dtypes
from ...framework.errors import NotFoundError
from ...framework.graph import control_dependencies, name_scope
from ...framework.registry import (apply_op, constant, convert_to_tensor, create_op, register, shape_broadcast,
                                   shape_same)
from ...framework.tensor_shape import TensorShape
from ...ops import array_ops, math_ops
from ...ops.state_ops import assign
from . import tensor_bundle
from .checkpoint_files import read_checkpoint


def _text(x: Any) -> str:
    x = x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def _names_and_slices(tensor_names, shape_and_slices) -> list:
    names = [_text(n) for n in np.reshape(tensor_names, [-1])]
    slices = [_text(s) for s in np.reshape(shape_and_slices, [-1])]
    if any(slices):
        raise NotImplementedError("slices (partitioned variables) are not supported: %s" % slices)
    return names


def _save_v2(prefix, tensor_names, shape_and_slices, *tensors, dtypes=()):
    """TF's SaveV2 kernel: the tensors as a V2 checkpoint (tensor bundle) at ``prefix``; as TF's BundleWriter it
    makes the prefix's directory when only that level is missing (a sharded save's ``<prefix>_temp/``)."""
    names = _names_and_slices(tensor_names, shape_and_slices)
    directory = os.path.dirname(_text(prefix))
    if directory and not os.path.isdir(directory):
        os.mkdir(directory)
    tensor_bundle.write_bundle(_text(prefix), {n: np.asarray(t) for n, t in zip(names, tensors)})


def _restore_v2(prefix, tensor_names, shape_and_slices, dtypes=()):
    names = _names_and_slices(tensor_names, shape_and_slices)
    values = read_checkpoint(_text(prefix), names)
    out = []
    for name, dtype in zip(names, dtypes):
        arr = values[name]
        if arr.dtype != dtype.as_numpy_dtype:
            raise ValueError("RestoreV2: tensor %s in checkpoint %s is %s, expected %s"
                             % (name, _text(prefix), arr.dtype, dtype.name))
        out.append(np.array(arr, copy=True))
    return out[0] if len(out) == 1 else tuple(out)      # the registry's convention for one output


def _merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True, allow_missing_files=False):
    """TF's MergeV2Checkpoints: the shards' tensors as one bundle at ``destination_prefix``; the shards' files
    are removed (and their directory, when ``delete_old_dirs`` and it is left empty)."""
    prefixes = [_text(p) for p in np.reshape(checkpoint_prefixes, [-1])]
    merged: dict = {}
    for prefix in prefixes:
        if not tensor_bundle.bundle_exists(prefix):
            if allow_missing_files:
                continue
            raise NotFoundError(None, "MergeV2Checkpoints: no checkpoint at %s" % prefix)
        merged.update(read_checkpoint(prefix))
    tensor_bundle.write_bundle(_text(destination_prefix), merged)
    for prefix in prefixes:
        for path in (tensor_bundle.data_path(prefix), tensor_bundle.index_path(prefix)):
            if os.path.exists(path):
                os.remove(path)
        if delete_old_dirs:
            try:
                os.rmdir(os.path.dirname(prefix) or ".")
            except OSError:
                pass


def _sharded_filename(basename, shard, num_shards):
    return np.array("%s-%05d-of-%05d" % (_text(basename), int(shard), int(num_shards)), dtype=object)


def _string_join_kernel(*inputs, separator=""):
    parts = np.broadcast_arrays(*[np.asarray(x, dtype=object) for x in inputs])
    out = np.empty(parts[0].shape, dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = separator.encode().join(p[index] if isinstance(p[index], bytes) else str(p[index]).encode()
                                             for p in parts)
    return out


def _static_regex_full_match(x, pattern=""):
    regex = re.compile(pattern)
    values = np.asarray(x, dtype=object)
    return np.vectorize(lambda v: regex.fullmatch(_text(v)) is not None, otypes=[bool])(values) if values.size \
        else np.zeros(values.shape, bool)


register("SaveV2", _save_v2, num_outputs=0, stateful=True)
register("MergeV2Checkpoints", _merge_v2_checkpoints, num_outputs=0, stateful=True)
register("ShardedFilename", _sharded_filename, dtype=_dtypes.string, shape=lambda op: TensorShape([]))
register("StringJoin", _string_join_kernel, dtype=_dtypes.string, shape=shape_broadcast)
register("StaticRegexFullMatch", _static_regex_full_match, dtype=_dtypes.bool, shape=shape_same)
register("RestoreV2", _restore_v2, num_outputs=lambda attrs: len(attrs["dtypes"]),
         dtype=lambda op: list(op.attrs["dtypes"]), stateful=True)


def _strings(values: Any, name: str):
    return constant(np.array(values, dtype=object), dtype=_dtypes.string, name=name)


def save_v2(prefix: Any, tensor_names: list, shape_and_slices: list, tensors: list, name: Optional[str] = None):
    """The ``SaveV2`` op (TF's ``io_ops.save_v2``): its string inputs as ``SaveV2/tensor_names``, ..."""
    with name_scope(name, "SaveV2") as scope:
        prefix = convert_to_tensor(prefix, dtype=_dtypes.string, name="prefix")
        inputs = [prefix, _strings(tensor_names, "tensor_names"), _strings(shape_and_slices, "shape_and_slices")]
        return create_op("SaveV2", inputs + list(tensors), dict(dtypes=[t.dtype for t in tensors]), name=scope)


def restore_v2(prefix: Any, tensor_names: list, shape_and_slices: list, dtypes: list, name: Optional[str] = None):
    """The ``RestoreV2`` op: the named tensors of checkpoint ``prefix``, read when the op runs (one output per
    name, a list)."""
    with name_scope(name, "RestoreV2") as scope:
        prefix = convert_to_tensor(prefix, dtype=_dtypes.string, name="prefix")
        inputs = [prefix, _strings(tensor_names, "tensor_names"), _strings(shape_and_slices, "shape_and_slices")]
        return list(create_op("RestoreV2", inputs, dict(dtypes=list(dtypes)), name=scope).outputs)




# ---------------------------------------------------------------------------------------------------------
# the graph of a V2 Saver (TF's BulkSaverBuilder)


def save_op(prefix: Any, items: list):
    names = [n for n, _ in items]
    return save_v2(prefix, names, [""] * len(names), [v._ref() for _, v in items])


def restore_ops(graph: Any, filename: Any, items: list, name: str):
    """One RestoreV2 (on the CPU, TF's BulkSaverBuilder) and an Assign per variable, grouped as ``name``."""
    names = [n for n, _ in items]
    with graph.device("/device:CPU:0"):
        restored = restore_v2(filename, names, [""] * len(names), [v.dtype for _, v in items])
    assigns = [assign(v._ref(), t, validate_shape=v.shape.is_fully_defined()) for (_, v), t in zip(items, restored)]
    return group(*assigns, name=name)


def sharded_save_ops(graph: Any, prefix: Any, items: list):
    """TF's _AddShardedSaveOpsForV2 for one device: the shard is saved under ``<prefix>_temp/part`` (``.part``
    on s3://), then MergeV2Checkpoints into ``prefix``; returns ``prefix`` after both."""
    with graph.device("/device:CPU:*"):
        suffix = math_ops.where(_regex_full_match(prefix, "^s3://.*"), constant(".part"),
                                constant(os.path.normpath("_temp/part")))
        tmp_prefix = string_join([prefix, suffix])
    num_shards = constant(1, name="num_shards")
    with graph.device("/device:CPU:0"):
        with name_scope(None, "ShardedFilename") as scope:
            shard_name = apply_op("ShardedFilename", [tmp_prefix, constant(0, name="shard"), num_shards], name=scope)
        saved = with_dependencies([save_op(shard_name, items)], shard_name)
        with control_dependencies([saved.op]):
            with name_scope(None, "MergeV2Checkpoints") as scope:
                prefixes = apply_op("Pack", [shard_name], dict(N=1, axis=0), name="checkpoint_prefixes")
                merge = create_op("MergeV2Checkpoints", [prefixes, prefix],
                                  dict(delete_old_dirs=True, allow_missing_files=False), name=scope)
            with control_dependencies([merge]):
                return array_ops.identity(prefix)


def _regex_full_match(x: Any, pattern: str):
    with name_scope(None, "StaticRegexFullMatch") as scope:
        return apply_op("StaticRegexFullMatch", [x], dict(pattern=pattern), name=scope)


def string_join(inputs: list, separator: str = ""):
    with name_scope(None, "StringJoin") as scope:
        return apply_op("StringJoin", list(inputs), dict(N=len(inputs), separator=separator), name=scope)
