"""Pipecat's own Smart Turn v3 features: the reference `audio/tests/smart_turn.rs` checks
the Rust port (`arthur_audio::smart_turn`) against.

  smart_turn_reference.py WHEEL AUDIO.f32 FEATURES.f32 [MODEL.onnx]
      features of a raw audio file (16 kHz mono float32 little-endian) into FEATURES.f32
      (80 x 800 float32, mel band major); with MODEL.onnx and onnxruntime importable,
      also prints the probability pipecat's LocalSmartTurnAnalyzerV3 computes.
  smart_turn_reference.py WHEEL --fixture > smart_turn_features.txt
      the fast tier's fixture: the features of the test's deterministic chirp.

WHEEL is the pipecat-ai wheel `models/fetch` downloads. Its `_whisper_features.py` is run
as it ships, read from the wheel (importing the package would need pipecat's
dependencies); it needs numpy only.
"""

import sys
import types
import zipfile

import numpy as np

WINDOW = 8 * 16000

with zipfile.ZipFile(sys.argv[1]) as z:
    source = z.read("pipecat/audio/turn/smart_turn/_whisper_features.py").decode()
module = types.ModuleType("_whisper_features")
exec(compile(source, "_whisper_features.py", "exec"), module.__dict__)


def window(audio):
    """LocalSmartTurnAnalyzerV3._predict_endpoint: the last 8 s, zeros in front."""
    if len(audio) > WINDOW:
        return audio[-WINDOW:]
    return np.pad(audio, (WINDOW - len(audio), 0), mode="constant", constant_values=0)


def chirp():
    """The test's signal (`chirp()` in audio/tests/smart_turn.rs): 3 s of a rising tone
    in a half-sine envelope, with a little LCG noise."""
    n, state = 48000, 12345
    x = np.empty(n, dtype=np.float64)
    for i in range(n):
        state = (1664525 * state + 1013904223) % (1 << 32)
        noise = (state >> 8) / float(1 << 24) - 0.5
        t = i / 16000.0
        x[i] = 0.3 * np.sin(2 * np.pi * (200.0 + 400.0 * t) * t) * np.sin(np.pi * t / 3.0) + 0.05 * noise
    return x.astype(np.float32)


if sys.argv[2] == "--fixture":
    f = module.compute_whisper_log_mel_features(window(chirp()), do_normalize=True)
    print("# pipecat-ai 1.14.0 _whisper_features.py on the chirp of audio/tests/smart_turn.rs")
    print("# line 3: the mean of each mel band; line 4: every 79th feature (band major)")
    print(" ".join(f"{v:.6f}" for v in f.mean(axis=1)))
    print(" ".join(f"{v:.6f}" for v in f.reshape(-1)[::79]))
    sys.exit(0)

audio = np.fromfile(sys.argv[2], dtype="<f4")
features = module.compute_whisper_log_mel_features(window(audio), do_normalize=True)
features.astype("<f4").tofile(sys.argv[3])

if len(sys.argv) > 4:
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit(0)
    so = ort.SessionOptions()
    so.inter_op_num_threads = 1
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(sys.argv[4], sess_options=so)
    out = session.run(None, {"input_features": np.expand_dims(features, 0)})
    print(float(out[0][0].item()))
