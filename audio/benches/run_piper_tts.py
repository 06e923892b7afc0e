"""Synthesises answers with the Python piper-tts (the reference for Arthur's Piper TTS);
prints one JSON object on stdout:

  {"load_s": S, "items": [{"text": T, "synth_s": S, "first_audio_s": S, "audio_s": S}, ...]}

Usage: python run_piper_tts.py VOICE.onnx SENTENCES_FILE [--threads N]

SENTENCES_FILE has one answer per line (an answer may have several sentences; blank lines
are skipped). Each line is synthesised whole with `PiperVoice.synthesize`, which in
piper-tts 1.8 (what models/bench-setup installs) phonemizes the whole text with espeak-ng,
then runs the model once per sentence and yields one AudioChunk (float32 samples) per
sentence: first_audio_s is the time to the first chunk, synth_s the time to the last one,
audio_s the duration of all the chunks. The voice is loaded once (load_s, not counted in
the items) and warmed up once on a short sentence. Defaults of the voice's .onnx.json
(noise, length scale) and piper's SynthesisConfig (peak normalisation) apply.

Threads: `PiperVoice.load` takes no onnxruntime.SessionOptions (it builds a default one,
where ONNX Runtime picks one intra-op thread per physical core), so the voice is built here
the way load() builds it (`PiperVoice(session=..., config=PiperConfig.from_dict(...))`,
both public) with a session whose intra_op_num_threads is N (inter-op 1: the session runs
sequentially). OMP_NUM_THREADS would not do: the onnxruntime wheel is not built with OpenMP.
"""
import argparse
import json
import os
import sys
import time

import onnxruntime
from piper import PiperConfig, PiperVoice


def load_voice(model_path: str, threads: int) -> PiperVoice:
    with open(f"{model_path}.json", encoding="utf-8") as f:
        config = PiperConfig.from_dict(json.load(f))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    session = onnxruntime.InferenceSession(model_path, sess_options=options,
                                           providers=["CPUExecutionProvider"])
    return PiperVoice(session=session, config=config)


def synthesize(voice: PiperVoice, text: str) -> dict:
    samples = 0
    sample_rate = voice.config.sample_rate
    first = None
    start = time.perf_counter()
    for chunk in voice.synthesize(text):
        if first is None:
            first = time.perf_counter() - start
        samples += len(chunk.audio_float_array)
        sample_rate = chunk.sample_rate
    total = time.perf_counter() - start
    return {
        "text": text,
        "synth_s": round(total, 6),
        "first_audio_s": round(first if first is not None else total, 6),
        "audio_s": round(samples / sample_rate, 6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("voice", help="Piper voice .onnx (its .onnx.json next to it)")
    parser.add_argument("sentences", help="text file, one answer per line")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads (default 1)")
    args = parser.parse_args()

    lines = [l.strip() for l in open(args.sentences, encoding="utf-8").read().split("\n")]
    lines = [l for l in lines if l]

    start = time.perf_counter()
    voice = load_voice(args.voice, args.threads)
    load_s = time.perf_counter() - start
    print(f"piper-tts on onnxruntime {onnxruntime.__version__}, "
          f"intra_op_num_threads={voice.session.get_session_options().intra_op_num_threads}, "
          f"load {load_s:.3f} s", file=sys.stderr)

    synthesize(voice, "Hello there.")  # warm-up (espeak-ng initialisation, first inference)
    items = [synthesize(voice, line) for line in lines]
    print(json.dumps({"load_s": round(load_s, 6), "items": items}, ensure_ascii=False))


if __name__ == "__main__":
    main()
