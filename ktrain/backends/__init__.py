"""The Kubeflow SDK's backend module paths (`kubeflow.trainer.backends...`, SDK 0.5) for the names
a notebook imports from them: `ktrain.backends.kubernetes.utils.get_tpu_num_nodes`,
`ktrain.backends.localprocess.types.LocalProcessBackendConfig`,
`ktrain.backends.container.types.ContainerBackendConfig`. ktrain's backends themselves are
`ktrain.TrainerClient`'s (`ktrain.python_api`); docs/python-api.md lists the SDK's internals that
have no counterpart here."""
