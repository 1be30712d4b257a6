"""pytest plugin: the peers' own test suites run against tfevents' ``SummaryWriter``.

Loaded with ``-p swap_writer`` (this folder on ``sys.path``) by ``tests/summaries/test_peer_suites.py``, which runs
each vendored suite in a subprocess. Before the test modules are imported it puts ``tfevents.summaries.SummaryWriter``
where ``from tensorboardX import SummaryWriter`` and ``from torch.utils.tensorboard import SummaryWriter`` find it
(the packages and their ``writer`` modules). ``TFEVENTS_PEER_SUITE_WRITER=peer`` leaves the peers' writers in place:
the same run with the peer's own writer, to see which tests pass there.

Also, for the vendored files as they are: moto 5 renamed ``mock_s3`` to ``mock_aws`` (tensorboardX 2.6.5's tests
import the old name).
"""
from __future__ import annotations

import os

import moto


def pytest_configure(config) -> None:
    if not hasattr(moto, "mock_s3"):
        moto.mock_s3 = moto.mock_aws
    if os.environ.get("TFEVENTS_PEER_SUITE_WRITER", "tfevents") == "peer":
        return
    import tensorboardX
    import tensorboardX.writer
    import torch.utils.tensorboard
    import torch.utils.tensorboard.writer

    from tfevents.summaries import SummaryWriter

    for module in (tensorboardX, tensorboardX.writer, torch.utils.tensorboard, torch.utils.tensorboard.writer):
        module.SummaryWriter = SummaryWriter
