# The kubesched image the Helm chart (charts/kubesched) runs:
#   docker build -t <registry>/kubesched:0.1.0 .
# Build stage: the same Debian packages tests/install-deps.sh installs (libc6-dev named: with
# --no-install-recommends gcc alone lacks the C library headers and crt files); the run stage keeps only
# the shared libraries kubesched links. Runs as an unprivileged user (65532, as the chart's
# securityContext expects). Out-of-tree plugins are not baked in: the chart copies them from
# their own images (values pluginImages).
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gcc libc6-dev make cmake ninja-build pkg-config libcjson-dev libyaml-dev libcurl4-openssl-dev \
      libssl-dev libmicrohttpd-dev libgnutls28-dev libpcre2-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY core core
COPY sdk sdk
COPY plugins plugins
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_BUILD_TESTS=OFF \
      -DCMAKE_INSTALL_PREFIX=/usr/local \
    && cmake --build /build && cmake --install /build --strip

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcjson1 libyaml-0-2 libcurl4 libssl3 libmicrohttpd12 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/kubesched /usr/local/bin/kubesched
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubesched"]
CMD ["--config=/etc/kubesched/config.yaml"]
