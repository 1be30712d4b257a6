"""``tfevents.integrations``: tfevents' writer where a framework makes its own ``SummaryWriter`` and a user cannot
hand it another one.

* ``tfevents.integrations.lightning.TensorBoardLogger``: Lightning's ``TensorBoardLogger`` (same arguments, same
  folders and version numbers) writing with ``tfevents.summaries.SummaryWriter``.

Frameworks that take a writer (Hugging Face's ``TensorBoardCallback(tb_writer=...)``) or build one from a class
that can be swapped (Ray Tune, detectron2, fairseq) need nothing here: README, "In frameworks". This package lives
in ``summaries/integrations/`` and is mapped to ``tfevents.integrations`` (pyproject.toml's ``package-dir``); each
module imports its framework, so nothing is imported until one is used.
"""
