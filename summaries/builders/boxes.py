"""Images with bounding boxes drawn on them (tensorboardX/torch ``add_image_with_boxes``), one PNG in
``Summary.Image``. Boxes and labels are drawn with Pillow the way tensorboardX's ``draw_boxes`` draws
them, so the pixels match; Pillow is imported only when drawing.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import numpy as np

from tfevents.proto import summary_pb2

from .common import as_array, clean_tag, require_finite, single_value
from .media import _to_uint8, encode_png, to_hwc

__all__ = ["image_with_boxes", "draw_boxes", "check_boxes"]

_BOX_COLOR = "Red"      # outline and label background (tensorboardX draw_boxes)
_TEXT_COLOR = "black"
_LINE_WIDTH = 2


def check_boxes(box_tensor: Any) -> np.ndarray:
    """``box_tensor`` as an [N, 4] array of finite pixel coordinates (TypeError / ValueError naming what is wrong)."""
    boxes = as_array(box_tensor, "box_tensor")
    if boxes.dtype.kind not in "iuf":
        raise TypeError("box_tensor must hold pixel coordinates (int or float), got dtype %s" % boxes.dtype)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError("box_tensor must have shape [N, 4] (x_min, y_min, x_max, y_max per box), got %s"
                         % (boxes.shape,))
    require_finite(boxes, "box_tensor")
    return boxes


def _check_labels(labels: Any, count: int) -> Optional[list]:
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = [labels]
    elif isinstance(labels, np.ndarray):
        labels = labels.reshape(-1).tolist()
    elif not isinstance(labels, (list, tuple)):
        raise TypeError("labels must be a str or a list of str, got %s" % type(labels).__name__)
    for label in labels:
        if not isinstance(label, str):
            raise TypeError("labels must be str, found an element of type %s" % type(label).__name__)
    if len(labels) != count:
        raise ValueError("labels has %d entries but box_tensor has %d boxes; give one label per box"
                         % (len(labels), count))
    return list(labels)


def _check_rescale(rescale: Any, height: int, width: int) -> tuple:
    if isinstance(rescale, (bool, np.bool_)) or not isinstance(rescale, (int, float, np.integer, np.floating)):
        raise TypeError("rescale must be a number, got %s" % type(rescale).__name__)
    size = (int(width * rescale), int(height * rescale)) if math.isfinite(rescale) else (0, 0)
    if not (rescale > 0 and size[0] >= 1 and size[1] >= 1):
        raise ValueError("rescale must be a positive finite factor leaving at least 1x1 pixels, got %r for a "
                         "%dx%d image" % (rescale, width, height))
    return size


def _draw_box(draw: Any, font: Any, box: Sequence[float], label: Optional[str]) -> None:
    """One box outline, and its label on a filled strip along the inside of the bottom edge
    (tensorboardX ``_draw_single_box``: same points, widths, colours and text offsets)."""
    left, top, right, bottom = box
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
              width=_LINE_WIDTH, fill=_BOX_COLOR)
    if label:
        x0, y0, x1, y1 = font.getbbox(label)
        text_width, text_height = x1 - x0, y1 - y0
        margin = float(math.ceil(0.05 * text_height))
        draw.rectangle([(left, bottom - text_height - 2 * margin), (left + text_width, bottom)], fill=_BOX_COLOR)
        draw.text((left + margin, bottom - text_height - margin), label, fill=_TEXT_COLOR, font=font)


def draw_boxes(hwc: np.ndarray, boxes: np.ndarray, labels: Optional[Sequence[str]] = None) -> Any:
    """A Pillow image of uint8 ``[H, W, 3|4]`` pixels with each ``[x_min, y_min, x_max, y_max]``
    box outlined in red (2 px) and, when given, its label in black on a red strip at the box's
    bottom-left, in Pillow's default font."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(np.ascontiguousarray(hwc))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for i, box in enumerate(boxes.tolist()):
        _draw_box(draw, font, [float(v) for v in box], None if labels is None else labels[i])
    return image


def image_with_boxes(tag: str, img_tensor: Any, box_tensor: Any, labels: Union[None, str, Sequence[str]] = None,
                     dataformats: str = "CHW", rescale: Union[int, float] = 1) -> summary_pb2.Summary:
    """Summary with one PNG: ``img_tensor`` with ``box_tensor``'s boxes drawn on it
    (tensorboardX/torch ``add_image_with_boxes``).

    ``img_tensor``: as :func:`image` (uint8 or float in [0, 1], layout ``dataformats``: CHW, HWC, HW,
    or a batch layout tiled into a grid); a gray image is drawn on as RGB (its gray copied to R, G
    and B, as tensorboardX does), RGBA stays RGBA. ``box_tensor``: ``[N, 4]`` pixel coordinates
    ``(x_min, y_min, x_max, y_max)`` (N may be 0). ``labels``: None, one str per box, or a str when
    N is 1. ``rescale``: the image (boxes drawn) is resized by this factor with Lanczos,
    to ``int(W * rescale) x int(H * rescale)``; height and width in the Summary are the PNG's
    (tensorboardX writes the size before rescaling there).
    Errors: TypeError for a wrong dtype or argument type, ValueError for a bad shape or layout,
    a label count other than N, NaN/Inf, or a rescale that is not positive or leaves no pixels.
    """
    tag = clean_tag(tag)
    pixels = _to_uint8(to_hwc(img_tensor, dataformats))
    if pixels.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    boxes = check_boxes(box_tensor)
    names = _check_labels(labels, boxes.shape[0])
    height, width, channels = pixels.shape
    size = _check_rescale(rescale, height, width)
    from PIL import Image

    drawn = draw_boxes(pixels, boxes, names).resize(size, Image.Resampling.LANCZOS)
    img = summary_pb2.Summary.Image(height=size[1], width=size[0], colorspace=channels,
                                    encoded_image_string=encode_png(np.asarray(drawn)))
    return single_value(tag, image=img)
