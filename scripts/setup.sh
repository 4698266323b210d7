#!/usr/bin/env bash
# Sets up a fresh machine for Ember: Debian packages, a Python venv with pinned jax/jaxlib/numpy/
# pytest/tensorflow-cpu, a Release build of the plugin (and its TensorFlow helper) and the Python
# packages (jax_plugins.ember, ember) installed into the venv.
# Idempotent; re-running only rebuilds what changed. Usage: scripts/setup.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${1:-$ROOT/build}

APT_PACKAGES=(cmake ninja-build g++ libabsl-dev libprotobuf-dev protobuf-compiler
              libgtest-dev libgmock-dev dataset-fashion-mnist libeigen3-dev
              clang libclang-rt-14-dev  # clang: the sanitizer build and the libFuzzer targets
              lld  # ld.lld: links the test executables in half GNU ld's time (CMakeLists.txt)
              llvm-19  # llc-19: PTX for the virtual GPU's tests (tests/virtual_gpu)
              llvm-19-dev  # the code generator's LLVM (compiler/codegen), linked statically
              libgloo-dev)  # Gloo: host collectives across processes (collectives/gloo)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python: the machines run 3.11, for which jax/jaxlib 0.10.2 is the newest release.
VENV=$ROOT/.venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$ROOT/python/requirements.txt"
# TensorFlow (for the EMBER device and its helper library, which builds against this wheel), held
# to the pins above. Where no wheel installs, the rest still works and the TensorFlow tests say so.
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
     -r "$ROOT/python/requirements-tensorflow.txt" -c "$ROOT/python/requirements.txt"; then
  echo "setup: tensorflow-cpu could not be installed; Ember builds without its TensorFlow helper"
fi

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target pjrt_ember
# Ship the plugin with the shared libraries it needs beyond libc/libstdc++ (Debian's Abseil),
# found through its $ORIGIN rpath, so the package also loads where libabsl is not installed.
PKG=$ROOT/python/jax_plugins/ember
rm -f "$PKG"/*.so "$PKG"/*.so.*
# libpjrt_ember.so is the loader frameworks open; libpjrt_ember_core.so (all of Ember) sits beside it.
cp "$BUILD/pjrt_plugin/libpjrt_ember.so" "$BUILD/pjrt_plugin/libpjrt_ember_core.so" "$PKG/"
# Symbols for debugging stay in the build; the package (which GPU machines receive as a carried
# build of at most 64 MiB) ships the core stripped: LLVM's code generator is most of its size.
strip --strip-unneeded "$PKG/libpjrt_ember_core.so"
# Gloo (collectives across processes) comes with what it links: hiredis, ibverbs, libnl.
ldd "$BUILD/pjrt_plugin/libpjrt_ember_core.so" |
  awk '/libabsl_|libgloo|libhiredis|libibverbs|libnl-/ {print $3}' | xargs -r -I{} cp {} "$PKG/"
# The TensorFlow helper (built only when TensorFlow is installed) goes beside the core.
if [ -f "$BUILD/pjrt_plugin/libember_tf_helper.so" ]; then
  cp "$BUILD/pjrt_plugin/libember_tf_helper.so" "$PKG/"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
  -e "$ROOT/python"
echo "setup: done (venv $VENV, build $BUILD)"
