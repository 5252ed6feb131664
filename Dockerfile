# The component images, for building with Docker or a registry build pipeline. There is one
# target per image:
#
#   docker build --target virt-controller -t vmctl/virt-controller:devel .
#
# The targets are virt-controller, virt-handler, virt-api, vmctl, virtctl, virt-launcher and
# virtiofsd.
# The project's own flow, `make images` (hack/imagebuilder, no Docker), builds the same images:
# the same binaries, entrypoints and users. virt-launcher also gets the same Debian packages
# (hack/images/launcher/packages) and libvirt configuration (hack/images/launcher/).
# hack/imagebuilder/dockerfile_test.go checks that the two agree.

# The binaries, built as `make build` builds them: static, without cgo.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/ \
      ./cmd/virt-controller ./cmd/virt-handler ./cmd/virt-launcher ./cmd/virt-api ./cmd/vmctl ./cmd/virtctl

# Each Go component runs alone on an empty base (hack/imagebuilder/static.go).
FROM scratch AS static
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

FROM static AS virt-controller
COPY --from=build /out/virt-controller /usr/bin/virt-controller
USER 65532:65532
ENTRYPOINT ["/usr/bin/virt-controller"]

FROM static AS virt-api
COPY --from=build /out/virt-api /usr/bin/virt-api
USER 65532:65532
ENTRYPOINT ["/usr/bin/virt-api"]

FROM static AS vmctl
COPY --from=build /out/vmctl /usr/bin/vmctl
USER 65532:65532
ENTRYPOINT ["/usr/bin/vmctl"]

FROM static AS virtctl
COPY --from=build /out/virtctl /usr/bin/virtctl
USER 65532:65532
ENTRYPOINT ["/usr/bin/virtctl"]

# The node agent reaches launcher sockets and host paths that are root's.
FROM static AS virt-handler
COPY --from=build /out/virt-handler /usr/bin/virt-handler
USER 0:0
ENTRYPOINT ["/usr/bin/virt-handler"]

# QEMU and libvirt on Debian bookworm, configured for an unprivileged pod
# (hack/imagebuilder/launcher.go, hack/images/launcher/README.md). The build arguments
# DEBIAN_MIRROR (bookworm, bookworm-updates) and DEBIAN_SECURITY_MIRROR (bookworm-security)
# replace the base image's Debian mirrors, as the same variables do for `make images`. Give
# http mirrors: the base has no CA certificates (apt checks Debian's signatures either way).
FROM debian:bookworm-slim AS virt-launcher
ARG DEBIAN_MIRROR=
ARG DEBIAN_SECURITY_MIRROR=
COPY hack/images/launcher/packages /tmp/launcher-packages
RUN set -eu; \
    sources=/etc/apt/sources.list.d/debian.sources; \
    if [ -n "$DEBIAN_MIRROR" ]; then \
      sed -i "s|^URIs: .*/debian\$|URIs: ${DEBIAN_MIRROR%/}|" "$sources"; \
    fi; \
    if [ -n "$DEBIAN_SECURITY_MIRROR" ]; then \
      sed -i "s|^URIs: .*/debian-security\$|URIs: ${DEBIAN_SECURITY_MIRROR%/}|" "$sources"; \
    fi; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get -y dist-upgrade; \
    apt-get install -y --no-install-recommends $(sed -e 's/#.*//' /tmp/launcher-packages); \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /tmp/launcher-packages
# After the packages, so that these replace the files they ship.
COPY hack/images/launcher/qemu.conf hack/images/launcher/libvirtd.conf /etc/libvirt/
# The pod's user, uid/gid 107 as in KubeVirt's launcher: libvirtd runs as its session daemon.
RUN grep -q '^qemu:' /etc/group || \
      echo 'qemu:x:107:' >>/etc/group; \
    grep -q '^qemu:' /etc/passwd || \
      echo 'qemu:x:107:107:qemu:/var/run/kubevirt-private/libvirt-home:/usr/sbin/nologin' >>/etc/passwd
COPY --from=build /out/virt-launcher /usr/bin/virt-launcher
# The session daemon's directories and socket (launcher/layout.LibvirtEnv).
ENV HOME=/var/run/kubevirt-private/libvirt-home \
    XDG_CONFIG_HOME=/var/run/kubevirt-private/libvirt-home/config \
    XDG_CACHE_HOME=/var/run/kubevirt-private/libvirt-home/cache \
    XDG_DATA_HOME=/var/run/kubevirt-private/libvirt-home/data \
    XDG_RUNTIME_DIR=/var/run/kubevirt-private/libvirt-home/run \
    LIBVIRT_DEFAULT_URI=qemu:///session?socket=/var/run/kubevirt-private/libvirt/libvirt-sock
USER 107:107
# tini forwards signals and reaps; -s because the launcher pod shares its process namespace,
# whose PID 1 is the pause container.
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/usr/bin/virt-launcher"]

# virtiofsd for KubeVirt's virtiofs filesystems, from Debian trixie (hack/imagebuilder/virtiofsd.go):
# bookworm has only QEMU 7.2's C virtiofsd, which must chroot or unshare namespaces, refused to
# an unprivileged pod. DEBIAN_MIRROR replaces the base image's Debian mirror, as for the launcher.
# apt also installs uidmap (a Depends), which make images leaves out.
FROM debian:trixie-slim AS virtiofsd
ARG DEBIAN_MIRROR=
RUN set -eu; \
    if [ -n "$DEBIAN_MIRROR" ]; then \
      sed -i "s|^URIs: .*/debian\$|URIs: ${DEBIAN_MIRROR%/}|" /etc/apt/sources.list.d/debian.sources; \
    fi; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends virtiofsd; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*
# The launcher's qemu user, whose QEMU connects to virtiofsd's socket.
USER 107:107
ENTRYPOINT ["/usr/libexec/virtiofsd"]
