"""`kubeflow.trainer.backends.container` (SDK 0.5): see `ktrain.backends`."""
