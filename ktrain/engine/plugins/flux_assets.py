"""Pure assets of the Flux ML policy: CURVE certificate, host list, broker config and the
two shell scripts of the `<tj>-flux-entrypoint` ConfigMap (upstream
`plugins/flux/flux.go` and `plugins/flux/templates/*`, ENGINE.md §6.6).

The scripts and the broker config are ktrain's own text. They take the same values, in
the same `%s` order, as upstream's templates and do the same work:

- `init.sh` runs in the `flux-installer` init container: it copies the Flux view from
  `/opt/view` onto the shared `/mnt/flux` volume and writes the host list and
  `broker.toml` there.
- `entrypoint.sh` wraps the trainer command: it copies the CURVE certificate into
  place, encodes the node resources (R), then the lead pod (`<tj>-node-0-0`) starts the
  Flux instance and `flux run`s the command with the -N/-n/-g flags, while every other
  pod starts a follower broker that joins it.

Everything here is a pure function of its arguments (stdlib `hashlib` only).
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Final


# Settings a TrainJob may override through env vars of the same name (ENGINE.md §6.6).
FLUX_VIEW_IMAGE_DEFAULT: Final = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
FLUX_NETWORK_DEVICE_DEFAULT: Final = "eth0"
FLUX_QUEUE_POLICY_DEFAULT: Final = "fcfs"

# Where the view image keeps its Flux install; the first value `init.sh` receives.
FLUX_VIEW_PATH: Final = "/opt/view"

# ---------------------------------------------------------------------------------------
# CURVE certificate: X25519 key pair + Z85 text, as ZeroMQ / `flux keygen` write it.
# ---------------------------------------------------------------------------------------

_P: Final = 2**255 - 19  # the field prime of Curve25519
_A24: Final = 121665  # (486662 - 2) / 4, the ladder constant of RFC 7748 §5
_BASE_POINT: Final = (9).to_bytes(32, "little")

Z85_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _decode_scalar(k: bytes) -> int:
    """RFC 7748 decodeScalar25519: the clamping libsodium and Go's crypto/ecdh apply."""
    clamped = bytearray(k)
    clamped[0] &= 248
    clamped[31] &= 127
    clamped[31] |= 64
    return int.from_bytes(clamped, "little")


def _decode_u(u: bytes) -> int:
    """RFC 7748 decodeUCoordinate: drop the top bit, accept non-canonical values mod p."""
    masked = bytearray(u)
    masked[31] &= 127
    return int.from_bytes(masked, "little") % _P


def x25519(scalar: bytes, u: bytes) -> bytes:
    """RFC 7748 X25519(k, u) via the Montgomery ladder.

    Not constant-time: fine here, because the only secret it sees is derived from the
    TrainJob UID, which is not secret to begin with (upstream makes the same choice).
    """
    if len(scalar) != 32 or len(u) != 32:
        raise ValueError("X25519 scalar and u-coordinate must be 32 bytes each")
    k = _decode_scalar(scalar)
    x1 = _decode_u(u)
    x2, z2, x3, z3 = 1, 0, x1, 1
    swap = 0
    for t in reversed(range(255)):
        bit = (k >> t) & 1
        if swap ^ bit:
            x2, x3 = x3, x2
            z2, z3 = z3, z2
        swap = bit
        a = (x2 + z2) % _P
        aa = a * a % _P
        b = (x2 - z2) % _P
        bb = b * b % _P
        e = (aa - bb) % _P
        c = (x3 + z3) % _P
        d = (x3 - z3) % _P
        da = d * a % _P
        cb = c * b % _P
        x3 = (da + cb) * (da + cb) % _P
        z3 = x1 * (da - cb) * (da - cb) % _P
        x2 = aa * bb % _P
        z2 = e * (aa + _A24 * e) % _P
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, _P - 2, _P) % _P).to_bytes(32, "little")


def x25519_public_key(private: bytes) -> bytes:
    """The X25519 public key of a 32-byte private key (scalar times the base point 9)."""
    return x25519(private, _BASE_POINT)


def z85_encode(data: bytes) -> str:
    """ZeroMQ Z85 (RFC 32/Z85): each 4 bytes, big-endian, become 5 base-85 digits.

    Upstream returns "" for a length that is not a multiple of 4; we refuse instead.
    """
    if len(data) % 4:
        raise ValueError(f"Z85 needs a length that is a multiple of 4, got {len(data)}")
    out: list[str] = []
    for i in range(0, len(data), 4):
        value = int.from_bytes(data[i : i + 4], "big")
        for divisor in (85**4, 85**3, 85**2, 85, 1):
            out.append(Z85_ALPHABET[value // divisor % 85])
    return "".join(out)


def curve_certificate(job_name: str, uid: str) -> str:
    """Text of the `curve.cert` key of Secret `<tj>-flux-curve`.

    Deterministic from the UID, so every reconcile yields the same Secret: the secret
    key is SHA-256 of the UID string, stored as is (unclamped, like Go's
    `ecdh.PrivateKey.Bytes`); the public key is X25519 of it. Both are Z85 text.
    """
    import hashlib

    secret = hashlib.sha256(uid.encode("utf-8")).digest()
    public = x25519_public_key(secret)
    return (
        "#  ZeroMQ CURVE Secret Certificate\n"
        "#  Generated by Kubeflow Trainer\n"
        "\n"
        "metadata\n"
        f'    name = "{job_name}"\n'
        "curve\n"
        f'    public-key = "{z85_encode(public)}"\n'
        f'    secret-key = "{z85_encode(secret)}"\n'
    )


# ---------------------------------------------------------------------------------------
# Values substituted into the scripts.
# ---------------------------------------------------------------------------------------


def cpu_range(k: int) -> str:
    """Flux id range of k items from 0: `0` for one, `0-<k-1>` otherwise.

    Used for host indices, cores and GPUs alike. Like upstream, k < 1 is not rejected
    (k=0 gives `0--1`); validation keeps such values out.
    """
    return "0" if k == 1 else f"0-{k - 1}"


def hostlist(job_name: str, num_nodes: int) -> str:
    """Flux host list of the node pods: `<tj>-node-0-[0-<N-1>]`, or `<tj>-node-0-[0]`.

    The pods are the `node` replicated job's pods, hence the fixed `node-0-` infix.
    """
    return f"{job_name}-node-0-[{cpu_range(num_nodes)}]"


def rspec(tasks: int, gpus: int) -> str:
    """`flux R encode` resource flags for one node: cores, and GPUs when there are any."""
    spec = f"--cores={cpu_range(tasks)}"
    if gpus > 0:
        spec += f" --gpu={cpu_range(gpus)}"
    return spec


def flux_flags(num_nodes: int, tasks: int, gpus: int) -> str:
    """`flux run` flags: nodes, total tasks (per node × nodes), GPUs per task if any."""
    flags = f"-N {num_nodes} -n {tasks * num_nodes}"
    if gpus > 0:
        flags += f" -g {gpus}"
    return flags


# ---------------------------------------------------------------------------------------
# broker.toml — values in order: default_bind, default_connect, host list, queue policy.
# ---------------------------------------------------------------------------------------

BROKER_TOML_TEMPLATE: Final = """\
# Flux broker configuration, written by ktrain for one Flux TrainJob.

# Let users other than the instance owner connect; root acts as owner.
[access]
allow-guest-user = true
allow-root-owner = true

# Node resources, encoded by entrypoint.sh with `flux R encode`.
[resource]
path = "/mnt/flux/config/etc/flux/system/R"

# Overlay network: every broker binds the device below and reaches its peers through
# the JobSet headless service; the CURVE certificate is shared by all nodes.
[bootstrap]
curve_cert = "/mnt/flux/config/etc/curve/curve.cert"
default_port = 8050
default_bind = "%s"
default_connect = "%s"
hosts = [
  { host = "%s" },
]

[archive]
dbpath = "/mnt/flux/config/var/lib/flux/job-archive.sqlite"
period = "1m"
busytimeout = "50s"

[sched-fluxion-qmanager]
queue-policy = "%s"
"""


def render_broker_toml(job_name: str, namespace: str, hostlist: str, network_device: str, queue_policy: str) -> str:
    """The broker config; `%p`/`%h` are left for Flux to fill (port, host name)."""
    default_bind = f"tcp://{network_device}:%p"
    # Pod FQDN through the JobSet subdomain, which upstream fixes to the job name.
    default_connect = f"tcp://%h.{job_name}.{namespace}.svc.cluster.local:%p"
    return BROKER_TOML_TEMPLATE % (default_bind, default_connect, hostlist, queue_policy)


# ---------------------------------------------------------------------------------------
# init.sh — values in order: view path, main host, host list, broker config.
# ---------------------------------------------------------------------------------------

INIT_SH_TEMPLATE: Final = """\
#!/bin/bash
# Flux set-up for one node of a Flux TrainJob, written by ktrain.
# Runs in the flux-installer init container (a Flux "view" image): copies the pre-built
# Flux view onto the shared volume /mnt/flux and writes the host list and the broker
# configuration that the node's broker reads when entrypoint.sh starts it.

view_root="%s"
main_host="%s"
hosts="%s"

# The view may be read-only, so configuration and state live on the shared volume.
install_root=/mnt/flux
config_root="${install_root}/config"

echo "Setting up Flux on $(hostname); lead broker: ${main_host}"
echo "Flux view: ${view_root}"
export PATH="${view_root}/bin:${PATH}"
mkdir -p "${view_root}/bin"

mkdir -p "${config_root}/etc/flux/system/cron.d" \\
  "${config_root}/etc/flux/config" \\
  "${config_root}/var/lib/flux"

# entrypoint.sh reads the host list back to encode the node resources.
echo "${hosts}" > "${config_root}/etc/flux/system/hostlist"

# The quoted delimiter keeps the configuration byte for byte (no shell expansion).
cat > "${config_root}/etc/flux/config/broker.toml" <<'KTRAIN_BROKER_TOML'
%s
KTRAIN_BROKER_TOML

echo "Flux broker configuration:"
cat "${config_root}/etc/flux/config/broker.toml"

# Run directory, and the place entrypoint.sh copies the CURVE certificate to.
mkdir -p "${config_root}/run/flux" "${config_root}/etc/curve"

# The view path is a symlink into spack's views tree: copy the directory it points to.
view_dir="$(readlink -f "${view_root}")"
mkdir -p "${install_root}/view"
echo "Copying the Flux view ${view_dir} to ${install_root}/view"
cp -R "${view_dir}"/* "${install_root}/view"

# The view links into /opt/software, so that tree goes along; entrypoint.sh restores it.
cp -R /opt/software "${install_root}/"

# Marker that the copy finished.
touch "${install_root}/flux-operator-done.txt"
echo "Flux view installed."
"""


def render_init_sh(view_path: str, main_host: str, hostlist: str, broker_toml: str) -> str:
    """`init.sh` of the ConfigMap. Upstream passes `/opt/view`, `<tj>-0` (only echoed),
    the host list and the rendered broker config."""
    return INIT_SH_TEMPLATE % (view_path, main_host, hostlist, broker_toml)


# ---------------------------------------------------------------------------------------
# entrypoint.sh — values in order: R spec, main host, flux run flags.
# ---------------------------------------------------------------------------------------

ENTRYPOINT_SH_TEMPLATE: Final = """\
#!/bin/bash
# Flux entrypoint of a node of a Flux TrainJob, written by ktrain.
# Usage: entrypoint.sh "<application command line>"
# The lead pod starts the Flux instance and runs the command in it with `flux run`;
# every other pod starts a follower broker that joins the lead one.

flux_user="$(whoami)"
flux_uid="$(id -u "${flux_user}")"

install_root=/mnt/flux
view_root="${install_root}/view"
config_root="${install_root}/config"
view_bin="${view_root}/bin"

# Appended, not prepended: tools the application image already has (python...) win.
export PATH="${PATH}:${view_bin}"

# The view links into /opt/software; put back the copy init.sh saved.
cp -R "${install_root}/software/"* /opt/software/

# Flux's Python bindings live in the view's own python3.X tree.
python_lib="$(find "${view_root}" -maxdepth 2 -type d -path "${view_root}/lib/python3*" 2>/dev/null | head -n 1)"
python_bin="${view_bin}/$(basename "${python_lib}")"
echo "Flux python: ${python_bin} (${python_lib})"
if [[ -f "${python_bin}" ]]; then
  # The view's python links point into the image it was built in; replace them.
  rm -rf "${view_bin}/python3" "${view_bin}/python"
  ln -s "${python_bin}" "${view_root}/lib/python" || true
  ln -s "${python_bin}" "${view_root}/lib/python3" || true
fi
export PYTHONPATH="${PYTHONPATH:-}:${python_lib}/site-packages"
export FLUX_RC_EXTRA="${view_root}/etc/flux/rc1.d"

# Helper to switch a running instance to the fluxion scheduler.
cat > "${install_root}/load-fluxion.sh" <<'KTRAIN_EOF'
flux module remove sched-simple
flux module load sched-fluxion-resource
flux module load sched-fluxion-qmanager
KTRAIN_EOF

# Environment file for a shell in the pod; expanded now, on purpose.
cat > "${install_root}/flux-view.sh" <<KTRAIN_EOF
#!/bin/bash
export PATH=${PATH}
export PYTHONPATH=${PYTHONPATH}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:${view_root}/lib
export fluxsocket=local://${config_root}/run/flux/local
KTRAIN_EOF

flux_config="${config_root}/etc/flux/config"
# The wrapped command line arrives as one argument (the TrainJob command and args
# joined with spaces); it is split into words again when it is run below.
command="$*"

# The shared CURVE certificate, private to the broker's user.
curve_cert="${config_root}/etc/curve/curve.cert"
cp /curve/curve.cert "${curve_cert}"
chmod go-r "${curve_cert}"
chown -R "${flux_uid}" "${curve_cert}"

# Resources (R) of every host in the list init.sh wrote.
hosts="$(cat "${config_root}/etc/flux/system/hostlist")"
flux R encode --hosts="${hosts}" %s > /tmp/R
mv /tmp/R "${config_root}/etc/flux/system/R"

export STATE_DIR="${config_root}/var/lib/flux"
export FLUX_OUTPUT_DIR=/tmp/fluxout
mkdir -p "${STATE_DIR}" "${FLUX_OUTPUT_DIR}"

# The pod that runs the lead broker (rank 0).
main_host="%s"

mkdir -p "${config_root}/etc/flux/system/cron.d"
broker_options=(
  "-Scron.directory=${config_root}/etc/flux/system/cron.d"
  -Stbon.fanout=256
  "-Srundir=${config_root}/run/flux"
  "-Sstatedir=${STATE_DIR}"
  "-Slocal-uri=local://${config_root}/run/flux/local"
  -Slog-stderr-level=0
  -Slog-stderr-mode=local
)

if [[ "$(hostname)" == "${main_host}" ]]; then
  echo "Lead broker; command: ${command}"
  if [[ -z "${command}" ]]; then
    # No command: keep an instance up for users to attach to.
    flux broker --config-path "${flux_config}" "${broker_options[@]}"
  else
    # -N nodes, -n tasks in total, -g GPUs per task when the job has GPUs.
    flags="%s"
    echo "Running: flux run ${flags} ${command}"
    # flags and command stay unquoted: each is a list of words.
    flux start -o --config "${flux_config}" "${broker_options[@]}" flux run ${flags} ${command}
  fi
else
  # Followers keep trying until the lead broker is up and the instance ends cleanly.
  while true; do
    flux start -o --config "${flux_config}" "${broker_options[@]}"
    status=$?
    if [[ ${status} -eq 0 ]]; then
      echo "Follower broker finished cleanly."
      break
    fi
    echo "Follower broker exited with status ${status}; retrying in 15s."
    sleep 15
  done
fi

# Marker that Flux has stopped. As upstream, the script ends with this command's status.
touch "${install_root}/flux-operator-complete.txt"
"""


def render_entrypoint_sh(rspec: str, main_host: str, flags: str) -> str:
    """`entrypoint.sh` of the ConfigMap: R spec (`rspec()`), lead pod name
    (`<tj>-node-0-0`) and `flux run` flags (`flux_flags()`)."""
    return ENTRYPOINT_SH_TEMPLATE % (rspec, main_host, flags)
