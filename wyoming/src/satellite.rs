//! Arthur as the host of Wyoming satellites (wyoming-satellite on a Raspberry Pi in the
//! kitchen): Arthur connects to each satellite, as Home Assistant does, asks it to run
//! (`describe` → `info`, `run-satellite`), and gets its microphone as `audio-chunk`s; the
//! voice loop runs on them as on the local microphone and speaks back through a
//! [`SatelliteSpeaker`]. A satellite that detects its wake word itself says so (`detection`,
//! or `run-pipeline` starting at `asr`): the loop then takes the next utterance without
//! Arthur's wake word. A satellite that goes away is retried with a growing delay; its
//! state is published for `/healthz` and `arthur doctor`.
//!
//! What the loop consumes is narrow, [`SatelliteEnds`]: a stream of 16 kHz frames, a speaker,
//! and where in that stream the satellite's own wake word was heard. The stream never stops:
//! while the satellite sends nothing (waiting for its own wake word, or gone), silence comes
//! at the pace of the wall clock, so the loop's audio clock — and an answer being played —
//! goes on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use arthur_audio::wav::FRAME_SAMPLES;
use arthur_audio::SAMPLE_RATE_HZ;
use serde_json::{json, Value};
use tokio::io::{BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::audio::{AudioFormat, ToMono16k};
use crate::event::{read_event, write_event, Event, WireError};
use crate::speaker::{Outbox, OutputRate, SatelliteSpeaker};

/// Frames queued for the loop: a minute of audio (a loop that falls further behind loses
/// the newest frames, with a warning).
pub const QUEUE_FRAMES: usize = 2_000;
/// Silence stands in for the satellite's audio after this long without any.
pub const GAP: Duration = Duration::from_millis(500);
/// The first retry after a failure; doubled up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A session that lasted this long resets the retry delay.
const STABLE: Duration = Duration::from_secs(10);
/// Connecting, and the `info` answer to `describe`, must come within this.
pub const HANDSHAKE: Duration = Duration::from_secs(10);
/// A `ping` goes out this often; a satellite that ever answered one must answer each
/// within [`PONG_WITHIN`] (wyoming-satellite 1.1 and later answer; 1.0 does not).
const PING_EVERY: Duration = Duration::from_secs(10);
const PONG_WITHIN: Duration = Duration::from_secs(15);
/// After the satellite's own wake word, a command not heard within this much of its audio
/// (as the loop hears it, however late) is given up: an empty `transcript` sends the
/// satellite back to listening for its wake word.
pub const COMMAND_WITHIN: Duration = Duration::from_secs(10);

/// Where a satellite stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Connected,
    /// Gone or unreachable: retried at `retry_at`.
    Waiting,
}

impl LinkState {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Connected => "connected",
            LinkState::Waiting => "waiting",
        }
    }
}

/// A satellite's live state, for `/healthz` and the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SatelliteStatus {
    pub address: String,
    /// Its name, from its `info`.
    pub name: Option<String>,
    pub state: LinkState,
    /// Since when it is in this state.
    pub since: SystemTime,
    /// Why the last connection failed or ended.
    pub last_error: Option<String>,
    /// Connections made since the start (a reconnection counts).
    pub connections: u64,
    /// When in `Waiting`: the next attempt.
    pub retry_at: Option<SystemTime>,
}

/// The shared state of a satellite: its current connection's outbox, whether it woke.
pub struct Link {
    address: String,
    outbox: Mutex<Option<mpsc::UnboundedSender<Event>>>,
    status: watch::Sender<SatelliteStatus>,
    /// Where the satellite woke, for the loop: see [`SatelliteEnds::woken`].
    woken: Arc<AtomicU64>,
    /// The satellite woke on its own wake word (at this many samples fed) and awaits a
    /// `transcript` to go back to it.
    awaiting: Mutex<Option<u64>>,
    rate: OutputRate,
    /// Samples handed to the loop, and samples the loop has heard (its speaker advanced):
    /// the satellite's audio clock on both sides of the queue.
    fed: Arc<AtomicU64>,
    heard: Arc<AtomicU64>,
}

impl Outbox for Link {
    fn send(&self, event: Event) {
        if let Some(tx) = self.outbox.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = tx.send(event);
        }
    }
}

impl Link {
    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn is_connected(&self) -> bool {
        self.status.borrow().state == LinkState::Connected
    }

    /// The satellite's state, as it changes.
    pub fn status(&self) -> watch::Receiver<SatelliteStatus> {
        self.status.subscribe()
    }

    /// The loop took a command from this satellite: told as its `transcript` (a satellite
    /// that woke on its own wake word goes back to listening for it).
    pub fn heard(&self, command: &str) {
        self.awaiting.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.send(Event::with_data("transcript", json!({"text": command})));
    }

    /// The loop heard something that was not a command: a satellite waiting for one since
    /// its own wake word is released (an empty `transcript`).
    pub fn not_a_command(&self) {
        if self.awaiting.lock().unwrap_or_else(|p| p.into_inner()).take().is_some() {
            self.send(Event::with_data("transcript", json!({"text": ""})));
        }
    }

    fn woke(&self) {
        let at = self.fed.load(Ordering::Acquire);
        self.woken.store(at + 1, Ordering::Release);
        *self.awaiting.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
    }

    /// Whether the loop has heard [`COMMAND_WITHIN`] of audio since the satellite woke, with
    /// no command.
    fn waited_too_long(&self) -> bool {
        let within = (COMMAND_WITHIN.as_secs_f64() * f64::from(SAMPLE_RATE_HZ)) as u64;
        self.awaiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| self.heard.load(Ordering::Acquire) >= at + within)
    }

    fn set_state(&self, f: impl FnOnce(&mut SatelliteStatus)) {
        self.status.send_modify(f);
    }
}

/// What the voice loop runs on for one satellite.
pub struct SatelliteEnds {
    /// 16 kHz mono frames of [`FRAME_SAMPLES`], without end (silence while nothing comes).
    pub frames: mpsc::Receiver<Vec<f32>>,
    pub speaker: SatelliteSpeaker,
    /// Set when the satellite heard its own wake word: how many samples of `frames` came
    /// before it, plus one (0: none; the loop lowers it once it has heard that far).
    pub woken: Arc<AtomicU64>,
    pub link: Arc<Link>,
}

/// What [`run`] needs for one satellite.
pub struct SatelliteDeps {
    pub link: Arc<Link>,
    feed: Arc<Mutex<Feed>>,
}

/// The two halves for the satellite at `address` (already checked by
/// [`crate::addr::satellite_addr`]).
pub fn pair(address: &str) -> (SatelliteEnds, SatelliteDeps) {
    let (tx, frames) = mpsc::channel(QUEUE_FRAMES);
    let woken = Arc::new(AtomicU64::new(0));
    let (status, _) = watch::channel(SatelliteStatus {
        address: address.to_string(),
        name: None,
        state: LinkState::Connecting,
        since: SystemTime::now(),
        last_error: None,
        connections: 0,
        retry_at: None,
    });
    let rate = OutputRate::default();
    let (fed, heard) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let link = Arc::new(Link {
        address: address.to_string(),
        outbox: Mutex::new(None),
        status,
        woken: woken.clone(),
        awaiting: Mutex::new(None),
        rate: rate.clone(),
        fed: fed.clone(),
        heard: heard.clone(),
    });
    let speaker = SatelliteSpeaker::new(link.clone(), rate).counting(heard);
    let feed = Arc::new(Mutex::new(Feed::new(tx, address, fed)));
    (SatelliteEnds { frames, speaker, woken, link: link.clone() }, SatelliteDeps { link, feed })
}

/// Keeps the satellite connected until `shutdown`, retrying with backoff; silence fills the
/// frames whenever the satellite sends none.
pub async fn run(deps: SatelliteDeps, shutdown: CancellationToken) {
    let filler = tokio::spawn(fill(deps.feed.clone(), shutdown.clone()));
    let mut backoff = FIRST_BACKOFF;
    loop {
        deps.link.set_state(|s| {
            s.state = LinkState::Connecting;
            s.since = SystemTime::now();
            s.retry_at = None;
        });
        let started = Instant::now();
        let ended = tokio::select! {
            ended = session(&deps, &shutdown) => ended,
            () = shutdown.cancelled() => break,
        };
        *deps.link.outbox.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if shutdown.is_cancelled() {
            break;
        }
        if started.elapsed() >= STABLE {
            backoff = FIRST_BACKOFF;
        }
        let reason = match ended {
            Ok(()) => "the satellite closed the connection".to_string(),
            Err(e) => e,
        };
        tracing::warn!(satellite = %deps.link.address, reason = %reason, retry_in_s = backoff.as_secs_f32(), "wyoming satellite: retrying");
        deps.link.set_state(|s| {
            s.state = LinkState::Waiting;
            s.since = SystemTime::now();
            s.last_error = Some(reason);
            s.retry_at = Some(SystemTime::now() + backoff);
        });
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.cancelled() => break,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
    filler.abort();
    tracing::info!(satellite = %deps.link.address, "wyoming satellite link stopped");
}

/// One connection: handshake, then the satellite's events until it goes.
async fn session(deps: &SatelliteDeps, shutdown: &CancellationToken) -> Result<(), String> {
    let link = &deps.link;
    let stream = tokio::time::timeout(HANDSHAKE, TcpStream::connect(&link.address))
        .await
        .map_err(|_| "no connection within 10 s".to_string())?
        .map_err(|e| format!("cannot connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut writer = BufWriter::new(write);
    write_event(&mut writer, &Event::new("describe")).await.map_err(|e| e.to_string())?;
    let info = tokio::time::timeout(HANDSHAKE, async {
        loop {
            match read_event(&mut reader).await {
                Ok(Some(e)) if e.is("info") => return Ok(e),
                Ok(Some(_)) => continue,
                Ok(None) => return Err("closed before answering describe".to_string()),
                Err(e) => return Err(e.to_string()),
            }
        }
    })
    .await
    .map_err(|_| "no info within 10 s of describe".to_string())??;
    let name = satellite_name(&info.data);
    if info.data.get("satellite").is_none_or(Value::is_null) {
        tracing::warn!(satellite = %link.address, "this Wyoming service says it is no satellite; trying anyway");
    }
    write_event(&mut writer, &Event::new("run-satellite")).await.map_err(|e| e.to_string())?;

    // From here the writer is a task fed by the outbox (speaker, loop, pongs).
    let (tx, mut outgoing) = mpsc::unbounded_channel::<Event>();
    *link.outbox.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx.clone());
    let writer_task = tokio::spawn(async move {
        while let Some(event) = outgoing.recv().await {
            if let Err(e) = write_event(&mut writer, &event).await {
                return Err(e.to_string());
            }
        }
        Ok(())
    });
    link.set_state(|s| {
        s.state = LinkState::Connected;
        s.since = SystemTime::now();
        s.name = name.clone();
        s.connections += 1;
        s.retry_at = None;
    });
    tracing::info!(satellite = %link.address, name = ?name, "wyoming satellite connected");

    let mut converter = ToMono16k::default();
    let mut warned_format = false;
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut answers_pings = false;
    let mut last_pong = Instant::now();
    let mut check = tokio::time::interval(Duration::from_secs(1));
    let (mut events, reader_task) = events_of(reader);
    let result = loop {
        let event = tokio::select! {
            event = events.recv() => event.unwrap_or(Ok(None)),
            _ = ping.tick() => {
                if answers_pings && last_pong.elapsed() > PONG_WITHIN {
                    break Err("no pong within 15 s".to_string());
                }
                let _ = tx.send(Event::new("ping"));
                continue;
            }
            _ = check.tick() => {
                if link.waited_too_long() {
                    tracing::info!(satellite = %link.address, "no command after the satellite's wake word: released");
                    link.not_a_command();
                }
                continue;
            }
            () = shutdown.cancelled() => break Ok(()),
        };
        let event = match event {
            Ok(Some(event)) => event,
            Ok(None) => break Ok(()),
            Err(e) => break Err(format!("unreadable event: {e}")),
        };
        match event.kind.as_str() {
            "audio-chunk" => {
                let mut samples = Vec::new();
                match AudioFormat::from_event(&event)
                    .and_then(|format| converter.push(format, event.payload(), &mut samples))
                {
                    Ok(()) => deps.feed.lock().unwrap_or_else(|p| p.into_inner()).push(&samples),
                    Err(e) if !warned_format => {
                        warned_format = true;
                        tracing::warn!(satellite = %link.address, error = %e, "satellite audio dropped");
                    }
                    Err(_) => {}
                }
            }
            "run-pipeline" => {
                if let Some(rate) = event.data.get("snd_format").and_then(|f| f.get("rate")).and_then(Value::as_u64) {
                    link.rate.set(u32::try_from(rate).unwrap_or(0));
                }
                if event.str("start_stage") == Some("asr") {
                    tracing::info!(satellite = %link.address, "the satellite heard its wake word");
                    link.woke();
                }
            }
            "detection" => {
                tracing::info!(satellite = %link.address, name = ?event.str("name"), "the satellite heard its wake word");
                link.woke();
            }
            "ping" => {
                let _ = tx.send(Event::with_data("pong", json!({"text": event.data.get("text")})));
            }
            "pong" => {
                answers_pings = true;
                last_pong = Instant::now();
            }
            other => tracing::debug!(satellite = %link.address, event = other, "satellite event"),
        }
        if writer_task.is_finished() {
            break Err("the connection failed while sending".to_string());
        }
    };
    *link.outbox.lock().unwrap_or_else(|p| p.into_inner()) = None;
    drop(tx);
    writer_task.abort();
    reader_task.abort();
    result
}

/// The frames the loop reads: the satellite's audio cut into frames, and silence at the
/// wall clock's pace when none comes.
struct Feed {
    tx: mpsc::Sender<Vec<f32>>,
    address: String,
    /// Samples handed to the loop so far.
    fed: Arc<AtomicU64>,
    pending: Vec<f32>,
    last_audio: Instant,
    /// Filling since then, and how many samples so far.
    filling: Option<(Instant, u64)>,
    dropping: bool,
}

impl Feed {
    fn new(tx: mpsc::Sender<Vec<f32>>, address: &str, fed: Arc<AtomicU64>) -> Self {
        Self {
            tx,
            address: address.to_string(),
            fed,
            pending: Vec::new(),
            last_audio: Instant::now(),
            filling: None,
            dropping: false,
        }
    }

    fn push(&mut self, samples: &[f32]) {
        self.last_audio = Instant::now();
        self.filling = None;
        self.pending.extend_from_slice(samples);
        while self.pending.len() >= FRAME_SAMPLES {
            let frame: Vec<f32> = self.pending.drain(..FRAME_SAMPLES).collect();
            self.send(frame);
        }
    }

    /// Called on a timer: silence when the satellite has been quiet for [`GAP`].
    fn tick(&mut self, now: Instant) {
        if now.duration_since(self.last_audio) < GAP {
            return;
        }
        let (since, filled) = self.filling.get_or_insert((now, 0));
        let (since, filled_so_far) = (*since, *filled);
        if filled_so_far == 0 && !self.pending.is_empty() {
            // The rest of the last frame heard, completed with silence.
            let mut frame = std::mem::take(&mut self.pending);
            frame.resize(FRAME_SAMPLES, 0.0);
            self.send(frame);
        }
        let due = (now.duration_since(since).as_secs_f64() * f64::from(SAMPLE_RATE_HZ)) as u64;
        let mut filled = filled_so_far;
        while filled + FRAME_SAMPLES as u64 <= due {
            self.send(vec![0.0; FRAME_SAMPLES]);
            filled += FRAME_SAMPLES as u64;
        }
        self.filling = Some((since, filled));
    }

    fn send(&mut self, frame: Vec<f32>) {
        let len = frame.len() as u64;
        match self.tx.try_send(frame) {
            Ok(()) => {
                self.dropping = false;
                self.fed.fetch_add(len, Ordering::AcqRel);
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.dropping {
                    self.dropping = true;
                    tracing::warn!(satellite = %self.address, "the voice loop is behind: satellite audio dropped");
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

async fn fill(feed: Arc<Mutex<Feed>>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_millis(30));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => feed.lock().unwrap_or_else(|p| p.into_inner()).tick(Instant::now()),
            () = shutdown.cancelled() => return,
        }
    }
}

/// The satellite's events, read by a task of their own. `read_event` is not cancel-safe: a
/// `select!` that drops it between an event's header and its payload (a ping or a check
/// tick firing while audio streams) loses the header, and the next read starts inside the
/// payload (« event header is not a JSON object »: the link dropped, the answer lost).
/// A channel's `recv` is cancel-safe. The task ends after the first end or error.
fn events_of<R>(mut reader: R) -> (mpsc::Receiver<Result<Option<Event>, WireError>>, tokio::task::JoinHandle<()>)
where
    R: tokio::io::AsyncBufRead + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    let task = tokio::spawn(async move {
        loop {
            let event = read_event(&mut reader).await;
            let last = !matches!(event, Ok(Some(_)));
            if tx.send(event).await.is_err() || last {
                break;
            }
        }
    });
    (rx, task)
}

/// The name a satellite gives itself in its `info`, as data: shown on /healthz and printed
/// by the doctor on a terminal, so without control characters, and 64 characters at most.
fn satellite_name(info: &serde_json::Map<String, Value>) -> Option<String> {
    let raw = info.get("satellite")?.get("name")?.as_str()?;
    let name: String = raw.chars().filter(|c| !c.is_control()).take(64).collect();
    (!name.trim().is_empty()).then(|| name.trim().to_string())
}

/// Asks the satellite at `address` for its `info` (doctor): its name, or why not.
pub async fn probe(address: &str, within: Duration) -> Result<Option<String>, String> {
    let attempt = async {
        let stream = TcpStream::connect(address).await.map_err(|e| format!("cannot connect: {e}"))?;
        let (read, mut write) = stream.into_split();
        let mut reader = BufReader::new(read);
        write_event(&mut write, &Event::new("describe")).await.map_err(|e| e.to_string())?;
        loop {
            match read_event(&mut reader).await {
                Ok(Some(e)) if e.is("info") => {
                    let satellite = e.data.get("satellite");
                    if satellite.is_none_or(Value::is_null) {
                        return Err("it answers, but says it is no satellite".to_string());
                    }
                    return Ok(satellite_name(&e.data));
                }
                Ok(Some(_)) => continue,
                Ok(None) => return Err("closed before answering".to_string()),
                Err(e) => return Err(e.to_string()),
            }
        }
    };
    tokio::time::timeout(within, attempt).await.map_err(|_| format!("no answer within {} s", within.as_secs()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An audio chunk whose payload arrives after its header, while the loop's ticks keep
    /// interrupting the wait: every event still comes whole and in order. (Reading with
    /// `read_event` inside the `select!` lost the header at the first tick.)
    #[tokio::test]
    async fn events_survive_being_waited_for_with_interruptions() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let (mut events, _task) = events_of(tokio::io::BufReader::new(client));
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for i in 0..3u8 {
                let header = "{\"type\": \"audio-chunk\", \"data\": {\"rate\": 16000, \"width\": 2, \"channels\": 1}, \"payload_length\": 4}\n";
                server.write_all(header.as_bytes()).await.unwrap();
                tokio::time::sleep(Duration::from_millis(30)).await;
                server.write_all(&[i; 4]).await.unwrap();
            }
            server.write_all(b"{\"type\": \"ping\"}\n").await.unwrap();
        });
        let mut got = Vec::new();
        while got.len() < 4 {
            // A short wait, dropped at each tick as the session's `select!` drops it.
            if let Ok(event) = tokio::time::timeout(Duration::from_millis(5), events.recv()).await {
                got.push(event.expect("the reader is alive").expect("a readable event").expect("an event"));
            }
        }
        writer.await.unwrap();
        for (i, e) in got[..3].iter().enumerate() {
            assert!(e.is("audio-chunk"));
            assert_eq!(e.payload(), &[i as u8; 4]);
        }
        assert!(got[3].is("ping"));
    }

    #[test]
    fn frames_are_cut_from_the_audio_and_silence_keeps_the_clock_when_none_comes() {
        let (tx, mut rx) = mpsc::channel(100);
        let fed = Arc::new(AtomicU64::new(0));
        let mut feed = Feed::new(tx, "test", fed.clone());
        feed.push(&[0.5; 1_000]);
        let mut got = Vec::new();
        while let Ok(f) = rx.try_recv() {
            got.push(f);
        }
        assert_eq!(got.len(), 2, "two whole frames, the rest waits");
        let t0 = feed.last_audio;
        feed.tick(t0 + GAP / 2);
        assert!(rx.try_recv().is_err(), "a short gap is no silence");
        feed.tick(t0 + GAP);
        let tail = rx.try_recv().unwrap();
        assert_eq!((tail[..40].iter().all(|s| *s == 0.5), tail[40..].iter().all(|s| *s == 0.0)), (true, true));
        feed.tick(t0 + GAP + Duration::from_millis(300));
        let mut silent = 0;
        while let Ok(f) = rx.try_recv() {
            assert!(f.len() == FRAME_SAMPLES && f.iter().all(|s| *s == 0.0));
            silent += 1;
        }
        assert_eq!(silent, 10, "300 ms of silence, in 30 ms frames");
        feed.push(&[0.1; 480]);
        assert_eq!(rx.try_recv().unwrap()[0], 0.1, "the satellite's audio again");
        assert_eq!(fed.load(Ordering::Acquire), 14 * 480, "every sample handed over is counted");
    }

    #[test]
    fn a_satellites_name_is_kept_as_printable_data() {
        let info = |name: &str| json!({"satellite": {"name": name}}).as_object().unwrap().clone();
        assert_eq!(satellite_name(&info("cuisine")), Some("cuisine".into()));
        assert_eq!(satellite_name(&info("\u{1b}[2Jcui\nsine")), Some("[2Jcuisine".into()));
        assert_eq!(satellite_name(&info(&"x".repeat(500))).map(|n| n.len()), Some(64));
        assert_eq!(satellite_name(&info(" \t ")), None);
        assert_eq!(satellite_name(json!({"satellite": null}).as_object().unwrap()), None);
    }
}
