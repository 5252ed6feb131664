# syntax=docker/dockerfile:1
# Component images for users who have Docker: `docker build --target virt-controller .` and so
# on. The project itself builds the same images without Docker (make images).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/ ./cmd/...

FROM scratch AS virt-controller
COPY --from=build /out/virt-controller /usr/bin/virt-controller
USER 65532:65532
ENTRYPOINT ["/usr/bin/virt-controller"]

FROM scratch AS virt-api
COPY --from=build /out/virt-api /usr/bin/virt-api
USER 65532:65532
ENTRYPOINT ["/usr/bin/virt-api"]

FROM scratch AS vmctl
COPY --from=build /out/vmctl /usr/bin/vmctl
USER 65532:65532
ENTRYPOINT ["/usr/bin/vmctl"]

FROM scratch AS virtctl
COPY --from=build /out/virtctl /usr/bin/virtctl
ENTRYPOINT ["/usr/bin/virtctl"]

FROM scratch AS virt-handler
COPY --from=build /out/virt-handler /usr/bin/virt-handler
ENTRYPOINT ["/usr/bin/virt-handler"]

# The launcher needs QEMU and libvirt: a Debian base with their packages.
FROM debian:bookworm-slim AS virt-launcher
RUN apt-get update && apt-get install -y --no-install-recommends \
      qemu-system-x86 libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients tini iproute2 iptables \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/virt-launcher /usr/bin/virt-launcher
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/bin/virt-launcher"]
