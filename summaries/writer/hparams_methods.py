"""``SummaryWriter.add_hparams``: one trial for TensorBoard's HParams dashboard, its experiment, session-start and
session-end summaries and its final metrics as scalars, written into the run or a sub-run of it, with the
tensorboardX and torch argument orders both read (see the method's docstring)."""
from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence

from . import event_bytes as _event_bytes
from ..tags import check_tag as _check_tag
from .call_values import as_scalar_value, as_step


class HParamsMethods:
    """Mixed into ``SummaryWriter`` (which provides ``_max_step``, ``_open_writer`` and ``_sub_writer``)."""

    def add_hparams(self, hparam_dict: Mapping[str, Any], metric_dict: Mapping[str, Any],
                    hparam_domain_discrete: Optional[Mapping[str, Sequence[Any]]] = None,
                    run_name: Optional[str] = None, global_step: Optional[int] = None, *,
                    name: Optional[str] = None) -> None:
        """One trial for the HParams dashboard: its hyperparameters and final metrics.

        Writes the experiment, session-start and session-end summaries and each metric as a
        scalar (tag = metric name) into ``logdir`` itself, or into the sub-run
        ``<logdir>/<run_name>`` when ``run_name`` is given. (torch and tensorboardX write into a new
        sub-run named after the current time; this writer makes no such run.) A metric goes at
        ``global_step``, by default the highest step this writer has logged, so that a metric named like
        a series already logged here (e.g. ``loss``) never makes that series' step go back, which would
        make TensorBoard drop the series' earlier points.

        ``name`` is tensorboardX's ``run_name``; its order, ``add_hparams(hparams, metrics, name,
        global_step)``, is read too: a str third argument is ``name``, and then a number fourth is
        ``global_step``.
        """
        from .. import builders  # lazy: numpy

        if isinstance(hparam_domain_discrete, str):     # tensorboardX's (hparams, metrics, name, global_step)
            name, hparam_domain_discrete = hparam_domain_discrete, None
            if run_name is not None and not isinstance(run_name, str):
                global_step, run_name = run_name, None
        if name is not None:
            if run_name is not None and run_name != name:
                raise ValueError("add_hparams: name=%r and run_name=%r name two runs; pass one" % (name, run_name))
            run_name = name
        experiment, start, end = builders.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        for key in metric_dict:
            _check_tag(key)
        wall = time.time()
        step = self._max_step if global_step is None else as_step(global_step)
        # every metric is checked before anything is queued: a bad one leaves no half-written trial
        metrics = [_event_bytes.scalar_event(wall, step, _event_bytes.scalar_packer(key), as_scalar_value(value, key))
                   for key, value in metric_dict.items()]
        if run_name is None:
            add = self._open_writer().add_serialized_event
        else:
            add = self._sub_writer(_check_tag(run_name)).add_serialized_event
        for summary in (experiment, start, end):
            add(_event_bytes.summary_event(wall, 0, summary.SerializeToString()))
        for payload in metrics:
            add(payload)
