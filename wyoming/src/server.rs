//! The Wyoming server of `arthur serve`: what Home Assistant's Wyoming integration asks of a
//! speech-to-text, text-to-speech and conversation service, on one TCP port.
//!
//! One connection, one request at a time, in the order the reference clients send them:
//! - `describe` → `info` (the services that are there);
//! - `transcribe`?, `audio-start`, `audio-chunk`*, `audio-stop` → `transcript` (any rate,
//!   width and channel count, resampled to 16 kHz);
//! - `synthesize` → `audio-start`, `audio-chunk`*, `audio-stop`, synthesised sentence by
//!   sentence so the first chunk leaves before the last sentence is made;
//!   `synthesize-start`, `synthesize-chunk`*, (`synthesize`, ignored), `synthesize-stop` →
//!   one `audio-start` … `audio-stop` per sentence as soon as it is complete, then
//!   `synthesize-stopped`;
//! - `transcript` → `handled` or `not-handled` with Arthur's answer;
//! - `ping` → `pong`; other events are dropped, as the protocol asks of servers.
//!
//! Everything received is data: a bad format or an oversized stream gets an `error` event and
//! the connection goes on; an event that cannot be read gets an `error` and the connection
//! closes (nothing after it can be framed).

use std::sync::Arc;

use arthur_audio::tts::Pcm;
use serde_json::{json, Value};
use tokio::io::{AsyncWrite, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::audio::{encode_i16, AudioFormat, ToMono16k};
use crate::event::{read_event, write_event, Event};
use crate::service::{ServiceError, Services};

/// Samples per `audio-chunk` sent (the reference servers' default).
pub const SAMPLES_PER_CHUNK: usize = 1024;
/// An utterance to transcribe longer than this (at 16 kHz) is refused: five minutes.
pub const MAX_UTTERANCE_SAMPLES: usize = 16_000 * 300;
/// Text to speak or to handle longer than this is refused.
pub const MAX_TEXT_CHARS: usize = 10_000;
/// Connections served at once; one more is told so and closed.
pub const MAX_CONNECTIONS: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: String, source: std::io::Error },
}

/// What the server runs on.
pub struct ServerDeps {
    pub listener: TcpListener,
    pub services: Services,
}

/// Listens on `addr` (already resolved by [`crate::addr::listen_addr`]).
pub async fn bind(addr: &str) -> Result<TcpListener, ServerError> {
    TcpListener::bind(addr).await.map_err(|source| ServerError::Bind { addr: addr.to_string(), source })
}

/// Serves until `shutdown`; connections in flight are closed with it.
pub async fn run(deps: ServerDeps, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            accepted = deps.listener.accept() => accepted,
            () = shutdown.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors and the like: wait a moment rather than spin.
                tracing::warn!(error = %e, "wyoming: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
        };
        let services = deps.services.clone();
        let stop = shutdown.clone();
        match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                tokio::spawn(async move {
                    tracing::debug!(%peer, "wyoming: connection");
                    serve_connection(stream, services, stop).await;
                    drop(slot);
                });
            }
            Err(_) => {
                tracing::warn!(%peer, "wyoming: too many connections, one refused");
                tokio::spawn(async move {
                    let mut stream = stream;
                    let _ = write_event(&mut stream, &error_event("too many connections", "busy")).await;
                });
            }
        }
    }
    tracing::info!("wyoming server stopped");
}

/// One client until it leaves, sends something unreadable, or the server stops.
pub async fn serve_connection(stream: TcpStream, services: Services, shutdown: CancellationToken) {
    let (read, write) = stream.into_split();
    serve_stream(read, write, services, shutdown).await
}

/// [`serve_connection`] on any pair of byte streams.
pub async fn serve_stream<R, W>(read: R, write: W, services: Services, shutdown: CancellationToken)
where
    R: tokio::io::AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(read);
    let mut writer = BufWriter::new(write);
    let mut conn = Connection::new(services);
    loop {
        let event = tokio::select! {
            event = read_event(&mut reader) => event,
            () = shutdown.cancelled() => return,
        };
        let event = match event {
            Ok(Some(event)) => event,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "wyoming: unreadable event, connection closed");
                let _ = write_event(&mut writer, &error_event(&e.to_string(), "bad-event")).await;
                return;
            }
        };
        if let Err(e) = conn.on_event(event, &mut writer).await {
            tracing::debug!(error = %e, "wyoming: client gone");
            return;
        }
    }
}

fn error_event(text: &str, code: &str) -> Event {
    Event::with_data("error", json!({"text": text, "code": code}))
}

/// A transcription being received.
struct Transcription {
    language: Option<String>,
    converter: ToMono16k,
    pcm: Vec<f32>,
    /// Something was wrong with the stream (said once): its audio is dropped until its stop.
    broken: bool,
}

/// A streamed synthesis being received.
struct Stream {
    voice: Option<String>,
    text: SentenceBuffer,
    chars: usize,
}

/// The per-connection state machine.
struct Connection {
    services: Services,
    transcription: Option<Transcription>,
    stream: Option<Stream>,
}

impl Connection {
    fn new(services: Services) -> Self {
        Self { services, transcription: None, stream: None }
    }

    async fn on_event<W: AsyncWrite + Unpin>(&mut self, event: Event, out: &mut W) -> std::io::Result<()> {
        match event.kind.as_str() {
            "describe" => write_event(out, &Event::with_data("info", self.services.info())).await,
            "ping" => write_event(out, &Event::with_data("pong", json!({"text": event.data.get("text")}))).await,
            "transcribe" => {
                self.transcription = Some(Transcription {
                    language: event.str("language").map(str::to_string),
                    converter: ToMono16k::default(),
                    pcm: Vec::new(),
                    broken: false,
                });
                Ok(())
            }
            "audio-start" => self.on_audio_start(&event, out).await,
            "audio-chunk" => self.on_audio_chunk(&event, out).await,
            "audio-stop" => self.on_audio_stop(out).await,
            "synthesize" => self.on_synthesize(&event, out).await,
            "synthesize-start" => {
                let voice = voice_name(&event);
                self.stream = Some(Stream { voice, text: SentenceBuffer::default(), chars: 0 });
                Ok(())
            }
            "synthesize-chunk" => self.on_synthesize_chunk(&event, out).await,
            "synthesize-stop" => self.on_synthesize_stop(out).await,
            "transcript" => self.on_transcript(&event, out).await,
            other => {
                tracing::debug!(event = other, "wyoming: event not served, dropped");
                Ok(())
            }
        }
    }

    async fn on_audio_start<W: AsyncWrite + Unpin>(&mut self, event: &Event, out: &mut W) -> std::io::Result<()> {
        if self.services.asr.is_none() {
            return write_event(out, &error_event("no speech-to-text here (no whisper model)", "no-asr")).await;
        }
        // `transcribe` is optional before the audio (as for the reference servers).
        let t = self.transcription.get_or_insert_with(|| Transcription {
            language: None,
            converter: ToMono16k::default(),
            pcm: Vec::new(),
            broken: false,
        });
        if let Err(e) = AudioFormat::from_event(event) {
            t.broken = true;
            return write_event(out, &error_event(&format!("audio-start: {e}"), "bad-audio")).await;
        }
        Ok(())
    }

    async fn on_audio_chunk<W: AsyncWrite + Unpin>(&mut self, event: &Event, out: &mut W) -> std::io::Result<()> {
        let Some(t) = self.transcription.as_mut().filter(|t| !t.broken) else { return Ok(()) };
        let pushed = AudioFormat::from_event(event)
            .and_then(|format| t.converter.push(format, event.payload(), &mut t.pcm))
            .map_err(|e| format!("audio-chunk: {e}"));
        let problem = match pushed {
            Err(e) => Some(e),
            Ok(()) if t.pcm.len() > MAX_UTTERANCE_SAMPLES => {
                Some("audio-chunk: the utterance is over five minutes: dropped".to_string())
            }
            Ok(()) => None,
        };
        if let Some(text) = problem {
            t.broken = true;
            t.pcm = Vec::new();
            return write_event(out, &error_event(&text, "bad-audio")).await;
        }
        Ok(())
    }

    async fn on_audio_stop<W: AsyncWrite + Unpin>(&mut self, out: &mut W) -> std::io::Result<()> {
        let (Some(mut t), Some(asr)) = (self.transcription.take(), self.services.asr.clone()) else { return Ok(()) };
        if t.broken {
            return Ok(());
        }
        t.converter.flush(&mut t.pcm);
        match asr.transcribe(t.pcm, t.language.as_deref()).await {
            Ok(text) => {
                let mut data = json!({"text": text});
                if let Some(language) = t.language {
                    data["language"] = Value::String(language);
                }
                write_event(out, &Event::with_data("transcript", data)).await
            }
            Err(e) => write_event(out, &error_event(&format!("transcription: {e}"), e.code())).await,
        }
    }

    async fn on_synthesize<W: AsyncWrite + Unpin>(&mut self, event: &Event, out: &mut W) -> std::io::Result<()> {
        if self.stream.is_some() {
            // Sent inside a stream only for servers that do not stream: the chunks have it.
            return Ok(());
        }
        let Some(text) = self.text_of(event, out).await? else { return Ok(()) };
        let voice = voice_name(event);
        let pieces = arthur_audio::tts::chunks(&text);
        let mut started = false;
        for piece in &pieces {
            match self.speak(piece, voice.as_deref()).await {
                Ok(pcm) => {
                    if !started {
                        write_event(out, &Event::with_data("audio-start", AudioFormat::mono16(pcm.rate).to_data()))
                            .await?;
                        started = true;
                    }
                    send_chunks(&pcm, out).await?;
                }
                Err(e) => {
                    write_event(out, &error_event(&format!("synthesis: {e}"), e.code())).await?;
                    return write_event(out, &Event::new("audio-stop")).await;
                }
            }
        }
        if !started {
            // Nothing to say: an empty answer, in the voice's format.
            let rate = self.voice_rate(voice.as_deref());
            write_event(out, &Event::with_data("audio-start", AudioFormat::mono16(rate).to_data())).await?;
        }
        write_event(out, &Event::new("audio-stop")).await
    }

    async fn on_synthesize_chunk<W: AsyncWrite + Unpin>(&mut self, event: &Event, out: &mut W) -> std::io::Result<()> {
        let Some(stream) = self.stream.as_mut() else { return Ok(()) };
        let text = event.str("text").unwrap_or_default();
        stream.chars += text.chars().count();
        if stream.chars > MAX_TEXT_CHARS {
            self.stream = None;
            return write_event(out, &error_event("synthesize-chunk: text over 10,000 characters", "too-long")).await;
        }
        let sentences = stream.text.push(text);
        let voice = stream.voice.clone();
        self.speak_sentences(&sentences, voice.as_deref(), out).await
    }

    async fn on_synthesize_stop<W: AsyncWrite + Unpin>(&mut self, out: &mut W) -> std::io::Result<()> {
        let Some(mut stream) = self.stream.take() else { return Ok(()) };
        let rest = stream.text.finish();
        self.speak_sentences(&rest, stream.voice.as_deref(), out).await?;
        write_event(out, &Event::new("synthesize-stopped")).await
    }

    /// Each sentence as its own `audio-start` … `audio-stop`, as soon as it is made.
    async fn speak_sentences<W: AsyncWrite + Unpin>(
        &self,
        sentences: &[String],
        voice: Option<&str>,
        out: &mut W,
    ) -> std::io::Result<()> {
        for sentence in sentences {
            match self.speak(sentence, voice).await {
                Ok(pcm) => {
                    write_event(out, &Event::with_data("audio-start", AudioFormat::mono16(pcm.rate).to_data())).await?;
                    send_chunks(&pcm, out).await?;
                    write_event(out, &Event::new("audio-stop")).await?;
                }
                Err(e) => write_event(out, &error_event(&format!("synthesis: {e}"), e.code())).await?,
            }
        }
        Ok(())
    }

    async fn speak(&self, sentence: &str, voice: Option<&str>) -> Result<Pcm, ServiceError> {
        match &self.services.tts {
            Some(tts) => tts.synthesize(sentence, voice).await,
            None => Err(ServiceError::Refused("no text-to-speech here (no voice)".into())),
        }
    }

    fn voice_rate(&self, voice: Option<&str>) -> u32 {
        let voices = self.services.tts.as_ref().map(|t| t.voices()).unwrap_or_default();
        voices.iter().find(|v| Some(v.name.as_str()) == voice).or(voices.first()).map(|v| v.rate).unwrap_or(16_000)
    }

    /// The event's `text`, or an `error` said when it is missing or too long.
    async fn text_of<W: AsyncWrite + Unpin>(&self, event: &Event, out: &mut W) -> std::io::Result<Option<String>> {
        match event.str("text") {
            None => {
                let text = format!("{}: no `text`", event.kind);
                write_event(out, &error_event(&text, "bad-event")).await?;
                Ok(None)
            }
            Some(text) if text.chars().count() > MAX_TEXT_CHARS => {
                let text = format!("{}: text over 10,000 characters", event.kind);
                write_event(out, &error_event(&text, "too-long")).await?;
                Ok(None)
            }
            Some(text) => Ok(Some(text.to_string())),
        }
    }

    async fn on_transcript<W: AsyncWrite + Unpin>(&mut self, event: &Event, out: &mut W) -> std::io::Result<()> {
        let Some(handler) = self.services.handler.clone() else {
            return write_event(out, &error_event("no conversation agent here", "no-handle")).await;
        };
        let Some(text) = self.text_of(event, out).await? else { return Ok(()) };
        let conversation = event
            .data
            .get("context")
            .and_then(|c| c.get("conversation_id"))
            .and_then(Value::as_str)
            .filter(|id| !id.trim().is_empty() && id.len() <= 200)
            .map(str::to_string);
        match handler.handle(&text, conversation.as_deref()).await {
            Ok(answer) => {
                let kind = if answer.handled { "handled" } else { "not-handled" };
                let data = json!({"text": answer.text, "context": {"conversation_id": answer.conversation}});
                write_event(out, &Event::with_data(kind, data)).await
            }
            Err(e) => write_event(out, &error_event(&format!("turn: {e}"), e.code())).await,
        }
    }
}

/// The `voice.name` of a `synthesize` / `synthesize-start` event.
fn voice_name(event: &Event) -> Option<String> {
    event.data.get("voice").and_then(|v| v.get("name")).and_then(Value::as_str).map(str::to_string)
}

async fn send_chunks<W: AsyncWrite + Unpin>(pcm: &Pcm, out: &mut W) -> std::io::Result<()> {
    let format = AudioFormat::mono16(pcm.rate).to_data();
    for piece in pcm.samples.chunks(SAMPLES_PER_CHUNK) {
        write_event(out, &Event::with_data("audio-chunk", format.clone()).with_payload(encode_i16(piece))).await?;
    }
    Ok(())
}

/// Text arriving in pieces (a model's answer, streamed): whole sentences come out as soon as
/// what follows them shows they are over (a mark, then a space).
#[derive(Debug, Default)]
pub struct SentenceBuffer {
    pending: String,
}

impl SentenceBuffer {
    /// Adds `text`; returns the sentences now complete.
    pub fn push(&mut self, text: &str) -> Vec<String> {
        self.pending.push_str(text);
        let mut cuts = Vec::new();
        let mut chars = self.pending.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let closes = matches!(c, '.' | '!' | '?' | '…') && chars.peek().is_some_and(|(_, n)| n.is_whitespace());
            if closes || c == '\n' {
                cuts.push(i + c.len_utf8());
            }
        }
        let Some(&end) = cuts.last() else { return Vec::new() };
        let done: String = self.pending.drain(..end).collect();
        let mut start = 0;
        let mut out = Vec::new();
        for cut in cuts {
            push_sentence(&done[start..cut], &mut out);
            start = cut;
        }
        out
    }

    /// The end of the text: what is left, as one sentence.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        push_sentence(&std::mem::take(&mut self.pending), &mut out);
        out
    }
}

fn push_sentence(text: &str, out: &mut Vec<String>) {
    let text = text.trim();
    if text.chars().any(char::is_alphanumeric) {
        out.push(text.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::{Answer, Asr, AsrModel, Handler, Tts, Voice};
    use tokio::io::AsyncWriteExt;

    /// Stand-ins for the services, saying what they were given (the real ones are
    /// exercised with the reference client in tests/wyoming.rs).
    struct Counting;

    #[async_trait::async_trait]
    impl Asr for Counting {
        fn describe(&self) -> AsrModel {
            AsrModel { name: "m".into(), description: "m".into(), languages: vec!["fr".into()] }
        }
        async fn transcribe(&self, pcm: Vec<f32>, _: Option<&str>) -> Result<String, ServiceError> {
            let rms = (pcm.iter().map(|s| s * s).sum::<f32>() / pcm.len().max(1) as f32).sqrt();
            Ok(format!("{} {rms:.2}", pcm.len()))
        }
    }

    #[async_trait::async_trait]
    impl Tts for Counting {
        fn voices(&self) -> Vec<Voice> {
            vec![Voice { name: "v".into(), description: "v".into(), languages: vec!["fr".into()], rate: 22_050 }]
        }
        async fn synthesize(&self, sentence: &str, _: Option<&str>) -> Result<Pcm, ServiceError> {
            Ok(Pcm { samples: vec![0.1; 100 * sentence.len()], rate: 22_050 })
        }
    }

    #[async_trait::async_trait]
    impl Handler for Counting {
        fn languages(&self) -> Vec<String> {
            vec!["fr".into()]
        }
        async fn handle(&self, text: &str, conversation: Option<&str>) -> Result<Answer, ServiceError> {
            Ok(Answer {
                text: format!("dit : {text}"),
                handled: !text.contains("refus"),
                conversation: conversation.unwrap_or("nouvelle").into(),
            })
        }
    }

    /// Sends `events` on one connection, closes its side, returns every event answered.
    async fn exchange(events: Vec<Event>) -> Vec<Event> {
        let c = Arc::new(Counting);
        let services = Services { asr: Some(c.clone()), tts: Some(c.clone()), handler: Some(c) };
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let task = tokio::spawn(serve_stream(server_read, server_write, services, CancellationToken::new()));
        let (client_read, mut client_write) = tokio::io::split(client);
        for e in &events {
            client_write.write_all(&crate::event::encode(e)).await.unwrap();
        }
        client_write.shutdown().await.unwrap();
        let mut reader = BufReader::new(client_read);
        let mut out = Vec::new();
        while let Ok(Some(e)) = read_event(&mut reader).await {
            out.push(e);
        }
        task.await.unwrap();
        out
    }

    fn audio(kind: &str, rate: u32, width: u16, channels: u16) -> Event {
        Event::with_data(kind, AudioFormat { rate, width, channels }.to_data())
    }

    #[tokio::test]
    async fn audio_in_any_format_is_transcribed_at_16_khz() {
        // One second at 44.1 kHz, stereo, 16-bit, at half scale.
        let frame: Vec<u8> = [16_384i16, 16_384].iter().flat_map(|s| s.to_le_bytes()).collect();
        let second = frame.repeat(44_100);
        let mut events = vec![Event::new("transcribe"), audio("audio-start", 44_100, 2, 2)];
        for piece in second.chunks(4_096) {
            events.push(audio("audio-chunk", 44_100, 2, 2).with_payload(piece.to_vec()));
        }
        events.push(Event::new("audio-stop"));
        let out = exchange(events).await;
        assert_eq!(out.len(), 1, "{out:?}");
        let text = out[0].str("text").unwrap();
        let (len, rms) = text.split_once(' ').unwrap();
        assert!(len.parse::<usize>().unwrap().abs_diff(16_000) < 200, "{text}");
        assert!(rms.parse::<f32>().unwrap() > 0.45, "{text}");
    }

    #[tokio::test]
    async fn a_bad_chunk_is_said_and_its_stream_dropped_then_the_connection_goes_on() {
        let out = exchange(vec![
            audio("audio-start", 16_000, 2, 1),
            audio("audio-chunk", 16_000, 2, 1).with_payload(vec![0; 3]),
            audio("audio-chunk", 16_000, 2, 1).with_payload(vec![0; 4]),
            Event::new("audio-stop"),
            Event::with_data("ping", serde_json::json!({"text": "là ?"})),
        ])
        .await;
        let kinds: Vec<&str> = out.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["error", "pong"], "one error, no transcript of a broken stream");
        assert_eq!(out[0].str("code"), Some("bad-audio"));
        assert_eq!(out[1].str("text"), Some("là ?"));
    }

    #[tokio::test]
    async fn synthesis_streams_each_sentence_and_handle_says_what_was_refused() {
        let out = exchange(vec![
            Event::with_data("synthesize", serde_json::json!({"text": "Un. Deux, trois quatre."})),
            Event::new("synthesize-start"),
            Event::with_data("synthesize-chunk", serde_json::json!({"text": "Un. Deux"})),
            Event::with_data("synthesize", serde_json::json!({"text": "Un. Deux."})),
            Event::with_data("synthesize-chunk", serde_json::json!({"text": "."})),
            Event::new("synthesize-stop"),
            Event::with_data(
                "transcript",
                serde_json::json!({"text": "note ça", "context": {"conversation_id": "c1"}}),
            ),
            Event::with_data("transcript", serde_json::json!({"text": "un refus"})),
        ])
        .await;
        let kinds: Vec<&str> = out.iter().map(|e| e.kind.as_str()).filter(|k| *k != "audio-chunk").collect();
        assert_eq!(
            kinds,
            [
                "audio-start",
                "audio-stop", // one synthesize, one stream
                "audio-start",
                "audio-stop",
                "audio-start",
                "audio-stop",
                "synthesize-stopped", // two sentences
                "handled",
                "not-handled",
            ]
        );
        assert_eq!(out.iter().find(|e| e.is("handled")).unwrap().data["context"]["conversation_id"], "c1");
        let refused = out.iter().find(|e| e.is("not-handled")).unwrap();
        assert_eq!(refused.str("text"), Some("dit : un refus"));
    }

    #[tokio::test]
    async fn an_unreadable_event_is_said_and_ends_the_connection() {
        let c = Arc::new(Counting);
        let services = Services { asr: Some(c.clone()), tts: Some(c.clone()), handler: Some(c) };
        let (client, server) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(server);
        let task = tokio::spawn(serve_stream(r, w, services, CancellationToken::new()));
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write.write_all(b"{\"type\": \"describe\"}\nnot an event\n{\"type\": \"describe\"}\n").await.unwrap();
        let mut reader = BufReader::new(client_read);
        assert!(read_event(&mut reader).await.unwrap().unwrap().is("info"));
        let error = read_event(&mut reader).await.unwrap().unwrap();
        assert_eq!((error.kind.as_str(), error.str("code")), ("error", Some("bad-event")));
        task.await.unwrap();
        assert!(read_event(&mut reader).await.unwrap().is_none(), "closed: nothing after it is read");
    }

    #[test]
    fn streamed_text_comes_out_sentence_by_sentence() {
        let mut b = SentenceBuffer::default();
        assert!(b.push("Rappel numéro un ").is_empty());
        assert!(b.push("enregistré.").is_empty(), "a full stop may be a decimal point until a space follows");
        assert_eq!(b.push(" Autre chose"), ["Rappel numéro un enregistré."]);
        assert!(b.push(" ?").is_empty());
        assert_eq!(b.push(" Oui. Non! Peut"), ["Autre chose ?", "Oui.", "Non!"]);
        assert_eq!(b.finish(), ["Peut"]);
        assert!(b.finish().is_empty());
        assert_eq!(SentenceBuffer::default().push("Il est 9.30 ici.\n"), ["Il est 9.30 ici."]);
    }
}
