"""`kubeflow.trainer.backends.localprocess` (SDK 0.5): see `ktrain.backends`."""
