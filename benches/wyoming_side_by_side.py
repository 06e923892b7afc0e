"""Home Assistant's voice protocol, side by side (issue 31): Arthur's Wyoming speech-to-text
and text-to-speech against wyoming-faster-whisper and wyoming-piper, measured by wyoming-bench
(PyPI) as a client would see them, on the same machine, the same audio and the same models:

- speech-to-text: the 30 English commands of audio/tests/data/commands_en.txt said by
  espeak-ng; Arthur runs whisper.cpp on ggml-base.bin, wyoming-faster-whisper runs
  CTranslate2 on the same base weights (models/bench-setup joins them), both greedy
  (beam 1), both on 2 threads, English;
- text-to-speech: wyoming-bench's own texts (1 to 4 sentences), both modes (one `synthesize`;
  the text streamed sentence by sentence); both speak the Piper voice en_US-joe-medium on the
  same ONNX Runtime version.

Run by scripts/wyoming-bench, which installs what it needs; prints wyoming-bench's summaries
and the ratios Arthur / the reference server (below 1: Arthur is faster).

Figures (2 shared cores, load average 7 to 9 from other work, so ±30 %; two runs, 2 and 1
rounds after a warm-up; the servers are measured one after the other):
- speech-to-text, 2.5 s commands: Arthur 4.6–7.3 s mean per command against 1.7 s, 2.7–4.3×
  the time of faster-whisper int8; WER 19.2 % against 14.3 %. The gap is the engine, not
  the protocol: `cargo bench -p arthur-audio --bench stt` on the same clips, in the same
  hour, gives whisper.cpp (audio_ctx 500) 4.0× faster-whisper int8 and 1.16× its float32.
- text-to-speech: time to first audio 0.66–0.98× wyoming-piper's in one `synthesize`
  (0.39–0.40 s against 0.41–0.58 s), 0.97–1.06× when streamed; real-time factor 0.66–1.12×:
  even, within the noise.
"""

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wyoming.asr import Transcribe
from wyoming_bench.const import MODE_NON_STREAMING, MODE_STREAMING
from wyoming_bench.stt.bench import bench_stt_server
from wyoming_bench.stt.corpus import load_corpus
from wyoming_bench.stt.reporting import print_stt_summary, summarize_stt_mode
from wyoming_bench.tts.bench import bench_server
from wyoming_bench.tts.reporting import print_summary, summarize_mode
from wyoming_bench.tts.texts import DEFAULT_TEXTS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, name: str, bound: float = 300.0) -> None:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{name} exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{name} did not listen on {port} within {bound:.0f} s")


def make_corpus(commands: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lines = [l.strip() for l in commands.read_text(encoding="utf-8").splitlines() if l.strip()]
    for i, text in enumerate(lines):
        subprocess.run(["espeak-ng", "-v", "en", "-s", "150", "-w", str(out / f"{i:03}.wav"), text], check=True)
        (out / f"{i:03}.txt").write_text(text, encoding="utf-8")


def ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else "n/a"


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--arthur", required=True, help="the arthur binary (release)")
    p.add_argument("--ct2", required=True, help="CTranslate2 base weights (models/bench-setup)")
    p.add_argument("--models", required=True, help="Arthur's model directory (ggml-base.bin, the joe voice)")
    p.add_argument("--commands", required=True, help="one command per line")
    p.add_argument("--rounds", type=int, default=int(os.environ.get("WYOMING_BENCH_ROUNDS", "3")))
    p.add_argument("--compute-type", default=os.environ.get("WYOMING_BENCH_COMPUTE", "int8"),
                   help="faster-whisper's compute type (int8, float32)")
    args = p.parse_args()
    models = Path(args.models)
    work = Path(tempfile.mkdtemp(prefix="wyoming-bench-"))
    make_corpus(Path(args.commands), work / "corpus")
    (work / "arthur.toml").write_text("")

    ports = {"arthur": free_port(), "faster-whisper": free_port(), "piper": free_port()}
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(work),
        "ARTHUR_CONFIG": str(work / "arthur.toml"),
        "ARTHUR_DATA_DIR": str(work / "data"),
        "ARTHUR_WEB_ADDR": "127.0.0.1:0",
        "ARTHUR_WYOMING_ADDR": f"127.0.0.1:{ports['arthur']}",
        "ARTHUR_STT_LANG": "en",
        "ARTHUR_WHISPER_MODEL": str(models / "ggml-base.bin"),
        "ARTHUR_PIPER_VOICE": str(models / "en_US-joe-medium.onnx"),
        "ARTHUR_MODEL_DIR": str(models),
    }
    python = sys.executable
    procs = {
        "arthur": subprocess.Popen([args.arthur, "serve", "--no-voice"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=open(work / "arthur.log", "w")),
        "faster-whisper": subprocess.Popen(
            [python, "-m", "wyoming_faster_whisper", f"--uri=tcp://127.0.0.1:{ports['faster-whisper']}",
             "--model", args.ct2, "--data-dir", str(work / "fw"), "--local-files-only", "--language", "en",
             "--beam-size", "1", "--cpu-threads", "2", "--compute-type", args.compute_type,
             "--stt-library", "faster-whisper"],
            stdout=subprocess.DEVNULL, stderr=open(work / "faster-whisper.log", "w")),
        "piper": subprocess.Popen(
            [python, "-m", "wyoming_piper", f"--uri=tcp://127.0.0.1:{ports['piper']}",
             "--voice", "en_US-joe-medium", "--data-dir", str(models), "--local-files-only"],
            stdout=subprocess.DEVNULL, stderr=open(work / "piper.log", "w")),
    }
    try:
        for name, proc in procs.items():
            wait_port(ports[name], proc, name)
        timeouts = dict(connect_timeout=10.0, read_timeout=120.0)

        print(f"== speech-to-text: {args.rounds} rounds of 30 commands (faster-whisper {args.compute_type})", flush=True)
        samples = load_corpus(work / "corpus")
        stt = {}
        # Keyed by name: wyoming-bench's tables print the keys.
        for name in ["arthur", "faster-whisper"]:
            stt[name] = await bench_stt_server(
                "127.0.0.1", ports[name], samples, [MODE_NON_STREAMING], Transcribe(language="en"),
                rounds=args.rounds, warmup=1, verbose=False, chunk_samples=1024, chunk_delay=0.0, **timeouts)
        print_stt_summary(list(stt), stt)

        print(f"\n== text-to-speech: {args.rounds} rounds of {len(DEFAULT_TEXTS)} texts, both modes", flush=True)
        tts = {}
        for name in ["arthur", "piper"]:
            tts[name] = await bench_server(
                "127.0.0.1", ports[name], DEFAULT_TEXTS, [MODE_NON_STREAMING, MODE_STREAMING], None, None,
                rounds=args.rounds, warmup=1, verbose=False, chunk_delay=0.0, **timeouts)
        print_summary(list(tts), tts)

        a, b = summarize_stt_mode(stt["arthur"], MODE_NON_STREAMING), summarize_stt_mode(stt["faster-whisper"], MODE_NON_STREAMING)
        print("\n== ratios, Arthur / reference (below 1: Arthur is faster)")
        print(f"speech-to-text vs wyoming-faster-whisper ({args.compute_type}): median time {ratio(a['total']['median'], b['total']['median'])}, "
              f"mean time {ratio(a['total']['mean'], b['total']['mean'])}; "
              f"WER {a['wer'] * 100:.1f}% vs {b['wer'] * 100:.1f}% ({a['ok']}/{a['ok'] + a['fail']} vs {b['ok']}/{b['ok'] + b['fail']} answered)")
        for mode in [MODE_NON_STREAMING, MODE_STREAMING]:
            x, y = summarize_mode(tts["arthur"], mode), summarize_mode(tts["piper"], mode)
            print(f"text-to-speech vs wyoming-piper [{mode}]: time to first audio {ratio(x['ttft']['median'], y['ttft']['median'])}, "
                  f"whole answer {ratio(x['total']['median'], y['total']['median'])}, "
                  f"real-time factor {ratio(x['rtf']['median'], y['rtf']['median'])} (medians; {x['ok']} vs {y['ok']} answered)")
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


asyncio.run(main())
