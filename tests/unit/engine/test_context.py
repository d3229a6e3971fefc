"""`ktrain.engine.context`: what a render is given besides the job and the runtime."""

from __future__ import annotations

from ktrain.engine.context import RenderContext, SshKeyPair, StatusServer


def test_a_key_pair_never_shows_its_key() -> None:
    assert repr(SshKeyPair(b"secret", b"public\n")) == "SshKeyPair(<redacted>)"


def test_the_status_server_defaults_are_the_trainer_controllers_configuration_defaults() -> None:
    # upstream pkg/apis/config/v1alpha1/defaults.go (webhookServiceName, trainJobStatusServer.port)
    # and the operator namespace the Helm chart and kustomize install into
    server = StatusServer()
    assert (server.service, server.namespace, server.port, server.ca_cert) == (
        "kubeflow-trainer-controller-manager",
        "kubeflow-system",
        10443,
        None,
    )


def test_no_status_server_means_the_feature_gate_is_off() -> None:
    assert RenderContext().status_server is None
