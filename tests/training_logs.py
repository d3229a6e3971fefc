"""Training logs as the real libraries print them: tqdm, Hugging Face transformers' Trainer, PyTorch
Lightning, Keras (JAX backend) and a torchtune recipe's bar, each run in a subprocess, its stdout and
stderr captured as a pod's log would be.

`python tests/training_logs.py` (with the libraries installed) rewrites the fixtures in
tests/fixtures/training-logs/ and their VERSIONS.txt; the tests parse both the fixtures (always) and
a live run (where the library is installed), so a library that changes what it prints shows up.
torchtune's recipes need a model download, so its line is its recipes' own description format
(`f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}"`, recipes/full_finetune_*.py) on a
real tqdm bar.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "training-logs"
# Kept to a log's tail: what `job logs --tail` and the local runner would give the parser.
KEEP_BYTES = 48 * 1024

TQDM = """
import sys, time
from tqdm import tqdm
bar = tqdm(total=100, file=sys.stderr, mininterval=0, miniters=1)
for i in range(100):
    bar.update(1)
    bar.set_postfix(loss=round(1.0 / (i + 1), 4))
    if i == 44:
        print("MARK 45", file=sys.stderr, flush=True)
bar.close()
"""

TORCHTUNE = """
import sys
from tqdm import tqdm
steps = 20
pbar = tqdm(total=steps, file=sys.stderr, mininterval=0, miniters=1)
for idx in range(steps):
    global_step = idx + 1
    loss_to_log = 2.0 / global_step
    pbar.update(1)
    pbar.set_description(f"{0 + 1}|{global_step}|Loss: {loss_to_log}")
    if global_step == 9:
        print("MARK 45", file=sys.stderr, flush=True)
pbar.close()
"""

TRANSFORMERS = """
import sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments
torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=32, bos_token_id=0, eos_token_id=0)
model = GPT2LMHeadModel(config)
class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 40
    def __getitem__(self, i):
        ids = torch.tensor([(i + j) % 64 for j in range(16)])
        return {"input_ids": ids, "labels": ids}
class Mark(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 9:
            print("MARK 45", file=sys.stderr, flush=True)
args = TrainingArguments(output_dir=sys.argv[1], max_steps=20, per_device_train_batch_size=2, logging_steps=5,
                         report_to=[], save_strategy="no", use_cpu=True, disable_tqdm=False)
Trainer(model=model, args=args, train_dataset=Data(), callbacks=[Mark()]).train()
"""

LIGHTNING = """
import sys
import torch
import lightning as L
torch.manual_seed(0)
class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
    def training_step(self, batch, idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, prog_bar=True)
        if self.current_epoch == 1 and idx == 8:
            print("MARK 45", file=sys.stderr, flush=True)
        return loss
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(80, 4), torch.randn(80, 1))
loader = torch.utils.data.DataLoader(data, batch_size=4)
trainer = L.Trainer(max_epochs=2, accelerator="cpu", logger=False, enable_checkpointing=False,
                    enable_model_summary=False, default_root_dir=sys.argv[1])
trainer.fit(Tiny(), loader)
"""

# Without rich installed, Lightning's default bar is TQDMProgressBar; with rich (ktrain's venv) it is
# RichProgressBar, which in a log (not a terminal) prints only when an epoch's bar finishes.
LIGHTNING_TQDM = LIGHTNING.replace(
    "enable_model_summary=False,", "enable_model_summary=False, callbacks=[L.pytorch.callbacks.TQDMProgressBar()],"
)

KERAS = """
import os, sys
os.environ["KERAS_BACKEND"] = "jax"
import numpy as np
import keras
keras.utils.set_random_seed(0)
class Mark(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 8 and self.epoch == 1:
            print("MARK 45", flush=True)
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
model.fit(np.random.rand(80, 4), np.random.rand(80, 1), batch_size=4, epochs=3, callbacks=[Mark()], verbose=1)
"""

LIBRARIES = {
    "tqdm": (TQDM, ("tqdm",)),
    "torchtune": (TORCHTUNE, ("tqdm",)),
    "transformers": (TRANSFORMERS, ("torch", "transformers")),
    "lightning": (LIGHTNING_TQDM, ("torch", "lightning")),
    "lightning-rich": (LIGHTNING, ("torch", "lightning", "rich")),
    "keras": (KERAS, ("keras", "jax")),
}


def installed(name: str) -> bool:
    return all(importlib.util.find_spec(module) is not None for module in LIBRARIES[name][1])


def run(name: str) -> bytes:
    """The library's output, stdout then stderr interleaved as a pod's log (one stream)."""
    script = LIBRARIES[name][0]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "", "NO_COLOR": ""}
        env.pop("KUBEFLOW_TRAINER_SERVER_URL", None)
        done = subprocess.run(
            [sys.executable, "-c", script, tmp],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=600,
            check=False,
            cwd=tmp,
        )
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-3000:]
    return done.stdout


def version(name: str) -> str:
    from importlib.metadata import version as of

    return ", ".join(f"{m} {of(m)}" for m in LIBRARIES[name][1])


def fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.log").read_bytes()


def until_mark(log: bytes) -> bytes:
    """The log as it was when the run printed `MARK 45` (45% of its steps done)."""
    at = log.find(b"MARK 45")
    assert at >= 0, "the run printed no mark"
    return log[:at]


def main() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    versions = []
    for name in LIBRARIES:
        if not installed(name):
            sys.stderr.write(f"{name}: not installed, fixture kept\n")
            continue
        log = run(name)
        mark = log.find(b"MARK 45")
        # the tail up to the mark and the tail after it, as two reads of the same log would see
        start = max(0, mark - KEEP_BYTES // 2)
        (FIXTURES / f"{name}.log").write_bytes(log[start : start + KEEP_BYTES] if len(log) > KEEP_BYTES else log)
        versions.append(f"{name}: {version(name)}, python {sys.version.split()[0]}")
    if versions:
        (FIXTURES / "VERSIONS.txt").write_text("# made by tests/training_logs.py\n" + "\n".join(versions) + "\n")


if __name__ == "__main__":
    main()
