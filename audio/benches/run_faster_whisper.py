"""Transcribes the benchmark corpus with faster-whisper; prints one line the Rust bench reads.

Usage: python run_faster_whisper.py CORPUS_DIR MODEL_DIR COMPUTE_TYPE THREADS [BEAM_SIZE]
(BEAM_SIZE 1, greedy, by default).
"""
import sys, time
from faster_whisper import WhisperModel

corpus, model_dir, compute_type, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
beam_size = int(sys.argv[5]) if len(sys.argv) > 5 else 1
model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=threads)
count = len([l for l in open(f"{corpus}/commands.txt", encoding="utf-8").read().split("\n") if l.strip()])
texts = []
start = time.perf_counter()
for i in range(count):
    segments, _ = model.transcribe(f"{corpus}/{i}.wav", language="en", beam_size=beam_size, without_timestamps=True,
                                   vad_filter=False, condition_on_previous_text=False)
    texts.append("".join(s.text for s in segments).strip().replace("\t", " "))
elapsed = time.perf_counter() - start
print(f"SECONDS\t{elapsed:.3f}")
for t in texts:
    print(f"TEXT\t{t}")
