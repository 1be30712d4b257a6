"""Frameworks writing through tfevents' SummaryWriter: a real Lightning Trainer with
``tfevents.integrations.lightning.TensorBoardLogger`` against Lightning's own logger, and a real
``transformers.Trainer`` with ``TensorBoardCallback(tb_writer=SummaryWriter(...))`` against torch's writer. Tiny models
on the CPU, built from code (no download); each framework writes the same run twice, and the two runs' events are
compared without their wall times."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter, summary_iterator

torch = pytest.importorskip("torch")


def _events(run_dir: str) -> list:
    """(what, tag, step, payload) of every event of a run's event files (a reopened run has several), in order."""
    out = []
    for path in sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))):
        for event in summary_iterator(path):
            kind = event.WhichOneof("what")
            if kind == "summary":
                for value in event.summary.value:
                    field = value.WhichOneof("value")
                    payload = value.simple_value if field == "simple_value" else value.metadata.plugin_data.content
                    out.append(("summary", value.tag, event.step, payload))
            elif kind == "graph_def":
                from tfevents.proto import graph_pb2
                out.append(("graph", "", event.step, graph_pb2.GraphDef.FromString(event.graph_def)))
            elif kind == "tagged_run_metadata":
                out.append(("run_metadata", event.tagged_run_metadata.tag, event.step, b""))
            elif kind != "file_version":
                out.append((kind, "", event.step, b""))
    return out


# --------------------------------------------------------------------- Lightning

def _lightning_run(save_dir: str, logger_class) -> str:
    lightning = pytest.importorskip("lightning")
    pl = lightning.pytorch

    class TinyRegression(pl.LightningModule):
        def __init__(self, lr: float = 0.1, hidden: int = 3) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))
            self.example_input_array = torch.zeros(2, 4)

        def forward(self, x):
            return self.net(x)

        def _loss(self, batch):
            x, y = batch
            return torch.nn.functional.mse_loss(self(x), y)

        def training_step(self, batch, batch_idx):
            loss = self._loss(batch)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", self._loss(batch))

        def test_step(self, batch, batch_idx):
            self.log("test_loss", self._loss(batch))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    pl.seed_everything(0, verbose=False)
    x = torch.randn(32, 4)
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    logger = logger_class(save_dir, name="run", version=0, log_graph=True)
    trainer = pl.Trainer(max_epochs=2, logger=logger, accelerator="cpu", devices=1, log_every_n_steps=1,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    model = TinyRegression()
    trainer.fit(model, loader, loader)
    trainer.test(model, loader, verbose=False)           # after finalize closed the writer: it reopens
    return logger.log_dir


def test_lightning_logger_writes_what_lightnings_own_writes(tmp_path):
    pytest.importorskip("lightning")
    from lightning.pytorch.loggers import TensorBoardLogger as LightningLogger

    from tfevents.integrations.lightning import TensorBoardLogger

    ours = _lightning_run(str(tmp_path / "tfevents"), TensorBoardLogger)
    theirs = _lightning_run(str(tmp_path / "lightning"), LightningLogger)
    ours_events, their_events = _events(ours), _events(theirs)
    assert ours_events == their_events
    tags = {tag for _, tag, _, _ in ours_events}
    assert {"train_loss_step", "train_loss_epoch", "val_loss", "test_loss", "hp_metric", "epoch",
            "_hparams_/experiment", "_hparams_/session_start_info"} <= tags
    assert "graph" in [kind for kind, *_ in ours_events]          # log_graph=True: at fit's start and test's
    assert len(glob.glob(os.path.join(ours, "events.out.tfevents.*"))) == 2     # fit's file, then test's
    assert os.path.isfile(os.path.join(ours, "hparams.yaml"))


# --------------------------------------------------------------------- Hugging Face transformers

def _transformers_run(output_dir: str, writer) -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.integrations import TensorBoardCallback

    transformers.set_seed(0)
    config = transformers.BertConfig(vocab_size=32, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16, max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    generator = np.random.default_rng(0)
    rows = [{"input_ids": generator.integers(1, 32, 8).tolist(), "labels": int(i % 2)} for i in range(16)]
    args = transformers.TrainingArguments(output_dir=output_dir, per_device_train_batch_size=4, num_train_epochs=2,
                                          logging_steps=1, eval_strategy="no", save_strategy="no", report_to=[],
                                          use_cpu=True, seed=0, disable_tqdm=True, dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=rows,
                                   callbacks=[TensorBoardCallback(tb_writer=writer)])
    trainer.train()


def test_transformers_trainer_logs_through_our_writer_what_it_logs_through_torchs(tmp_path):
    pytest.importorskip("transformers")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    runs = {"ours": str(tmp_path / "ours"), "torch": str(tmp_path / "torch")}
    _transformers_run(str(tmp_path / "out_ours"), SummaryWriter(runs["ours"]))
    _transformers_run(str(tmp_path / "out_torch"), TorchWriter(runs["torch"]))
    ours, theirs = _events(runs["ours"]), _events(runs["torch"])

    def tags_and_steps(events):
        return [(kind, tag, step) for kind, tag, step, _ in events]
    assert tags_and_steps(ours) == tags_and_steps(theirs)
    assert {"train/loss", "train/learning_rate", "train/epoch", "args/text_summary"} <= {t for _, t, _ in
                                                                                         tags_and_steps(ours)}
    for (_, tag, _, a), (_, _, _, b) in zip(ours, theirs):
        if isinstance(a, float) and not tag.endswith("_runtime") and not tag.endswith("per_second"):
            assert a == b, tag                      # the same seed: the same losses and schedule
