"""`ktrain.types.types`: the Kubeflow SDK's types at its module path (`kubeflow.trainer.types.types`);
they live in `ktrain.python_api.types`."""
