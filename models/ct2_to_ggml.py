#!/usr/bin/env python3
"""Convert a CTranslate2 Whisper model (model.bin + vocabulary.txt) to whisper.cpp's ggml format.

Only numpy is needed. Usage:

    ct2_to_ggml.py MODEL_DIR_OR_BIN_PARTS... --vocab vocabulary.txt --out ggml-base.bin [--f32]

Several model.bin parts (e.g. model.bin.part1 model.bin.part2) are concatenated in the
order given before parsing.

CTranslate2 model.bin (binary version >= 4) layout, little endian:
    u32 version; str spec_name; u32 spec_revision; u32 n_variables;
    n_variables x { str name; u8 rank; u32 dims[rank]; u8 dtype; u32 n_bytes; bytes }
    u32 n_aliases; n_aliases x { str alias; str target }
where str is u16 length (including the trailing NUL) followed by the bytes and dtype is
0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16.

whisper.cpp ggml layout: magic "ggml", 11 i32 hyper-parameters, the mel filter bank
(i32 n_mel, i32 n_fft, f32 values), the BPE vocabulary (i32 count, then i32 length + bytes;
whisper.cpp adds the special tokens itself), then the tensors
(i32 n_dims, i32 name_length, i32 ftype, i32 dims innermost first, name, data).
"""

import argparse
import re
import struct
import sys

import numpy as np

CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def log(msg):
    print(f"[ct2_to_ggml] {msg}", file=sys.stderr, flush=True)


class Reader:
    def __init__(self, buf):
        self.buf = memoryview(buf)
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise ValueError(f"truncated model.bin at offset {self.pos} (wanted {n} bytes)")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def string(self):
        n = self.u16()
        raw = bytes(self.take(n))
        return raw.rstrip(b"\0").decode("utf-8")


def read_ct2(buf):
    r = Reader(buf)
    version = r.u32()
    if version < 4:
        raise ValueError(f"unsupported CTranslate2 binary version {version} (need >= 4)")
    spec = r.string()
    revision = r.u32()
    log(f"CTranslate2 binary version {version}, spec {spec} revision {revision}")
    if spec != "WhisperSpec":
        raise ValueError(f"not a Whisper model: spec {spec!r}")
    variables = {}
    for _ in range(r.u32()):
        name = r.string()
        rank = r.u8()
        dims = [r.u32() for _ in range(rank)]
        dtype = r.u8()
        n_bytes = r.u32()
        data = r.take(n_bytes)
        if dtype not in CT2_DTYPES:
            raise ValueError(f"{name}: unsupported dtype id {dtype} (bfloat16/int8 weights are not handled)")
        arr = np.frombuffer(data, dtype=CT2_DTYPES[dtype]).reshape(dims) if dims else np.frombuffer(data, CT2_DTYPES[dtype])
        variables[name] = arr
    for _ in range(r.u32()):
        alias = r.string()
        target = r.string()
        variables[alias] = variables[target]
    if r.pos != len(r.buf):
        raise ValueError(f"{len(r.buf) - r.pos} trailing bytes after the model")
    return variables


def bytes_to_unicode():
    """GPT-2's reversible byte <-> printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def read_vocab(path):
    byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
    with open(path, encoding="utf-8") as f:
        tokens = [line.rstrip("\n") for line in f]
    if "<|endoftext|>" not in tokens:
        raise ValueError(f"{path}: no <|endoftext|> token")
    bpe = tokens[: tokens.index("<|endoftext|>")]
    out = []
    for tok in bpe:
        try:
            out.append(bytes(byte_decoder[c] for c in tok))
        except KeyError as e:
            raise ValueError(f"{path}: token {tok!r} is not GPT-2 byte-level text") from e
    return out, len(tokens)


def mel_filters(sr=16000, n_fft=400, n_mels=80):
    """librosa.filters.mel(sr, n_fft, n_mels) with the Slaney mel scale and norm: what Whisper uses."""
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0

    def hz_to_mel(f):
        f = np.asarray(f, dtype=np.float64)
        mel = f / f_sp
        return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, mel)

    def mel_to_hz(m):
        m = np.asarray(m, dtype=np.float64)
        return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)

    fftfreqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, None]
    return weights.astype(np.float32)


def map_tensors(v):
    """CTranslate2 names -> whisper.cpp names, fused projections split."""
    out = {}

    def ln(src, dst):
        out[f"{dst}.weight"] = v[f"{src}/gamma"]
        out[f"{dst}.bias"] = v[f"{src}/beta"]

    def lin(src, dst, bias=True):
        out[f"{dst}.weight"] = v[f"{src}/weight"]
        if bias:
            out[f"{dst}.bias"] = v[f"{src}/bias"]

    for name in v:
        if name.endswith("/weight_scale") or (v[name].dtype == np.int8 and v[name].ndim >= 2):
            raise ValueError(f"{name}: quantised CTranslate2 models are not supported")

    # Encoder. `encoder/layer_norm` must not be taken for a layer: match `layer_<digits>/` only.
    out["encoder.conv1.weight"] = v["encoder/conv1/weight"]
    out["encoder.conv1.bias"] = v["encoder/conv1/bias"]
    out["encoder.conv2.weight"] = v["encoder/conv2/weight"]
    out["encoder.conv2.bias"] = v["encoder/conv2/bias"]
    out["encoder.positional_embedding"] = v["encoder/position_encodings/encodings"]
    ln("encoder/layer_norm", "encoder.ln_post")
    layer_re = re.compile(r"^(encoder|decoder)/layer_(\d+)/")
    n_layers = {"encoder": 0, "decoder": 0}
    for name in v:
        m = layer_re.match(name)
        if m:
            n_layers[m.group(1)] = max(n_layers[m.group(1)], int(m.group(2)) + 1)

    for i in range(n_layers["encoder"]):
        s, d = f"encoder/layer_{i}", f"encoder.blocks.{i}"
        ln(f"{s}/self_attention/layer_norm", f"{d}.attn_ln")
        split_qkv(v, f"{s}/self_attention/linear_0", f"{d}.attn", out)
        lin(f"{s}/self_attention/linear_1", f"{d}.attn.out")
        ln(f"{s}/ffn/layer_norm", f"{d}.mlp_ln")
        lin(f"{s}/ffn/linear_0", f"{d}.mlp.0")
        lin(f"{s}/ffn/linear_1", f"{d}.mlp.2")

    out["decoder.positional_embedding"] = v["decoder/position_encodings/encodings"]
    out["decoder.token_embedding.weight"] = v["decoder/embeddings/weight"]
    ln("decoder/layer_norm", "decoder.ln")
    for i in range(n_layers["decoder"]):
        s, d = f"decoder/layer_{i}", f"decoder.blocks.{i}"
        ln(f"{s}/self_attention/layer_norm", f"{d}.attn_ln")
        split_qkv(v, f"{s}/self_attention/linear_0", f"{d}.attn", out)
        lin(f"{s}/self_attention/linear_1", f"{d}.attn.out")
        ln(f"{s}/attention/layer_norm", f"{d}.cross_attn_ln")
        lin(f"{s}/attention/linear_0", f"{d}.cross_attn.query")
        w = v[f"{s}/attention/linear_1/weight"]
        b = v[f"{s}/attention/linear_1/bias"]
        n = w.shape[0] // 2
        out[f"{d}.cross_attn.key.weight"] = w[:n]
        out[f"{d}.cross_attn.value.weight"] = w[n:]
        out[f"{d}.cross_attn.value.bias"] = b[n:]
        lin(f"{s}/attention/linear_2", f"{d}.cross_attn.out")
        ln(f"{s}/ffn/layer_norm", f"{d}.mlp_ln")
        lin(f"{s}/ffn/linear_0", f"{d}.mlp.0")
        lin(f"{s}/ffn/linear_1", f"{d}.mlp.2")
    return out, n_layers


def split_qkv(v, src, dst, out):
    w = v[f"{src}/weight"]
    b = v[f"{src}/bias"]
    n = w.shape[0] // 3
    out[f"{dst}.query.weight"] = w[:n]
    out[f"{dst}.query.bias"] = b[:n]
    out[f"{dst}.key.weight"] = w[n : 2 * n]  # whisper's key projection has no bias
    out[f"{dst}.value.weight"] = w[2 * n :]
    out[f"{dst}.value.bias"] = b[2 * n :]


def head_count(v, part, fallback_state):
    for key in (f"{part}/num_heads", f"{part}/num_heads_"):
        if key in v:
            return int(np.asarray(v[key]).reshape(-1)[0])
    # Whisper always uses 64-dimensional heads.
    return fallback_state // 64


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="+", help="model.bin, or its parts in order (concatenated)")
    ap.add_argument("--vocab", required=True, help="vocabulary.txt of the CTranslate2 model")
    ap.add_argument("--out", required=True, help="ggml file to write")
    ap.add_argument("--f32", action="store_true", help="write float32 weights (default float16)")
    args = ap.parse_args()

    buf = bytearray()
    for part in args.model:
        with open(part, "rb") as f:
            buf += f.read()
    log(f"read {len(buf) / 1e6:.1f} MB from {len(args.model)} file(s)")
    v = read_ct2(bytes(buf))
    tensors, n_layers = map_tensors(v)
    tokens, n_vocab = read_vocab(args.vocab)

    emb = v["decoder/embeddings/weight"]
    if emb.shape[0] != n_vocab:
        raise ValueError(f"embedding rows {emb.shape[0]} != vocabulary size {n_vocab}")
    n_audio_ctx, n_audio_state = v["encoder/position_encodings/encodings"].shape
    n_text_ctx, n_text_state = v["decoder/position_encodings/encodings"].shape
    n_mels = v["encoder/conv1/weight"].shape[1]
    use_f16 = not args.f32
    hparams = [
        n_vocab,
        n_audio_ctx,
        n_audio_state,
        head_count(v, "encoder", n_audio_state),
        n_layers["encoder"],
        n_text_ctx,
        n_text_state,
        head_count(v, "decoder", n_text_state),
        n_layers["decoder"],
        n_mels,
        1 if use_f16 else 0,
    ]
    log(
        "hparams n_vocab={} n_audio_ctx={} n_audio_state={} n_audio_head={} n_audio_layer={} "
        "n_text_ctx={} n_text_state={} n_text_head={} n_text_layer={} n_mels={} ftype={}".format(*hparams)
    )
    log(f"{len(tokens)} BPE tokens, {len(tensors)} tensors")
    filters = mel_filters(n_mels=n_mels)

    with open(args.out, "wb") as f:
        f.write(struct.pack("<i", 0x67676D6C))
        f.write(struct.pack("<11i", *hparams))
        f.write(struct.pack("<ii", *filters.shape))
        f.write(filters.astype("<f4").tobytes())
        f.write(struct.pack("<i", len(tokens)))
        for tok in tokens:
            f.write(struct.pack("<i", len(tok)))
            f.write(tok)
        for name, arr in tensors.items():
            data = np.asarray(arr)
            if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
                data = data.reshape(data.shape[0], 1)
            small = data.ndim < 2 or name in (
                "encoder.conv1.bias",
                "encoder.conv2.bias",
                "encoder.positional_embedding",
                "decoder.positional_embedding",
            )
            if use_f16 and not small:
                data, ftype = data.astype("<f2"), 1
            else:
                data, ftype = data.astype("<f4"), 0
            raw = name.encode("utf-8")
            f.write(struct.pack("<iii", data.ndim, len(raw), ftype))
            f.write(struct.pack(f"<{data.ndim}i", *reversed(data.shape)))
            f.write(raw)
            f.write(np.ascontiguousarray(data).tobytes())
    log(f"wrote {args.out}")


if __name__ == "__main__":
    try:
        main()
    except (ValueError, KeyError, OSError) as e:
        log(f"error: {e!r}")
        sys.exit(1)
