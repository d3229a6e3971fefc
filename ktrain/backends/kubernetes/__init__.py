"""`kubeflow.trainer.backends.kubernetes` (SDK 0.5): see `ktrain.backends`."""
