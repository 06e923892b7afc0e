#!/usr/bin/env python3
"""Quantizes a whisper.cpp ggml model (float16) to q8_0 or q5_0, numpy only.

Usage: ggml_quantize.py IN.bin OUT.bin q8_0|q5_0

Why: smaller weights make whisper.cpp's matrix products cheaper on a 2-core CPU (figures in
audio/benches/stt.rs). whisper.cpp's own `quantize` tool is not built by whisper-rs, so
this redoes ggml's reference quantizers (ggml-quants.c: quantize_row_q8_0_ref,
quantize_row_q5_0_ref) for the tensors whisper.cpp creates with the model's weight type:
every 2-D weight matrix of the encoder and decoder and the token embedding. Convolutions
stay float16, positional embeddings, biases and norms float32, as whisper.cpp expects.
The header's ftype becomes the quantized one (plus ggml's quantization version x 1000).
"""
import struct
import sys

import numpy as np

# ggml_type ids and ggml_ftype ids (ggml.h).
TYPES = {"q8_0": (8, 7), "q5_0": (6, 8)}
GGML_QNT_VERSION = 2
GGML_QNT_VERSION_FACTOR = 1000
KEEP = {"encoder.positional_embedding", "decoder.positional_embedding"}


def q8_0(x):
    """Blocks of 32: float16 scale, 32 int8."""
    b = x.reshape(-1, 32).astype(np.float32)
    amax = np.abs(b).max(axis=1)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
    q = np.round(b * inv[:, None]).astype(np.int8)
    out = np.empty((b.shape[0], 34), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def q5_0(x):
    """Blocks of 32: float16 scale, 32 high bits, 16 bytes of low nibbles."""
    b = x.reshape(-1, 32).astype(np.float32)
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(b.shape[0]), idx]
    d = mx / -16.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0)
    # C truncates toward zero after adding 16.5 (always positive here).
    xi = np.minimum(31, np.trunc(b * inv[:, None] + 16.5)).astype(np.uint32)
    lo, hi = xi[:, :16], xi[:, 16:]
    qs = ((lo & 0x0F) | ((hi & 0x0F) << 4)).astype(np.uint8)
    bits = ((xi & 0x10) >> 4).astype(np.uint32)  # bit j of qh: element j (0..31)
    qh = (bits << np.arange(32, dtype=np.uint32)).sum(axis=1, dtype=np.uint64).astype("<u4")
    out = np.empty((b.shape[0], 22), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:6] = qh.view(np.uint8).reshape(-1, 4)
    out[:, 6:] = qs
    return out.tobytes()


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in TYPES:
        sys.exit(__doc__)
    src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    ttype, ftype = TYPES[kind]
    quantize = {"q8_0": q8_0, "q5_0": q5_0}[kind]
    data = open(src, "rb").read()
    pos = 0

    def take(n):
        nonlocal pos
        chunk = data[pos : pos + n]
        if len(chunk) != n:
            raise ValueError("truncated model file")
        pos += n
        return chunk

    out = bytearray()
    magic = take(4)
    if struct.unpack("<i", magic)[0] != 0x67676D6C:
        raise ValueError("not a ggml whisper model")
    hparams = list(struct.unpack("<11i", take(44)))
    if hparams[10] % GGML_QNT_VERSION_FACTOR != 1:
        raise ValueError(f"expected a float16 model (ftype 1), got ftype {hparams[10]}")
    hparams[10] = ftype + GGML_QNT_VERSION * GGML_QNT_VERSION_FACTOR
    out += magic + struct.pack("<11i", *hparams)
    n_mel, n_fft = struct.unpack("<ii", take(8))
    out += struct.pack("<ii", n_mel, n_fft) + take(4 * n_mel * n_fft)
    (n_vocab,) = struct.unpack("<i", take(4))
    out += struct.pack("<i", n_vocab)
    for _ in range(n_vocab):
        (n,) = struct.unpack("<i", take(4))
        out += struct.pack("<i", n) + take(n)
    count = 0
    while pos < len(data):
        n_dims, name_len, t = struct.unpack("<iii", take(12))
        dims = struct.unpack(f"<{n_dims}i", take(4 * n_dims))
        name = take(name_len)
        n = int(np.prod(dims))
        size = {0: 4, 1: 2}[t]
        raw = take(n * size)
        if n_dims == 2 and t == 1 and name.decode() not in KEEP and dims[0] % 32 == 0:
            raw = quantize(np.frombuffer(raw, dtype="<f2"))
            t = ttype
            count += 1
        out += struct.pack("<iii", n_dims, name_len, t) + struct.pack(f"<{n_dims}i", *dims) + name + raw
    with open(dst, "wb") as f:
        f.write(out)
    print(f"[ggml_quantize] {count} tensors to {kind}: {len(data) / 1e6:.0f} MB -> {len(out) / 1e6:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except (ValueError, OSError) as e:
        print(f"[ggml_quantize] error: {e}", file=sys.stderr)
        sys.exit(1)
