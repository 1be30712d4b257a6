"""Pure summary builders: Python/numpy/torch values in, ``tfevents.proto.summary_pb2.Summary`` out.

Each function checks its arguments (TypeError for a wrong type or dtype, ValueError for a wrong
shape, range, emptiness or NaN, naming the argument) and returns a new Summary with one Value
(``hparams`` returns three). Nothing here does I/O; the writer frames and queues what these build.

=====================  ==================================================================
builder                TensorBoard dashboard / proto field
=====================  ==================================================================
scalar                 Scalars; ``Value.simple_value`` (float32)
histogram(_raw)        Histograms / Distributions; ``Value.histo`` (HistogramProto)
image, images, figure  Images; ``Value.image`` (PNG)
audio                  Audio; ``Value.audio`` (16-bit PCM WAV)
text                   Text; DT_STRING tensor, plugin ``text``
pr_curve(_raw)         PR Curves; float32 [6, n] tensor, plugin ``pr_curves``
hparams                HParams; three plugin ``hparams`` values
custom_scalars(_*)     Custom Scalars layout (also one multiline or margin chart); plugin ``custom_scalars``
tensor                 any array as a TF2-style tensor (``add_tensor``)
mesh                   Mesh; float tensors per component, plugin ``mesh``
video                  Images; ``Value.image`` (animated GIF)
image_with_boxes       Images; ``Value.image`` (PNG with the boxes drawn)
=====================  ==================================================================

``arguments`` holds the checks of the encoded kinds' arguments that need no encoding (shapes, layouts, dtypes,
options), which the writer runs in the call before it encodes on its thread.
"""
from __future__ import annotations

from typing import Any, Optional

from tfevents.proto import summary_pb2, tensor_pb2, types_pb2

from .common import as_array, clean_tag, single_value
from . import arguments
from .histograms import default_bucket_edges, histogram, histogram_raw
from .media import audio, figure, image, images
from .boxes import image_with_boxes
from .meshes import mesh
from .plugins import (compute_pr_curve, custom_scalars, custom_scalars_marginchart, custom_scalars_multilinechart,
                       hparams, pr_curve, pr_curve_raw, text)
from .tensors import tensor
from .videos import video

__all__ = [
    "scalar", "histogram", "histogram_raw", "default_bucket_edges", "image", "images", "figure", "audio",
    "text", "pr_curve", "pr_curve_raw", "compute_pr_curve", "hparams", "custom_scalars",
    "custom_scalars_multilinechart", "custom_scalars_marginchart", "tensor", "mesh", "video", "image_with_boxes",
]


def scalar(tag: str, value: Any, display_name: Optional[str] = None,
           description: Optional[str] = None, new_style: bool = False,
           double_precision: bool = False) -> summary_pb2.Summary:
    """Summary with one scalar in ``Value.simple_value`` (stored as float32).

    ``value``: a Python number or bool, or a numpy/torch/JAX array with exactly one element
    (e.g. a 0-d tensor or a loss of shape [1]). NaN and Inf are written as they are (TensorBoard
    plots them as such). ``display_name``/``description`` go to the value's SummaryMetadata
    (TensorBoard's chart title and tooltip), as tensorboardX does. ``new_style`` (torch's): a 0-d
    DT_FLOAT tensor (DT_DOUBLE with ``double_precision``) with plugin ``scalars`` instead.
    """
    tag = clean_tag(tag)
    if isinstance(value, (str, bytes)):
        raise TypeError("scalar %r: value must be a number, got %s" % (tag, type(value).__name__))
    array = as_array(value, "value")
    if array.dtype.kind not in "biuf":
        raise TypeError("scalar %r: value must be a real number, got dtype %s" % (tag, array.dtype))
    if array.size != 1:
        raise ValueError("scalar %r: value must hold exactly one number, got shape %s" % (tag, array.shape))
    metadata = None
    for name, text in (("display_name", display_name), ("description", description)):
        if text is not None and not isinstance(text, str):
            raise TypeError("%s must be a str, got %s" % (name, type(text).__name__))
    if display_name or description:
        metadata = summary_pb2.SummaryMetadata(display_name=display_name or "",
                                               summary_description=description or "")
    number = float(array.reshape(()))
    if not new_style:
        return single_value(tag, metadata=metadata, simple_value=number)
    if double_precision:
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE, double_val=[number])
    else:
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[number])
    metadata = metadata or summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = "scalars"
    return single_value(tag, metadata=metadata, tensor=tensor)
