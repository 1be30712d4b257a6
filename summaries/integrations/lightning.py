"""Lightning's ``TensorBoardLogger`` writing with tfevents' ``SummaryWriter``::

    from lightning.pytorch import Trainer
    from tfevents.integrations.lightning import TensorBoardLogger

    trainer = Trainer(logger=TensorBoardLogger("lightning_logs", name="mnist"))

The subclass changes one thing, the writer its ``experiment`` makes: everything else (arguments, ``log_dir``, version
numbers, ``hparams.yaml``, ``log_hyperparams``' HParams summaries through ``experiment._get_file_writer()``, the graph
from ``log_graph=True``) is Lightning's own. ``finalize`` closes the writer after each stage (``fit``, ``test``...); the
next stage's first write reopens it into a new event file of the same run, as Lightning's writer does.

The base class is ``lightning.pytorch``'s when the ``lightning`` package is installed, else ``pytorch_lightning``'s
(the standalone package): pass the logger to the ``Trainer`` of that package.
"""
from __future__ import annotations

try:
    from lightning.fabric.loggers.logger import rank_zero_experiment
    from lightning.pytorch.loggers import TensorBoardLogger as LightningTensorBoardLogger
    from lightning.pytorch.utilities.rank_zero import rank_zero_only
except ImportError:  # the standalone package
    from lightning_fabric.loggers.logger import rank_zero_experiment
    from pytorch_lightning.loggers import TensorBoardLogger as LightningTensorBoardLogger
    from pytorch_lightning.utilities.rank_zero import rank_zero_only

from tfevents.summaries.writer.summary_writer import SummaryWriter

__all__ = ["TensorBoardLogger"]


class TensorBoardLogger(LightningTensorBoardLogger):
    """``lightning.pytorch.loggers.TensorBoardLogger`` whose ``experiment`` is a ``tfevents.summaries.SummaryWriter``
    (made on global rank 0, with the logger's extra keyword arguments, as Lightning makes its writer)."""

    @property
    @rank_zero_experiment
    def experiment(self) -> SummaryWriter:
        if self._experiment is not None:
            return self._experiment
        if rank_zero_only.rank != 0:
            raise RuntimeError("tried to make the TensorBoard writer on global rank %d" % rank_zero_only.rank)
        if self.root_dir:
            self._fs.makedirs(self.root_dir, exist_ok=True)
        # Lightning makes the writer on global rank 0 only: that rank writes, whatever the environment says
        self._experiment = SummaryWriter(log_dir=self.log_dir, **{"rank": 0, **self._kwargs})
        return self._experiment
