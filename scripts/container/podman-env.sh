# Sourced by the container scripts: podman settings that work on a Debian host without a registry
# (runc, cgroupfs, ulimits within the host's hard limits) and a storage of the project's own, kept
# between runs so the base image is made once per machine. Override MGW_PODMAN_DIR to move it.
MGW_PODMAN_DIR="${MGW_PODMAN_DIR:-/var/tmp/model-gateway-podman}"
mkdir -p "$MGW_PODMAN_DIR/root" "$MGW_PODMAN_DIR/runroot"
cat > "$MGW_PODMAN_DIR/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
cat > "$MGW_PODMAN_DIR/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$MGW_PODMAN_DIR/root"
runroot = "$MGW_PODMAN_DIR/runroot"
CONF
export CONTAINERS_CONF="$MGW_PODMAN_DIR/containers.conf"
export CONTAINERS_STORAGE_CONF="$MGW_PODMAN_DIR/storage.conf"
