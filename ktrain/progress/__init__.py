"""How far a training run is: its progress, ETA and metrics, from wherever they can be read (pure).

- `ktrain.progress.status`: the model (`TrainerStatus`) and `TrainJob.status.trainerStatus` read
  into it, bounded and checked (what the Trainer controller's TrainJobStatus feature writes);
- `ktrain.progress.logs`: the same read from the tail of a trainer's log, where no controller
  writes a status (`--target jobset`, `job run --local`): tqdm, Hugging Face Trainer, PyTorch
  Lightning, torchtune, Keras and ktrain's own one-line format;
- `ktrain.progress.view`: how it is shown (a bar, the percentage, the ETA, sparklines, the age of
  the last update), with every value from elsewhere made printable.

No I/O, clock or printing here: the callers pass the text and the time.
"""
