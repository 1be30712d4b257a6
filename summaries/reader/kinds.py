"""The table of summary kinds: one row per kind of record the readers return, and every fact about it.

A kind is what TensorBoard calls a plugin plus a data class (its ``data_compat``: every old-style value is
migrated once to a tensor with plugin metadata; the Rust data server then serves three data classes: scalars,
tensors, blob sequences). Every reader and view loops over this table instead of naming kinds:

==========  ===============================================================================================
field       meaning
==========  ===============================================================================================
name        the kind: a ``Logdir`` attribute, a ``kinds=`` value, a ``to_pandas(kind)`` argument
plugin      the TensorBoard plugin that shows it, as the live loader names it ('' for none)
tensor      whether tensor values whose metadata names ``plugin`` are this kind (``tensors`` takes any other)
old_style   what a value of it is when it is no tensor: a ``Summary.Value`` field (``simple_value``, ``histo``,
            ``image``, ``audio``), or the Event's ``graph`` / ``run_metadata`` ('' for none)
data_class  how the live loader serves it: ``SCALAR``, ``TENSOR``, ``BLOB_SEQUENCE`` (0: not served)
record      the reader's record type (a series holds one, or a list of them)
key         ``"series"``: a tag's values over steps, keyed by ``(run, tag)``; ``"run_tag"``: one value keyed by
            ``(run, tag)``; ``"run"``: one per run
columns     its table's columns after ``run`` and ``tag`` (:class:`Column`: name and pandas dtype); ``None``: no
            table (``hparams`` has a table of its own shape, one row per run: ``reader/tables.py``)
reservoir   the points a live series keeps by default (TensorBoard's ``--samples_per_plugin``; 0: none)
==========  ===============================================================================================

Adding a kind (ARCHITECTURE.md has the whole checklist): a builder (``builders/``), a row here, a record type
(``types.py``) with its merge step (``merge.py``'s ``@builds``), and a view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

from tfevents.proto import summary_pb2

from .types import (AudioRecord, EmbeddingRecord, HistogramSeries, HParamsRecord, ImageRecord, MeshRecord,
                    PrCurveRecord, ScalarSeries, TensorRecord, TextRecord, VideoRecord)

__all__ = ["Kind", "Column", "KINDS", "KIND_NAMES", "SERIES_KINDS", "TABLE_KINDS", "SCALAR", "TENSOR",
           "BLOB_SEQUENCE", "UNKNOWN", "plugin_data_class", "kind_of_plugin", "kind_of_old_style",
           "default_reservoir", "check_kinds", "add_kind_properties", "plugin_names", "SCALAR_VALUE"]

UNKNOWN = summary_pb2.DATA_CLASS_UNKNOWN
SCALAR = summary_pb2.DATA_CLASS_SCALAR
TENSOR = summary_pb2.DATA_CLASS_TENSOR
BLOB_SEQUENCE = summary_pb2.DATA_CLASS_BLOB_SEQUENCE


@dataclass(frozen=True)
class Column:
    """One column of a kind's table: its name and pandas dtype (``int64``, ``float64``, ``str``, ``object`` for a
    value per row that is an array, tuple or text; ``value`` of scalars is ``float32`` where exact, see
    :data:`SCALAR_VALUE`). ``media``: present only when the encoded bytes are asked for (``media=True``)."""

    name: str
    dtype: str
    media: bool = False


@dataclass(frozen=True)
class Kind:
    """One row of the table (the module docstring says what each field means)."""

    name: str
    plugin: str
    tensor: bool
    old_style: str
    data_class: int
    record: type
    key: str
    columns: Optional[Tuple[Column, ...]]
    reservoir: int

    @property
    def is_series(self) -> bool:
        """Keyed by ``(run, tag)``: the kinds a run holds per tag."""
        return self.key == "series"

    def column_names(self, media: bool = False) -> Tuple[str, ...]:
        """``run``, ``tag`` and this kind's columns (the encoded bytes only with ``media``)."""
        return ("run", "tag") + tuple(c.name for c in self.columns or () if media or not c.media)


def _columns(spec: str) -> Tuple[Column, ...]:
    """``"step:int64 wall_time:float64 data:object:media"`` -> Columns."""
    out = []
    for item in spec.split():
        name, dtype, *media = item.split(":")
        out.append(Column(name, dtype, media == ["media"]))
    return tuple(out)


_POINT = "step:int64 wall_time:float64 "
_MEDIA = " size:int64 data:object:media"
SCALAR_VALUE = "value"
"""The one column whose dtype follows the data: scalars' ``value`` is float32 when every series' values are float32
(``simple_value`` always is), else float64."""

_TABLE = (
    Kind("scalars", "scalars", True, "simple_value", SCALAR, ScalarSeries, "series",
         _columns(_POINT + "value:float32"), 1000),
    Kind("histograms", "histograms", True, "histo", TENSOR, HistogramSeries, "series",
         _columns(_POINT + "min:float64 max:float64 num:float64 sum:float64 sum_squares:float64 "
                  "bucket_limits:object bucket_counts:object"), 100),
    Kind("images", "images", True, "image", BLOB_SEQUENCE, ImageRecord, "series",
         _columns(_POINT + "sample:int64 width:int64 height:int64 colorspace:int64" + _MEDIA), 10),
    Kind("audio", "audio", True, "audio", BLOB_SEQUENCE, AudioRecord, "series",
         _columns(_POINT + "sample:int64 sample_rate:float64 num_channels:int64 content_type:str "
                  "length_frames:int64 label:str" + _MEDIA), 10),
    Kind("text", "text", True, "", TENSOR, TextRecord, "series", _columns(_POINT + "text:object"), 100),
    Kind("pr_curves", "pr_curves", True, "", TENSOR, PrCurveRecord, "series",
         _columns(_POINT + "true_positives:object false_positives:object true_negatives:object "
                  "false_negatives:object precision:object recall:object"), 100),
    # tensors of any other plugin (and of none); the plugin column is empty: kind_of_plugin's default
    Kind("tensors", "", False, "", TENSOR, TensorRecord, "series",
         _columns(_POINT + "dtype:str shape:object value:object"), 100),
    # images whose encoded data is a GIF (tensorboardX's and torch's add_video): the images plugin's values
    Kind("videos", "", False, "", BLOB_SEQUENCE, VideoRecord, "series",
         _columns(_POINT + "sample:int64 width:int64 height:int64" + _MEDIA), 10),
    # keyed by (run, mesh name): the mesh's VERTEX/FACE/COLOR tags regrouped
    Kind("meshes", "mesh", True, "", TENSOR, MeshRecord, "series", None, 100),
    # keyed by (run, tensor name), from each run directory's projector_config.pbtxt (not from events)
    Kind("embeddings", "projector", False, "", UNKNOWN, EmbeddingRecord, "run_tag", None, 0),
    Kind("hparams", "hparams", True, "", TENSOR, HParamsRecord, "run", None, 100),
    Kind("graphs", "graphs", False, "graph", BLOB_SEQUENCE, bytes, "run", None, 10),
    Kind("run_metadata", "graph_tagged_run_metadata", False, "run_metadata", BLOB_SEQUENCE, bytes,
         "run_tag", None, 10),
    Kind("session_logs", "", False, "", UNKNOWN, list, "run", None, 0),
)

KINDS: Mapping[str, Kind] = {k.name: k for k in _TABLE}
KIND_NAMES = frozenset(KINDS)
SERIES_KINDS: Tuple[str, ...] = tuple(k.name for k in _TABLE if k.is_series)
"""The kinds a run's events hold as series of a tag."""
TABLE_KINDS: Tuple[str, ...] = tuple(k.name for k in _TABLE if k.columns is not None) + ("hparams",)
"""The kinds ``to_pandas``/``to_arrow``/``to_polars`` and the Dask reader give tables of."""

# Plugins TensorBoard serves that no reader kind stands for, with their data class (the Rust data server's
# ``data_compat.rs``): a run's custom-scalar layout, and the graph plugin's run metadata and Keras models.
_OTHER_PLUGINS: Mapping[str, int] = {"custom_scalars": TENSOR, "graph_run_metadata": BLOB_SEQUENCE,
                                     "graph_run_metadata_graph": BLOB_SEQUENCE, "graph_keras_model": BLOB_SEQUENCE}
_PLUGIN_DATA_CLASS: Dict[str, int] = dict(_OTHER_PLUGINS)
_PLUGIN_DATA_CLASS.update({k.plugin: k.data_class for k in _TABLE if k.tensor})
_PLUGIN_KIND: Dict[str, str] = {k.plugin: k.name for k in _TABLE if k.tensor}
_OLD_STYLE_KIND: Dict[str, str] = {k.old_style: k.name for k in _TABLE if k.old_style}


def plugin_data_class(plugin: str) -> int:
    """The data class TensorBoard serves a summary value of ``plugin`` as when its metadata names none
    (``UNKNOWN`` for a plugin it does not know)."""
    return _PLUGIN_DATA_CLASS.get(plugin, UNKNOWN)


def plugin_names() -> Tuple[str, ...]:
    """The plugins whose summary values have a data class (:func:`plugin_data_class`), sorted."""
    return tuple(sorted(_PLUGIN_DATA_CLASS))


def kind_of_plugin(plugin: str) -> str:
    """The reader's kind of a tensor value whose tag's metadata names ``plugin`` (``tensors`` for any other)."""
    return _PLUGIN_KIND.get(plugin, "tensors")


def kind_of_old_style(field: str) -> Optional[str]:
    """The reader's kind of an old-style ``Summary.Value`` field (``histo``, ``image``, ...), or None."""
    return _OLD_STYLE_KIND.get(field)


_DEFAULT_RESERVOIR: Dict[int, int] = {SCALAR: KINDS["scalars"].reservoir, TENSOR: KINDS["tensors"].reservoir,
                                      BLOB_SEQUENCE: KINDS["images"].reservoir}


def default_reservoir(data_class: int) -> int:
    """The points a live series of ``data_class`` keeps by default: TensorBoard's (scalars 1000, tensors 100,
    blob sequences 10)."""
    return _DEFAULT_RESERVOIR.get(data_class, 0)


def check_kinds(kinds) -> Optional[frozenset]:
    """``kinds`` (a name, an iterable of names, or None for all) as a frozenset; ValueError naming unknown ones."""
    if kinds is None:
        return None
    kinds = frozenset([kinds] if isinstance(kinds, str) else kinds)
    unknown = kinds - KIND_NAMES
    if unknown:
        raise ValueError("unknown kind(s) %s; kinds are %s" % (sorted(unknown), ", ".join(sorted(KIND_NAMES))))
    return kinds


def add_kind_properties(cls: type, names=None) -> type:
    """Give ``cls`` (whose instances keep ``self.data: {kind: value}``) an attribute per kind of the table, or of
    ``names``: ``obj.histograms`` is ``obj.data["histograms"]`` (read and assigned)."""
    def accessor(name: str) -> property:
        def get(self):
            return self.data[name]

        def set_(self, value) -> None:
            self.data[name] = value
        return property(get, set_, doc="``data[%r]``: the %s records (``reader/kinds.py``)" % (name, name))
    for name in (KIND_NAMES if names is None else names):
        setattr(cls, name, accessor(name))
    return cls
