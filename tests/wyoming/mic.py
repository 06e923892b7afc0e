"""A microphone for wyoming-satellite's --mic-command: raw 16 kHz 16-bit mono speech from a
file, in real time, then silence in real time for as long as the satellite runs (a real
microphone never stops). It waits for a file to exist before speaking, so that the test
speaks once the satellite streams to Arthur (before that, the satellite drops its audio).

Usage: python mic.py SPEECH.raw GO_FILE
"""

import os
import sys
import time

speech, go = sys.argv[1], sys.argv[2]
data = open(speech, "rb").read()
chunk = 2048  # 1,024 samples: what wyoming-satellite reads at a time
out = sys.stdout.buffer
start, sent, spoken = time.monotonic(), 0, 0
while True:
    if spoken < len(data) and os.path.exists(go):
        piece = data[spoken:spoken + chunk]
        spoken += len(piece)
        piece += bytes(chunk - len(piece))
    else:
        piece = bytes(chunk)
    out.write(piece)
    out.flush()
    sent += chunk
    time.sleep(max(0.0, start + sent / 32000.0 - time.monotonic()))
