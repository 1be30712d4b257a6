"""Mesh / point-cloud summaries for TensorBoard's mesh plugin (a Three.js viewer).

One mesh is up to three tensor values in one Summary, in this order: vertex positions
(``<tag>_VERTEX``), triangle faces (``<tag>_FACE``) and per-vertex colors (``<tag>_COLOR``).
Each carries a ``MeshPluginData`` naming the mesh (``name = tag``), its own content type and
shape, the bitmask of the components present and the scene configuration as JSON; TensorBoard's
plugin regroups the values by that name. Tags and metadata are those of TensorBoard's
``mesh.summary.pb`` / ``mesh_pb`` and torch.utils.tensorboard's ``add_mesh``; the tensors are
DT_FLOAT, as tensorboardX and torch write them (the plugin casts each component to float32,
int32 or uint8 when it serves it).
"""
from __future__ import annotations

import json
from typing import Any, List, Mapping, Optional, Tuple

import numpy as np

from tfevents.proto import plugin_mesh_pb2, summary_pb2

from .common import as_numeric_array, clean_tag, float32_tensor, plugin_metadata, require_finite

__all__ = ["mesh", "mesh_components", "MESH_PLUGIN_NAME"]

MESH_PLUGIN_NAME = "mesh"
_Data = plugin_mesh_pb2.MeshPluginData
_FLOAT32_EXACT_INT = 1 << 24  # larger face indices would not survive the float32 tensor


def mesh_components(content_types: List[int]) -> int:
    """The ``components`` bitmask: ``1 << content_type`` for each present component
    (TensorBoard's ``mesh.metadata.get_components_bitmask``)."""
    mask = 0
    for content_type in content_types:
        if content_type == _Data.UNDEFINED:
            raise ValueError("UNDEFINED is not a mesh component")
        mask |= 1 << content_type
    return mask


def _json_config(config_dict: Optional[Mapping[str, Any]]) -> str:
    """``json.dumps(config_dict, sort_keys=True)``; ``'{}'`` for None (TensorBoard/torch; tensorboardX
    writes ``'null'``, which the plugin's viewer does not read as a configuration)."""
    if config_dict is None:
        return "{}"
    if not isinstance(config_dict, Mapping):
        raise TypeError("config_dict must be a dict (Three.js class name -> settings) or None, got %s"
                        % type(config_dict).__name__)
    try:
        return json.dumps(config_dict, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise type(err)("config_dict must be JSON-serializable (str keys; str, number, bool, None, "
                        "list and dict values; finite numbers): %s" % err) from None


def _points(value: Any, name: str) -> np.ndarray:
    """A real-valued ``[B, N, 3]`` array, not empty."""
    array = as_numeric_array(value, name)
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError("%s must have shape [batch, count, 3], got %s" % (name, array.shape))
    if array.size == 0:
        raise ValueError("%s is empty (shape %s)" % (name, array.shape))
    return array


def _check_vertices(vertices: Any) -> np.ndarray:
    array = _points(vertices, "vertices")
    require_finite(array, "vertices")
    return array


def _check_colors(colors: Any, vertices: np.ndarray) -> np.ndarray:
    array = _points(colors, "colors")
    if array.shape != vertices.shape:
        raise ValueError("colors must give one RGB triple per vertex: shape %s, expected %s like vertices"
                         % (array.shape, vertices.shape))
    require_finite(array, "colors")
    low, high = array.min(), array.max()
    if low < 0 or high > 255:
        raise ValueError("colors must lie in [0, 255] (the plugin reads them as uint8), got range [%r, %r]"
                         % (float(low), float(high)))
    return array


def _check_faces(faces: Any, vertices: np.ndarray) -> np.ndarray:
    array = _points(faces, "faces")
    if array.shape[0] != vertices.shape[0]:
        raise ValueError("faces has batch size %d but vertices has %d (shapes %s and %s)"
                         % (array.shape[0], vertices.shape[0], array.shape, vertices.shape))
    if array.dtype.kind == "b":
        raise TypeError("faces must hold integer vertex indices, got dtype bool")
    if array.dtype.kind == "f":
        require_finite(array, "faces")
        if not np.array_equal(array, np.floor(array)):
            raise ValueError("faces must hold integer vertex indices, got non-integral values")
    count = vertices.shape[1]
    low, high = array.min(), array.max()
    if low < 0 or high >= count:
        raise ValueError("faces must index vertices in [0, %d), got range [%r, %r]"
                         % (count, low.item(), high.item()))
    if high >= _FLOAT32_EXACT_INT:
        raise ValueError("faces index vertex %d; indices above 2**24 are not exact in the float32 tensor"
                         % high.item())
    return array


def _component(tag: str, array: np.ndarray, content_type: int, components: int,
               json_config: str) -> summary_pb2.Summary.Value:
    content = _Data(version=0, name=tag, content_type=content_type, json_config=json_config,
                    shape=list(array.shape), components=components).SerializeToString()
    value = summary_pb2.Summary.Value(tag="%s_%s" % (tag, _Data.ContentType.Name(content_type)),
                                      tensor=float32_tensor(array))
    value.metadata.CopyFrom(plugin_metadata(MESH_PLUGIN_NAME, content))
    return value


def mesh(tag: str, vertices: Any, colors: Any = None, faces: Any = None,
         config_dict: Optional[Mapping[str, Any]] = None) -> summary_pb2.Summary:
    """Summary for the mesh plugin: a mesh (with ``faces``) or a point cloud (without).

    ``vertices``: ``[B, N, 3]`` finite coordinates (B meshes of N vertices; the dashboard shows
    each of the B samples); ``colors``: None or ``[B, N, 3]`` RGB per vertex in [0, 255];
    ``faces``: None or ``[B, F, 3]`` integer vertex indices in [0, N), three per triangle.
    Numpy arrays, nested lists and torch tensors are accepted; all are stored as float32.
    ``config_dict``: None or a JSON-serializable dict of Three.js settings, e.g.
    ``{'camera': {'cls': 'PerspectiveCamera', 'fov': 75}, 'lights': [...], 'material': {...}}``,
    stored sorted as ``json_config`` (``'{}'`` when None).

    Returns a Summary of one value per component given, in the order VERTEX, FACE, COLOR, tagged
    ``<tag>_VERTEX`` / ``<tag>_FACE`` / ``<tag>_COLOR``; each value's plugin content is a
    ``MeshPluginData(version=0, name=tag, content_type, json_config, shape, components)`` with
    ``components`` the bitmask ``1 << content_type`` of the components present.
    """
    tag = clean_tag(tag)
    json_config = _json_config(config_dict)
    vertex_array = _check_vertices(vertices)
    parts: List[Tuple[np.ndarray, int]] = [(vertex_array, _Data.VERTEX)]
    if faces is not None:
        parts.append((_check_faces(faces, vertex_array), _Data.FACE))
    if colors is not None:
        parts.append((_check_colors(colors, vertex_array), _Data.COLOR))
    components = mesh_components([content_type for _, content_type in parts])
    return summary_pb2.Summary(value=[_component(tag, array, content_type, components, json_config)
                                      for array, content_type in parts])
