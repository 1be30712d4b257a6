"""The ``add_*`` methods of ``SummaryWriter`` for every kind a builder makes (all but scalars, graphs and hparams):
histograms, images and image grids, figures, text, audio, PR curves, video, boxes, meshes, embeddings, custom
scalars and their charts, tensors, scalar JSON export, torch and ONNX graphs. Each method checks nothing itself: it
calls a pure builder (``builders``, ``_video``, ``_boxes``, ``_mesh``, ``_plugins``, ``_tensors``, ``_torch_graph``)
or the projector file writer (``_projector``) and queues the result; histograms, images, audio, PR curves, video,
boxes and meshes through ``_add_encoded``, on the writer's thread (see ``summary_writer``'s docstring); an
embedding's files are written in the call, as the peers write them. The builders are imported on first use."""
from __future__ import annotations

import sys
import time
from typing import Any, Optional, Sequence, Union

from ..tags import tags_as_given


def is_torch_module(obj: Any) -> bool:
    """Whether ``obj`` is a ``torch.nn.Module`` (without importing torch when nobody has)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


class MediaMethods:
    """Mixed into ``SummaryWriter`` (which provides ``_add_summary_proto``, ``_add_encoded``, ``_add_deferred``,
    ``_encode_in_background``, ``_step_of``, ``_logdir``, ``_file_writer`` and ``_scalar_records``)."""

    def add_video(self, tag: str, vid_tensor: Any, global_step: Optional[int] = None, fps: float = 4,
                  walltime: Optional[float] = None, dataformats: str = "NTCHW") -> None:
        """Videos ``vid_tensor`` (N, T, C, H, W; uint8, or float in [0, 1]) tiled into one animated GIF."""
        from ..builders import arguments  # lazy: numpy
        from ..builders.videos import video  # lazy: numpy, Pillow

        self._add_encoded("add_video", video, tag, (vid_tensor,), dict(fps=fps, dataformats=dataformats),
                          global_step, walltime, check=arguments.video)

    def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any, global_step: Optional[int] = None,
                             walltime: Optional[float] = None, rescale: float = 1, dataformats: str = "CHW",
                             labels: Any = None) -> None:
        """An image with boxes [N, 4] (x_min, y_min, x_max, y_max) and their labels drawn on it (torch's argument
        order; tensorboardX's, ``(..., walltime, dataformats, labels)`` without ``rescale``, is read too: a str in
        ``rescale``'s place is ``dataformats``). Labels whose count is not the boxes' are dropped with a warning, as
        tensorboardX and torch do."""
        from ..builders import arguments  # lazy: numpy
        from ..builders.boxes import image_with_boxes  # lazy: numpy, Pillow

        if isinstance(rescale, str):                  # tensorboardX's positional (dataformats, labels)
            if labels is None and not isinstance(dataformats, str):
                labels = dataformats
            rescale, dataformats = 1, rescale
        if isinstance(labels, str):
            labels = [labels]
        if labels is not None and len(labels) != len(box_tensor):
            import warnings
            warnings.warn("add_image_with_boxes(%r): %d labels for %d boxes; labels dropped"
                          % (tag, len(labels), len(box_tensor)), stacklevel=2)
            labels = None
        self._add_encoded("add_image_with_boxes", image_with_boxes, tag, (img_tensor, box_tensor),
                          dict(labels=labels, dataformats=dataformats, rescale=rescale), global_step, walltime,
                          check=arguments.image_with_boxes)

    def add_embedding(self, mat: Any, metadata: Any = None, label_img: Any = None, global_step: Optional[int] = None,
                      tag: str = "default", metadata_header: Any = None) -> str:
        """An embedding for the Projector: ``mat`` [N, D], ``metadata`` N labels (or rows of columns named by
        ``metadata_header``), ``label_img`` N sprite images; files under ``<logdir>/<step>/<tag>/`` and an entry in
        ``<logdir>/projector_config.pbtxt``. Returns the embedding's directory.

        The files are written in the call, as tensorboardX and torch write them (they are not events: code reads
        them, or removes the run, right after the call). Every argument is checked before anything is written; a
        non-square ``label_img`` raises ``ShapeError``, an AssertionError too, as the peers raise."""
        from ..builders.projector import write_embedding  # lazy: numpy, Pillow

        fs, root = self._file_writer.storage or (None, self._logdir)
        return write_embedding(root, mat, metadata=metadata, label_img=label_img, global_step=self._step_of(global_step),
                               tag=tag, metadata_header=metadata_header, fs=fs)

    def add_onnx_graph(self, onnx_model_file: Any) -> None:
        """The graph of an ONNX model (a path or an ``onnx.ModelProto``; needs the ``onnx`` package)."""
        from ..builders.torch_graph import onnx_graph  # lazy: numpy, Pillow

        self.add_graph(graph_def=onnx_graph(onnx_model_file))

    def add_openvino_graph(self, xmlname: Any) -> None:
        """The graph of an OpenVINO IR model (the path of its ``.xml``), read as tensorboardX reads it."""
        from ..builders.torch_graph import openvino_graph  # lazy: numpy, Pillow

        self.add_graph(graph_def=openvino_graph(xmlname))

    def _add_torch_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                         use_strict_trace: bool = True) -> None:
        """``add_graph`` of a ``torch.nn.Module``: traced with ``torch.jit.trace`` into a GraphDef and a
        RunMetadata tagged ``step1``, the two events ``torch.utils.tensorboard`` writes."""
        from tfevents.proto import event_pb2  # lazy: protobuf loads on the first torch graph

        from ..builders.torch_graph import TORCH_RUN_METADATA_TAG, torch_graph  # lazy: numpy, Pillow

        graph_def, run_metadata = torch_graph(model, input_to_model, verbose=verbose,
                                              use_strict_trace=use_strict_trace)
        wall = time.time()
        self.add_event(event_pb2.Event(wall_time=wall, graph_def=graph_def.SerializeToString()))
        tagged = event_pb2.TaggedRunMetadata(tag=TORCH_RUN_METADATA_TAG,
                                             run_metadata=run_metadata.SerializeToString())
        self.add_event(event_pb2.Event(wall_time=wall, tagged_run_metadata=tagged))

    def add_mesh(self, tag: str, vertices: Any, colors: Any = None, faces: Any = None, config_dict: Any = None,
                 global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """A 3-D point cloud or mesh for the Mesh dashboard: ``vertices`` [B, N, 3], ``colors`` [B, N, 3] in
        [0, 255], ``faces`` [B, F, 3] vertex indices, ``config_dict`` the three.js scene options."""
        from ..builders import arguments  # lazy: numpy
        from ..builders.meshes import mesh  # lazy: numpy, Pillow

        self._add_encoded("add_mesh", mesh, tag, (vertices,), dict(colors=colors, faces=faces, config_dict=config_dict),
                          global_step, walltime, check=arguments.mesh)

    def add_custom_scalars_multilinechart(self, tags: Sequence[str], category: str = "default",
                                          title: str = "untitled") -> None:
        """A Custom Scalars chart drawing ``tags`` (tags or regexes) together."""
        from ..builders.plugins import custom_scalars_multilinechart  # lazy: numpy, Pillow

        self._add_summary_proto(custom_scalars_multilinechart(tags, category, title), None, None)

    def add_custom_scalars_marginchart(self, tags: Sequence[str], category: str = "default",
                                       title: str = "untitled") -> None:
        """A Custom Scalars margin chart: ``tags`` is ``[value, lower, upper]``."""
        from ..builders.plugins import custom_scalars_marginchart  # lazy: numpy, Pillow

        self._add_summary_proto(custom_scalars_marginchart(tags, category, title), None, None)

    def add_tensor(self, tag: str, tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None) -> None:
        """Any numeric, bool or string array as a TF2-style tensor summary (``tf.make_ndarray`` reads it)."""
        from ..builders.tensors import tensor as tensor_summary  # lazy: numpy, Pillow

        with tags_as_given():
            summary = tensor_summary(tag, tensor)
        self._add_summary_proto(summary, global_step, walltime)

    def export_scalars_to_json(self, path: str) -> None:
        """Write the scalars logged with ``add_scalars`` so far as tensorboardX does, ``{run: [[wall_time, step,
        value], ...]}`` (keyed by the sub-run directory the values went to), then forget them."""
        from ..builders.tensors import scalars_to_json  # lazy: numpy, Pillow

        text = scalars_to_json(self._scalar_records)
        with open(path, "w") as f:
            f.write(text)
        self._scalar_records = {}

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None,
                      bins: Union[str, int, Sequence[float]] = "tensorflow", walltime: Optional[float] = None,
                      max_bins: Optional[int] = None) -> None:
        """Histogram of ``values`` (see ``builders.histogram`` for ``bins``)."""
        from .. import builders  # lazy: numpy

        self._add_encoded("add_histogram", builders.histogram, tag, (values,), dict(bins=bins, max_bins=max_bins),
                          global_step, walltime, check=builders.arguments.histogram)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: float, sum: float, sum_squares: float,
                          bucket_limits: Sequence[float], bucket_counts: Sequence[float],
                          global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """Histogram from precomputed statistics and buckets."""
        from .. import builders  # lazy: numpy

        with tags_as_given():
            summary = builders.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._add_summary_proto(summary, global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                  walltime: Optional[float] = None, dataformats: str = "CHW") -> None:
        """One image (PNG); ``dataformats`` CHW, HWC, HW (float in [0, 1] or uint8)."""
        from .. import builders  # lazy: numpy

        self._add_encoded("add_image", builders.image, tag, (img_tensor,), dict(dataformats=dataformats),
                          global_step, walltime, check=builders.arguments.image)

    def add_images(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, dataformats: str = "NCHW") -> None:
        """A batch of images tiled into one grid image. ``img_tensor`` may be a list of same-shaped images (CHW,
        HWC or HW, or with the default ``NCHW`` each CHW), stacked into the batch, as tensorboardX and torch take it."""
        from .. import builders  # lazy: numpy
        from ..builders import common  # lazy: numpy

        if isinstance(img_tensor, (list, tuple)):
            img_tensor = common.stack_arrays(img_tensor, "img_tensor")
            if isinstance(dataformats, str) and "N" not in dataformats.upper():
                dataformats = "N" + dataformats
        self._add_encoded("add_images", builders.images, tag, (img_tensor,), dict(dataformats=dataformats),
                          global_step, walltime, check=builders.arguments.images)

    def add_figure(self, tag: str, figure: Any, global_step: Optional[int] = None, close: bool = True,
                   walltime: Optional[float] = None) -> None:
        """A matplotlib Figure (or a list of them, tiled) rendered to an image."""
        from .. import builders  # lazy: numpy

        with tags_as_given():
            summary = builders.figure(tag, figure, close=close)
        self._add_summary_proto(summary, global_step, walltime)

    def add_text(self, tag: str, text_string: Any, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """Text (markdown) for the Text dashboard."""
        from .. import builders  # lazy: numpy

        with tags_as_given():
            summary = builders.text(tag, text_string)
        self._add_summary_proto(summary, global_step, walltime)

    def add_audio(self, tag: str, snd_tensor: Any, global_step: Optional[int] = None, sample_rate: float = 44100,
                  walltime: Optional[float] = None) -> None:
        """Audio samples in [-1, 1] (16-bit WAV)."""
        from .. import builders  # lazy: numpy

        self._add_encoded("add_audio", builders.audio, tag, (snd_tensor,), dict(sample_rate=sample_rate),
                          global_step, walltime, check=builders.arguments.audio)

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any, global_step: Optional[int] = None,
                     num_thresholds: int = 127, weights: Any = None, walltime: Optional[float] = None) -> None:
        """Precision-recall curve of ``predictions`` in [0, 1] against boolean ``labels``."""
        from .. import builders  # lazy: numpy

        self._add_encoded("add_pr_curve", builders.pr_curve, tag, (labels, predictions),
                          dict(num_thresholds=num_thresholds, weights=weights), global_step, walltime,
                          check=builders.arguments.pr_curve)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any, recall: Any,
                         global_step: Optional[int] = None, num_thresholds: int = 127, weights: Any = None,
                         walltime: Optional[float] = None) -> None:
        """Precision-recall curve from precomputed counts, six rows of one length. ``num_thresholds`` and ``weights``
        are not used (as in torch and tensorboardX, which take rows of any length): TensorBoard reads the curve's
        thresholds from the rows' length, which the plugin metadata records here."""
        from .. import builders  # lazy: numpy

        with tags_as_given():
            summary = builders.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                            false_negative_counts, precision, recall)
        self._add_summary_proto(summary, global_step, walltime)

    def add_custom_scalars(self, layout: Any) -> None:
        """Layout of the Custom Scalars dashboard (see ``builders.custom_scalars``)."""
        from .. import builders  # lazy: numpy

        self._add_summary_proto(builders.custom_scalars(layout), None, None)
