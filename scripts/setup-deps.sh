#!/bin/bash
# setup-deps.sh — install the Debian packages proff builds, tests and benchmarks with.
#
# The one place the project installs anything. Called by `make check`, `make demo`
# and `make bench`. Installs only what is missing; as non-root it prints the exact
# apt-get line and stops.
set -euo pipefail

# package:command-or-file that proves it is installed
NEEDED=(
  "build-essential:/usr/bin/make"
  "gcc:/usr/bin/gcc"
  "g++:/usr/bin/g++"
  "jq:/usr/bin/jq"
  "bc:/usr/bin/bc"
  "clang:/usr/bin/clang"
  "pkg-config:/usr/bin/pkg-config"
  "libelf-dev:/usr/include/libelf.h"
  "libdw-dev:/usr/include/elfutils/libdw.h"
  "libzstd-dev:/usr/include/zstd.h"
  "zlib1g-dev:/usr/include/zlib.h"
  "liblzma-dev:/usr/include/lzma.h"
  "libcmocka-dev:/usr/include/cmocka.h"
  "libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a"
  "linux-perf:/usr/bin/perf"
  "libdevel-dprof-perl:/usr/bin/dprofpp"
  "uftrace:/usr/bin/uftrace"
  "python3:/usr/bin/python3"
  "perl:/usr/bin/perl"
  "xz-utils:/usr/bin/xz"
  "gzip:/usr/bin/gzip"
  "binutils:/usr/bin/objcopy"
  "python3-dbg:/usr/bin/python3-dbg"
  "libc6-dbg:/usr/share/doc/libc6-dbg/copyright"
  "time:/usr/bin/time"
  "libprotobuf-c-dev:/usr/include/protobuf-c/protobuf-c.h"
  "protobuf-c-compiler:/usr/bin/protoc-c"
  "golang-go:/usr/bin/go"
  "chromium:/usr/bin/chromium"
  "npm:/usr/bin/npm"
  "python3-scipy:/usr/lib/python3/dist-packages/scipy/__init__.py"
  "python3-statsmodels:/usr/lib/python3/dist-packages/statsmodels/__init__.py"
  "tmux:/usr/bin/tmux"
  "bsdutils:/usr/bin/script"
  "less:/usr/bin/less"
  "man-db:/usr/bin/man"
  "scdoc:/usr/bin/scdoc"
  "python3-jsonschema:/usr/lib/python3/dist-packages/jsonschema/__init__.py"
  "bash-completion:/usr/share/bash-completion/bash_completion"
  "libcurl4-openssl-dev:/usr/include/x86_64-linux-gnu/curl/curl.h"
  "libcurl4:/usr/lib/x86_64-linux-gnu/libcurl.so.4"
  "clickhouse-server:/usr/sbin/clickhouse-server"
  "clickhouse-client:/usr/bin/clickhouse-client"
  "curl:/usr/bin/curl"
)

missing=()
for entry in "${NEEDED[@]}"; do
  pkg=${entry%%:*}; proof=${entry#*:}
  [ -e "$proof" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  echo "proff: missing packages: ${missing[*]}" >&2
  echo "proff: run as root: apt-get update && $cmd" >&2
  exit 1
fi
echo "proff: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends ${missing[*]} >&2
