"""Home Assistant's Wyoming integration, played against Arthur with the reference client.

The calls are the integration's (homeassistant/components/wyoming: stt.py, tts.py,
conversation.py), made with the `wyoming` package as it makes them: one connection per
request, `describe` → `info`; `transcribe`, `audio-start`, 1,024-sample `audio-chunk`s,
`audio-stop` → `transcript`; `synthesize` → `audio-start` … `audio-stop`; the streamed
synthesis of a model's answer (`synthesize-start`, `synthesize-chunk`s, the compatibility
`synthesize`, `synthesize-stop` → audio per sentence, `synthesize-stopped`); `transcript`
with a conversation id → `handled` / `not-handled`. Plus what a careless or hostile peer
sends. Prints one JSON object with what came back; tests/wyoming.rs asserts on it.

Usage: python home_assistant.py HOST PORT SPEECH.wav OUT_DIR
"""

import asyncio
import json
import sys
import wave

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.tts import (Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped,
                         SynthesizeVoice)

HOST, PORT, SPEECH, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
TIMEOUT = 120.0  # a loaded CI machine transcribes slowly; no result is a failure, not a wait forever


async def read(client):
    return await asyncio.wait_for(client.read_event(), timeout=TIMEOUT)


async def describe():
    async with AsyncTcpClient(HOST, PORT) as c:
        await c.write_event(Describe().event())
        info = Info.from_event(await read(c))
    return {
        "asr": [{"name": p.name, "installed": p.installed,
                 "models": [{"name": m.name, "languages": m.languages} for m in p.models]} for p in info.asr],
        "tts": [{"name": p.name, "streaming": p.supports_synthesize_streaming,
                 "voices": [{"name": v.name, "languages": v.languages} for v in p.voices]} for p in info.tts],
        "handle": [{"name": p.name, "languages": [l for m in p.models for l in m.languages]} for p in info.handle],
    }


def pcm16(path):
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        return w.getframerate(), w.readframes(w.getnframes())


async def transcribe(rate, width, channels, audio, language="en"):
    """stt.py's async_process_audio_stream, in any format."""
    async with AsyncTcpClient(HOST, PORT) as c:
        await c.write_event(Transcribe(language=language).event())
        await c.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
        step = 1024 * width * channels
        for i in range(0, len(audio), step):
            await c.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=audio[i:i + step]).event())
        await c.write_event(AudioStop().event())
        while True:
            event = await read(c)
            if Transcript.is_type(event.type):
                return {"type": "transcript", "text": Transcript.from_event(event).text}
            if Error.is_type(event.type):
                return {"type": "error", "text": event.data.get("text"), "code": event.data.get("code")}


async def synthesize(text, voice=None):
    """tts.py's async_get_tts_audio: audio until audio-stop; the WAV kept for a round trip."""
    async with AsyncTcpClient(HOST, PORT) as c:
        await c.write_event(Synthesize(text=text, voice=voice).event())
        out = {"events": [], "formats": set(), "audio": b""}
        while True:
            event = await read(c)
            out["events"].append(event.type)
            if AudioChunk.is_type(event.type):
                chunk = AudioChunk.from_event(event)
                out["formats"].add((chunk.rate, chunk.width, chunk.channels))
                out["audio"] += chunk.audio
            elif AudioStart.is_type(event.type):
                start = AudioStart.from_event(event)
                out["start"] = [start.rate, start.width, start.channels]
            elif Error.is_type(event.type):
                out["error"] = event.data.get("text")
            if AudioStop.is_type(event.type):
                break
    return out


async def synthesize_streamed():
    """A model's answer streamed to the voice, as Home Assistant sends it. The second piece is
    written only once the first sentence came back as audio: a server that waited for the
    whole text would never answer (and the timeout says so)."""
    result = {"first_before_rest": False, "events": []}
    async with AsyncTcpClient(HOST, PORT) as c:
        await c.write_event(SynthesizeStart().event())
        await c.write_event(SynthesizeChunk(text="The first sentence is here. ").event())
        try:
            while True:
                event = await read(c)
                result["events"].append(event.type)
                if AudioStop.is_type(event.type):
                    result["first_before_rest"] = True
                    break
        except asyncio.TimeoutError:
            return result
        for piece in ["And the second", " one follows."]:
            await c.write_event(SynthesizeChunk(text=piece).event())
        await c.write_event(Synthesize(text="The first sentence is here. And the second one follows.").event())
        await c.write_event(SynthesizeStop().event())
        while True:
            event = await read(c)
            result["events"].append(event.type)
            if SynthesizeStopped.is_type(event.type):
                break
    return result


async def handle(text, conversation_id):
    """conversation.py's async_process against a handle service."""
    async with AsyncTcpClient(HOST, PORT) as c:
        await c.write_event(Transcript(text, context={"conversation_id": conversation_id}).event())
        while True:
            event = await read(c)
            if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                return {"type": event.type, "text": event.data.get("text"), "context": event.data.get("context")}
            if Error.is_type(event.type):
                return {"type": "error", "text": event.data.get("text")}


async def careless_peer():
    """A chunk in a format that does not exist, then a line that is not an event."""
    out = {}
    reader, writer = await asyncio.open_connection(HOST, PORT)
    await async_write_event(Event(type="transcribe", data={}), writer)
    await async_write_event(Event(type="audio-start", data={"rate": 16000, "width": 2, "channels": 1}), writer)
    await async_write_event(Event(type="audio-chunk", data={"rate": 16000, "width": 9, "channels": 1},
                                  payload=b"\x00" * 90), writer)
    event = await asyncio.wait_for(async_read_event(reader), timeout=TIMEOUT)
    out["bad_width"] = {"type": event.type, "code": event.data.get("code"), "text": event.data.get("text")}
    await async_write_event(Ping(text="still there?").event(), writer)
    event = await asyncio.wait_for(async_read_event(reader), timeout=TIMEOUT)
    out["after"] = {"type": event.type, "text": Pong.from_event(event).text if Pong.is_type(event.type) else None}
    writer.write(b"this is not json\n")
    await writer.drain()
    event = await asyncio.wait_for(async_read_event(reader), timeout=TIMEOUT)
    out["garbage"] = {"type": event.type, "code": event.data.get("code")}
    out["closed_after_garbage"] = (await asyncio.wait_for(reader.read(1), timeout=TIMEOUT)) == b""
    writer.close()
    return out


async def main():
    report = {"info": await describe()}
    rate, audio = pcm16(SPEECH)
    # Home Assistant's own format first, then others it would be fair to send.
    report["transcripts"] = []
    for (to_rate, to_width, to_channels) in [(rate, 2, 1), (44100, 2, 2), (16000, 1, 1), (48000, 4, 2), (22050, 3, 1)]:
        # Rate and channels first, the width alone last: the reference's converter biases
        # 8-bit audio to unsigned before it resamples, which garbles it (audioop.ratecv
        # takes 8-bit as signed).
        resampled = AudioChunkConverter(rate=to_rate, channels=to_channels).convert(
            AudioChunk(rate=rate, width=2, channels=1, audio=audio))
        converted = AudioChunkConverter(width=to_width).convert(resampled).audio
        result = await transcribe(to_rate, to_width, to_channels, converted)
        result["format"] = [to_rate, to_width, to_channels]
        report["transcripts"].append(result)
    report["other_language"] = await transcribe(rate, 2, 1, audio, language="fr")

    synth = await synthesize("Remind me to call the bank. It is done.")
    report["synthesize"] = {"start": synth.get("start"), "formats": sorted(synth["formats"]),
                            "seconds": len(synth["audio"]) / 2 / synth["start"][0],
                            "first": synth["events"][0], "last": synth["events"][-1], "error": synth.get("error")}
    # The round trip: Arthur's voice, heard by Arthur's ears.
    report["round_trip"] = await transcribe(synth["start"][0], 2, 1, synth["audio"])
    named = await synthesize("Named voice.", SynthesizeVoice(name="en_US-joe-medium"))
    report["named_voice_seconds"] = len(named["audio"]) / 2 / named["start"][0]
    unknown = await synthesize("Unknown voice.", SynthesizeVoice(name="no-such-voice"))
    report["unknown_voice"] = {"error": unknown.get("error"), "last": unknown["events"][-1]}
    report["streamed"] = await synthesize_streamed()

    report["handled"] = await handle("rappelle-moi d'appeler la banque demain à 9 h", "ha-conversation-1")
    report["not_handled"] = await handle("le rappel 42 est fait", "ha-conversation-1")
    # A question answered by the next transcript of the same conversation (a frame).
    report["frame_ask"] = await handle("mets un minuteur", "ha-conversation-2")
    report["frame_elsewhere"] = await handle("cinq minutes", "ha-conversation-3")
    report["frame_fill"] = await handle("cinq minutes", "ha-conversation-2")
    report["careless"] = await careless_peer()
    print(json.dumps(report, ensure_ascii=False))


asyncio.run(main())
