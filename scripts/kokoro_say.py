"""Says French text with Kokoro-82M and its French voice ff_siwis into WAV files (the test
voice of issue 40; installed by scripts/fetch-french-test-voice; run through scripts/kokoro-say,
which picks the venv's Python).

The pipeline is Kokoro's own: misaki's EspeakG2P("fr-fr") turns text into phonemes, the
vocabulary turns phonemes into tokens, the style vector is the voice's row for that many
tokens, and the ONNX model says it at 24 kHz.
"""

import argparse
import json
import os
import re
import sys
import wave

import numpy as np

NATIVE_RATE = 24_000
# The model's context is 512 tokens, two of them the padding around the phonemes.
MAX_TOKENS = 500

# espeak-ng switches to English for words it takes for English, and a few names it reads
# wrongly: they are respelled the way a French speaker says them before phonemising.
RESPELL = {
    "arthur": "Artur",
}


def respell(text: str) -> str:
    def one(m: re.Match) -> str:
        word = m.group(0)
        new = RESPELL.get(word.lower())
        if new is None:
            return word
        return new if word[0].isupper() else new.lower()

    return re.sub(r"[^\W\d_]+", one, text)


def resample(audio: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    """Band-limited resampling through the spectrum (the clips are short and start and end
    near silence, so the wrap-around of the FFT does not matter)."""
    if from_hz == to_hz or audio.size == 0:
        return audio
    n_out = int(round(audio.size * to_hz / from_hz))
    spectrum = np.fft.rfft(audio)
    keep = min(spectrum.size, n_out // 2 + 1)
    return (np.fft.irfft(spectrum[:keep], n_out) * (n_out / audio.size)).astype(np.float32)


class Voice:
    def __init__(self, home: str):
        # Imported here: misaki loads espeak-ng on import.
        import onnxruntime as ort
        from misaki import espeak

        self.g2p = espeak.EspeakG2P(language="fr-fr")
        with open(os.path.join(home, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)["vocab"]
        self.style = np.fromfile(os.path.join(home, "ff_siwis.bin"), dtype=np.float32).reshape(-1, 1, 256)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(os.environ.get("KOKORO_THREADS", "2"))
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            os.path.join(home, "kokoro-v1.0.int8.onnx"), sess_options=opts, providers=["CPUExecutionProvider"]
        )

    def phonemes(self, text: str) -> str:
        ps, _ = self.g2p(respell(text))
        return ps

    def _say(self, phonemes: str, speed: float) -> np.ndarray:
        tokens = [self.vocab[c] for c in phonemes if c in self.vocab][:MAX_TOKENS]
        if not tokens:
            return np.zeros(0, np.float32)
        audio = self.session.run(
            None,
            {
                "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                "style": self.style[min(len(tokens), len(self.style) - 1)],
                "speed": np.array([speed], dtype=np.float32),
            },
        )[0]
        return np.asarray(audio, np.float32).ravel()

    def say(self, text: str, speed: float = 1.0) -> np.ndarray:
        """24 kHz samples in [-1, 1]; long text is said sentence by sentence."""
        pieces = []
        for sentence in re.split(r"(?<=[.!?…])\s+", text.strip()):
            if sentence:
                pieces.append(self._say(self.phonemes(sentence), speed))
                pieces.append(np.zeros(int(0.25 * NATIVE_RATE), np.float32))
        return np.concatenate(pieces[:-1]) if pieces else np.zeros(0, np.float32)


def write_wav(path: str, audio: np.ndarray, rate: int) -> None:
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
    tmp = f"{path}.tmp{os.getpid()}"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    os.replace(tmp, path)


def main() -> int:
    ap = argparse.ArgumentParser(
        prog="kokoro-say",
        description="Says French text with Kokoro-82M (voice ff_siwis) into a mono 16-bit WAV.",
    )
    ap.add_argument("text", nargs="?", help="the French text to say")
    ap.add_argument("out", nargs="?", help="the WAV file to write")
    ap.add_argument("--speed", type=float, default=1.0, help="speaking rate (1.0 = the voice's own; 0.8 slower)")
    ap.add_argument("--rate", type=int, default=16_000, help="sample rate of the WAV (16000, the default, or 24000, Kokoro's own)")
    ap.add_argument("--batch", action="store_true", help="read lines « OUT.wav<TAB>text » on standard input; one model load for all")
    ap.add_argument("--phonemes", action="store_true", help="print the phonemes instead of saying them")
    args = ap.parse_args()
    if args.rate < 8_000 or args.rate > 48_000:
        ap.error("--rate must be between 8000 and 48000")
    if not 0.5 <= args.speed <= 2.0:
        ap.error("--speed must be between 0.5 and 2.0")
    home = os.environ["KOKORO_HOME"]
    if args.batch:
        jobs = []
        for n, line in enumerate(sys.stdin, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            out, tab, text = line.partition("\t")
            if not tab or not text.strip():
                print(f"kokoro-say: line {n}: expected « OUT.wav<TAB>text »", file=sys.stderr)
                return 2
            jobs.append((out, text))
    elif args.text is None or (args.out is None and not args.phonemes):
        ap.error("give the text and the WAV file (or --batch)")
    else:
        jobs = [(args.out, args.text)]
    voice = Voice(home)
    for out, text in jobs:
        if args.phonemes:
            print(voice.phonemes(text))
            continue
        audio = voice.say(text, args.speed)
        write_wav(out, resample(audio, NATIVE_RATE, args.rate), args.rate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
