"""Plugin summaries: tensor values whose SummaryMetadata names the TensorBoard plugin that reads them
(text, pr_curves, hparams, custom_scalars), laid out as TensorBoard's own ``pb`` builders write them.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from google.protobuf import struct_pb2

from tfevents.proto import plugin_custom_scalars_pb2 as layout_pb2
from tfevents.proto import plugin_hparams_pb2 as hp
from tfevents.proto import plugin_pr_curve_pb2, plugin_text_pb2, summary_pb2

from .common import (as_array, as_numeric_array, check_int, check_tag, clean_tag, float32_tensor, plugin_metadata,
                      require_finite, single_value, string_tensor)

__all__ = ["text", "pr_curve", "pr_curve_raw", "compute_pr_curve", "hparams", "custom_scalars",
           "custom_scalars_multilinechart", "custom_scalars_marginchart", "PR_CURVE_MAX_THRESHOLDS",
           "HPARAMS_EXPERIMENT_TAG", "HPARAMS_SESSION_START_TAG", "HPARAMS_SESSION_END_TAG",
           "CUSTOM_SCALARS_TAG"]

HPARAMS_EXPERIMENT_TAG = "_hparams_/experiment"
HPARAMS_SESSION_START_TAG = "_hparams_/session_start_info"
HPARAMS_SESSION_END_TAG = "_hparams_/session_end_info"
CUSTOM_SCALARS_TAG = "custom_scalars__config__"
_PR_MINIMUM_COUNT = 1e-7  # tensorboard.plugins.pr_curve.summary._MINIMUM_COUNT
# Upper bound of num_thresholds: 6 x 10,000 float32 values (240 kB a step) is already more points than
# TensorBoard's chart can show; a larger value is almost certainly a mistake (say, a sample count).
PR_CURVE_MAX_THRESHOLDS = 10_000


# ---------------------------------------------------------------------------------------------- text

def _utf8(item: Any) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    raise TypeError("text must be a str, bytes or an array of them; found an element of type %s"
                    % type(item).__name__)


def text(tag: str, text: Union[str, bytes, Sequence[str], np.ndarray]) -> summary_pb2.Summary:
    """Summary for the text plugin (Markdown rendered by TensorBoard).

    ``text``: a str (a scalar string tensor) or a list/array of str (a string tensor of that shape;
    TensorBoard draws a 1-D or 2-D one as a table). The value's tag is ``tag + '/text_summary'``,
    as TensorBoard's ``text.summary.pb`` and tensorboardX/torch ``add_text`` write it; the plugin
    content is ``TextPluginData(version=0)``.
    """
    tag = clean_tag(tag)
    if isinstance(text, (str, bytes)):
        values, shape = [_utf8(text)], ()
    else:
        array = np.asarray(text, dtype=object) if not isinstance(text, np.ndarray) else text
        if array.dtype.kind not in "OUS":
            raise TypeError("text must be a str or an array of str, got dtype %s" % array.dtype)
        if array.size == 0:
            raise ValueError("text array is empty (shape %s)" % (array.shape,))
        values, shape = [_utf8(item) for item in array.reshape(-1).tolist()], array.shape
    content = plugin_text_pb2.TextPluginData(version=0).SerializeToString()
    return single_value(tag + "/text_summary", metadata=plugin_metadata("text", content),
                        tensor=string_tensor(values, shape))


# ----------------------------------------------------------------------------------------- pr curves

def _check_num_thresholds(num_thresholds: Any) -> int:
    """``num_thresholds`` as an int in [2, PR_CURVE_MAX_THRESHOLDS], checked before anything is allocated."""
    num_thresholds = check_int(num_thresholds, "num_thresholds", minimum=2)
    if num_thresholds > PR_CURVE_MAX_THRESHOLDS:
        raise ValueError("num_thresholds must be <= %d, got %d (the curve is a [6, num_thresholds] tensor "
                         "written at every step)" % (PR_CURVE_MAX_THRESHOLDS, num_thresholds))
    return num_thresholds


def _pr_metadata(num_thresholds: int) -> summary_pb2.SummaryMetadata:
    content = plugin_pr_curve_pb2.PrCurvePluginData(version=0, num_thresholds=num_thresholds)
    return plugin_metadata("pr_curves", content.SerializeToString())


def compute_pr_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                     weights: Any = 1.0) -> np.ndarray:
    """``[6, num_thresholds]`` rows TP, FP, TN, FN, precision, recall (TensorBoard's ``pr_curve.pb``).

    Threshold j is ``j / (num_thresholds - 1)``. Each prediction p falls in bucket
    ``floor(p * (num_thresholds - 1))``; ``TP[j]`` = weighted count of positives in buckets >= j,
    likewise FP for negatives; ``TN = FP[0] - FP``, ``FN = TP[0] - TP``;
    ``precision = TP / max(1e-7, TP + FP)``, ``recall = TP / max(1e-7, TP + FN)``.
    """
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(float)
    edges_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=edges_range, weights=positive * weights)
    fp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=edges_range, weights=(1.0 - positive) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_PR_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_PR_MINIMUM_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127,
             weights: Any = None) -> summary_pb2.Summary:
    """Summary for the pr_curves plugin: a float32 ``[6, num_thresholds]`` tensor (see
    :func:`compute_pr_curve`), plugin content ``PrCurvePluginData(version=0, num_thresholds)``.

    ``labels``: bool or 0/1 numbers; ``predictions``: floats in [0, 1] of the same shape;
    ``weights``: None, a number or an array broadcastable to ``labels``, finite and >= 0;
    ``num_thresholds`` in [2, 10000] (ValueError outside; not silently capped at 127 as tensorboardX
    does). The tag gets no suffix
    (tensorboardX/torch; TensorBoard's own ``pb`` appends ``/pr_curves``).
    """
    tag = clean_tag(tag)
    num_thresholds = _check_num_thresholds(num_thresholds)
    labels_array = as_numeric_array(labels, "labels")
    preds = as_numeric_array(predictions, "predictions")
    if labels_array.shape != preds.shape:
        raise ValueError("labels and predictions must have the same shape, got %s and %s"
                         % (labels_array.shape, preds.shape))
    if preds.size == 0:
        raise ValueError("labels and predictions are empty")
    if not np.all((labels_array == 0) | (labels_array == 1)):
        raise ValueError("labels must be bool or 0/1")
    if preds.dtype.kind != "f":
        preds = preds.astype(np.float64)
    require_finite(preds, "predictions")
    if preds.min() < 0 or preds.max() > 1:
        raise ValueError("predictions must lie in [0, 1], got range [%r, %r]" % (float(preds.min()), float(preds.max())))
    if weights is None:
        weights = 1.0
    else:
        weights = as_numeric_array(weights, "weights").astype(np.float64)
        require_finite(weights, "weights")
        if np.any(weights < 0):
            raise ValueError("weights must be >= 0")
        try:
            np.broadcast_shapes(weights.shape, labels_array.shape)
        except ValueError:
            raise ValueError("weights of shape %s do not broadcast to labels of shape %s"
                             % (weights.shape, labels_array.shape)) from None
    data = compute_pr_curve(labels_array, preds, num_thresholds, weights)
    return single_value(tag, metadata=_pr_metadata(num_thresholds), tensor=float32_tensor(data))


def pr_curve_raw(tag: str, true_positive_counts: Any, false_positive_counts: Any, true_negative_counts: Any,
                 false_negative_counts: Any, precision: Any, recall: Any,
                 num_thresholds: Optional[int] = None) -> summary_pb2.Summary:
    """Summary for the pr_curves plugin from precomputed rows (TensorBoard's ``raw_data_pb``):
    six 1-D arrays of ``num_thresholds`` (default: their length; 2 to 10000) finite numbers each."""
    tag = clean_tag(tag)
    if num_thresholds is not None:
        num_thresholds = _check_num_thresholds(num_thresholds)
    rows = []
    for name, row in (("true_positive_counts", true_positive_counts), ("false_positive_counts", false_positive_counts),
                      ("true_negative_counts", true_negative_counts), ("false_negative_counts", false_negative_counts),
                      ("precision", precision), ("recall", recall)):
        array = as_numeric_array(row, name)
        if array.ndim != 1:
            raise ValueError("%s must be 1-D, got shape %s" % (name, array.shape))
        require_finite(array, name)
        rows.append(array)
    length = rows[0].size
    if num_thresholds is None:
        num_thresholds = _check_num_thresholds(length)
    for name, array in zip(("true_positive_counts", "false_positive_counts", "true_negative_counts",
                            "false_negative_counts", "precision", "recall"), rows):
        if array.size != num_thresholds:
            raise ValueError("%s has %d entries, expected num_thresholds=%d" % (name, array.size, num_thresholds))
    return single_value(tag, metadata=_pr_metadata(num_thresholds), tensor=float32_tensor(np.stack(rows)))


# ------------------------------------------------------------------------------------------ hparams

def _hparam_kind(key: str, value: Any) -> Tuple[int, Any]:
    """(DataType, python value) of one hyperparameter: bool, str, number or callable (its name)."""
    if isinstance(value, (bool, np.bool_)):
        return hp.DATA_TYPE_BOOL, bool(value)
    if isinstance(value, str):
        return hp.DATA_TYPE_STRING, value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return hp.DATA_TYPE_FLOAT64, float(value)
    if hasattr(value, "__array__") or type(value).__module__.startswith("torch"):
        array = as_array(value, "hparam_dict[%r]" % key)
        if array.size == 1 and array.dtype.kind in "biuf":
            if array.dtype.kind == "b":
                return hp.DATA_TYPE_BOOL, bool(array.reshape(()))
            return hp.DATA_TYPE_FLOAT64, float(array.reshape(()))
    elif callable(value):
        return hp.DATA_TYPE_STRING, getattr(value, "__name__", str(value))
    raise TypeError("hparam_dict[%r] must be a bool, str, number or a one-element tensor, got %s "
                    "(log str(value) for other types)" % (key, type(value).__name__))


def _struct_value(kind: int, value: Any) -> struct_pb2.Value:
    if kind == hp.DATA_TYPE_BOOL:
        return struct_pb2.Value(bool_value=value)
    if kind == hp.DATA_TYPE_STRING:
        return struct_pb2.Value(string_value=value)
    return struct_pb2.Value(number_value=value)


def _hparams_summary(tag: str, **data: Any) -> summary_pb2.Summary:
    content = hp.HParamsPluginData(version=0, **data).SerializeToString()
    return single_value(tag, metadata=plugin_metadata("hparams", content))


def hparams(hparam_dict: Mapping[str, Any], metric_dict: Mapping[str, Any],
            hparam_domain_discrete: Optional[Mapping[str, Sequence[Any]]] = None
            ) -> Tuple[summary_pb2.Summary, summary_pb2.Summary, summary_pb2.Summary]:
    """The three hparams-plugin Summaries ``(experiment, session_start, session_end)`` of one trial,
    as tensorboardX/torch ``add_hparams`` builds them (tags ``_hparams_/experiment``,
    ``_hparams_/session_start_info``, ``_hparams_/session_end_info``; HParamsPluginData version 0).

    ``hparam_dict``: name -> bool, str, number (int/float/numpy/one-element tensor, stored as
    FLOAT64) or callable (stored as its ``__name__``); None values are skipped. ``metric_dict``:
    its keys become the experiment's metric tags (the writer logs the values as scalars).
    ``hparam_domain_discrete``: name -> list of the values that hparam can take, of its type.
    The session ends with STATUS_SUCCESS. Bools are stored as bools (torch stores them as numbers).
    """
    if not isinstance(hparam_dict, Mapping):
        raise TypeError("hparam_dict must be a dict, got %s" % type(hparam_dict).__name__)
    if not isinstance(metric_dict, Mapping):
        raise TypeError("metric_dict must be a dict, got %s" % type(metric_dict).__name__)
    domains = {} if hparam_domain_discrete is None else hparam_domain_discrete
    if not isinstance(domains, Mapping):
        raise TypeError("hparam_domain_discrete must be a dict, got %s" % type(domains).__name__)
    for key in list(hparam_dict) + list(metric_dict):
        check_tag(key, "hparam_dict/metric_dict key %r" % (key,))
    unknown = [k for k in domains if k not in hparam_dict or hparam_dict[k] is None]
    if unknown:
        raise ValueError("hparam_domain_discrete names hparams that are not in hparam_dict: %s" % unknown)

    start = hp.SessionStartInfo()
    infos = []
    for key, value in hparam_dict.items():
        if value is None:
            continue
        kind, value = _hparam_kind(key, value)
        start.hparams[key].CopyFrom(_struct_value(kind, value))
        info = hp.HParamInfo(name=key, type=kind)
        if key in domains:
            options = domains[key]
            if not isinstance(options, (list, tuple)) or not options:
                raise TypeError("hparam_domain_discrete[%r] must be a non-empty list" % key)
            for option in options:
                option_kind, option_value = _hparam_kind(key, option)
                if option_kind != kind:
                    raise TypeError("hparam_domain_discrete[%r] holds %r, not of the type of hparam_dict[%r]"
                                    % (key, option, key))
                info.domain_discrete.values.append(_struct_value(kind, option_value))
        infos.append(info)
    metrics = [hp.MetricInfo(name=hp.MetricName(tag=key)) for key in metric_dict]
    experiment = hp.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = hp.SessionEndInfo(status=hp.STATUS_SUCCESS)
    return (_hparams_summary(HPARAMS_EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(HPARAMS_SESSION_START_TAG, session_start_info=start),
            _hparams_summary(HPARAMS_SESSION_END_TAG, session_end_info=end))


# ----------------------------------------------------------------------------------- custom scalars

def _chart(category: str, title: Any, spec: Any) -> layout_pb2.Chart:
    where = "layout[%r][%r]" % (category, title)
    check_tag(title, "chart title in layout[%r]" % category)
    if not isinstance(spec, (list, tuple)) or len(spec) != 2 or spec[0] not in ("Multiline", "Margin"):
        raise ValueError("%s must be ['Multiline', [tags]] or ['Margin', [value, lower, upper]], got %r"
                         % (where, spec))
    kind, tags = spec
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise TypeError("%s: the tags must be a list of str, got %r" % (where, tags))
    if kind == "Margin":
        if len(tags) != 3:
            raise ValueError("%s: a Margin chart takes 3 tags [value, lower, upper], got %d" % (where, len(tags)))
        series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
        return layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series]))
    return layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=list(tags)))


def custom_scalars(layout: Any) -> summary_pb2.Summary:
    """Summary holding the custom_scalars dashboard layout (tag ``custom_scalars__config__``, a
    scalar DT_STRING tensor with the serialized Layout, as TensorBoard's ``custom_scalar.summary.pb``).

    ``layout``: tensorboardX's dict ``{category: {chart title: ['Multiline', [tag regexes]] or
    ['Margin', [value, lower, upper]]}}``, or a Layout message (ours or TensorBoard's
    ``layout_pb2.Layout``).
    """
    if hasattr(layout, "SerializeToString") and hasattr(layout, "DESCRIPTOR"):
        if layout.DESCRIPTOR.name != "Layout":
            raise TypeError("layout message must be a Layout, got %s" % layout.DESCRIPTOR.full_name)
        serialized = layout.SerializeToString()
    elif isinstance(layout, Mapping):
        categories = []
        for title, charts in layout.items():
            check_tag(title, "layout category title")
            if not isinstance(charts, Mapping):
                raise TypeError("layout[%r] must be a dict of chart title -> spec, got %s"
                                % (title, type(charts).__name__))
            categories.append(layout_pb2.Category(
                title=title, chart=[_chart(title, name, spec) for name, spec in charts.items()]))
        serialized = layout_pb2.Layout(category=categories).SerializeToString()
    else:
        raise TypeError("layout must be a dict or a Layout message, got %s" % type(layout).__name__)
    return single_value(CUSTOM_SCALARS_TAG, metadata=plugin_metadata("custom_scalars"),
                        tensor=string_tensor([serialized], ()))


def _shorthand_layout(kind: str, tags: Any, category: Any, title: Any) -> summary_pb2.Summary:
    check_tag(category, "category")
    check_tag(title, "title")
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise TypeError("tags must be a list of str, got %r" % (tags,))
    if not tags:
        raise ValueError("tags must name at least one scalar tag (or regex)")
    if kind == "Margin" and len(tags) != 3:
        raise ValueError("a margin chart takes exactly 3 tags [value, lower, upper], got %d: %r" % (len(tags), tags))
    return custom_scalars({category: {title: [kind, list(tags)]}})


def custom_scalars_multilinechart(tags: Sequence[str], category: str = "default",
                                  title: str = "untitled") -> summary_pb2.Summary:
    """The custom_scalars layout of one multiline chart: ``tags`` (scalar tags or regexes) drawn
    together in chart ``title`` of category ``category`` (tensorboardX/torch
    ``add_custom_scalars_multilinechart``: ``custom_scalars({category: {title: ['Multiline', tags]}})``).
    Each call writes a whole layout of its own and TensorBoard reads one layout per run, so call it
    (or :func:`custom_scalars`) once per run, as tensorboardX advises for ``add_custom_scalars``."""
    return _shorthand_layout("Multiline", tags, category, title)


def custom_scalars_marginchart(tags: Sequence[str], category: str = "default",
                               title: str = "untitled") -> summary_pb2.Summary:
    """The custom_scalars layout of one margin chart: ``tags`` is exactly ``[value, lower, upper]``
    (tensorboardX/torch ``add_custom_scalars_marginchart``; a band between lower and upper around value)."""
    return _shorthand_layout("Margin", tags, category, title)
