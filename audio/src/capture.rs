//! Microphone capture with cpal: whatever the device delivers (rate, channels, sample
//! format) becomes 16 kHz mono frames of [`FRAME_SAMPLES`], the same frames a
//! [`crate::wav::WavSource`] replays, handed to a callback on cpal's audio thread.
//!
//! The cpal stream lives on a thread of its own (streams are not `Send` on every host);
//! dropping the [`Capture`] stops it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use crate::clock::StreamOrigin;
use crate::wav::{StreamResampler, FRAME_SAMPLES};
use crate::SAMPLE_RATE_HZ;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no audio input device (is a microphone connected? `arthur listen --input FILE.wav` works without one)")]
    NoDefaultDevice,
    #[error("audio input device {wanted:?} not found; available: {available}")]
    DeviceNotFound { wanted: String, available: String },
    #[error("audio host {0:?} is not available")]
    Host(String),
    #[error("cannot open the audio input {device}: {message}")]
    Open { device: String, message: String },
}

/// Which input to open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureConfig {
    /// A device id as cpal prints it (`pulseaudio:alsa_input.usb…`, `alsa:hw:1,0`), or a
    /// part of a device's name on the default host; `None` is the default input.
    pub device: Option<String>,
}

/// What was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureInfo {
    pub device: String,
    pub device_rate: u32,
    pub device_channels: u16,
}

/// A running capture; frames flow to the callback until this is dropped.
pub struct Capture {
    info: CaptureInfo,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    /// Opens the input and starts delivering 16 kHz mono frames of [`FRAME_SAMPLES`] to
    /// `on_frame` (called on the audio thread: hand the frame over, do not block), each
    /// with the instant its last sample was captured — on the stream's sample clock (see
    /// [`StreamOrigin`]), not when the callback happened to run.
    pub fn start(
        config: &CaptureConfig,
        on_frame: impl FnMut(Vec<f32>, Instant) + Send + 'static,
    ) -> Result<Self, CaptureError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let config = config.clone();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("arthur-capture".into())
            .spawn(move || {
                crate::quiet::alsa_errors_to_log();
                let opened = open_stream(&config, on_frame);
                crate::quiet::drain();
                let stream = match opened {
                    Ok((stream, info)) => {
                        let _ = ready_tx.send(Ok(info));
                        stream
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while !thread_stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                drop(stream);
            })
            .map_err(|e| CaptureError::Open { device: "?".into(), message: e.to_string() })?;
        match ready_rx.recv() {
            Ok(Ok(info)) => {
                tracing::info!(device = %info.device, rate = info.device_rate, channels = info.device_channels, "capturing");
                Ok(Self { info, stop, thread: Some(thread) })
            }
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(CaptureError::Open { device: "?".into(), message: "capture thread ended".into() })
            }
        }
    }

    pub fn info(&self) -> &CaptureInfo {
        &self.info
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What a short listen on an input gave: a microphone is working only if frames came.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub info: CaptureInfo,
    /// 16 kHz frames delivered during the listen.
    pub frames: usize,
    /// The loudest sample heard (0 on a silent or fake source).
    pub peak: f32,
}

/// Opens the input, listens for `listen`, closes it: what `arthur doctor` calls working.
pub fn probe(config: &CaptureConfig, listen: Duration) -> Result<Probe, CaptureError> {
    let counts = Arc::new(std::sync::Mutex::new((0usize, 0f32)));
    let sink = counts.clone();
    let capture = Capture::start(config, move |frame, _| {
        let mut c = sink.lock().unwrap_or_else(|p| p.into_inner());
        c.0 += 1;
        c.1 = frame.iter().fold(c.1, |m, s| m.max(s.abs()));
    })?;
    std::thread::sleep(listen);
    let info = capture.info().clone();
    drop(capture);
    let (frames, peak) = *counts.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Probe { info, frames, peak })
}

/// Every input device of every available host, as `id — name` lines (for error messages
/// and `arthur listen --devices`).
pub fn input_devices() -> Vec<String> {
    crate::quiet::alsa_errors_to_log();
    let mut out = Vec::new();
    for host_id in cpal::available_hosts() {
        let Ok(host) = cpal::host_from_id(host_id) else { continue };
        let Ok(devices) = host.input_devices() else { continue };
        for device in devices {
            out.push(describe(&device));
        }
    }
    crate::quiet::drain();
    out
}

fn describe(device: &cpal::Device) -> String {
    let id = device.id().map(|id| id.to_string()).unwrap_or_else(|_| "?".into());
    let name = device.description().map(|d| d.name().to_string()).unwrap_or_default();
    if name.is_empty() || id.ends_with(&name) {
        id
    } else {
        format!("{id} — {name}")
    }
}

fn find_device(config: &CaptureConfig) -> Result<cpal::Device, CaptureError> {
    let Some(wanted) = config.device.as_deref().map(str::trim).filter(|w| !w.is_empty()) else {
        return cpal::default_host().default_input_device().ok_or(CaptureError::NoDefaultDevice);
    };
    // A full id names its host.
    if let Ok(id) = wanted.parse::<cpal::DeviceId>() {
        if let Ok(host) = cpal::host_from_id(id.host()) {
            if let Some(device) = host.device_by_id(&id) {
                return Ok(device);
            }
        }
    }
    let needle = wanted.to_lowercase();
    let host = cpal::default_host();
    if let Ok(devices) = host.input_devices() {
        for device in devices {
            if describe(&device).to_lowercase().contains(&needle) {
                return Ok(device);
            }
        }
    }
    Err(CaptureError::DeviceNotFound { wanted: wanted.to_string(), available: input_devices().join(", ") })
}

fn open_stream(
    config: &CaptureConfig,
    on_frame: impl FnMut(Vec<f32>, Instant) + Send + 'static,
) -> Result<(cpal::Stream, CaptureInfo), CaptureError> {
    let device = find_device(config)?;
    let name = describe(&device);
    let open_err = |message: String| CaptureError::Open { device: name.clone(), message };
    let supported = device.default_input_config().map_err(|e| open_err(e.to_string()))?;
    let rate = supported.sample_rate();
    let channels = supported.channels().max(1);
    let format = supported.sample_format();
    let on_frame: SharedSink = std::sync::Arc::new(std::sync::Mutex::new(Box::new(on_frame)));
    // Ask for 20 ms deliveries: a sound server's default can be two seconds, which would
    // delay every decision (end of speech, barge-in) by as much.
    let mut small: cpal::StreamConfig = supported.into();
    if let cpal::SupportedBufferSize::Range { min, max } = supported.buffer_size() {
        small.buffer_size = cpal::BufferSize::Fixed((rate / 50).clamp(*min, *max));
    }
    let stream = match build_input(&device, small, format, channels, rate, on_frame.clone()) {
        Ok(stream) => stream,
        Err(e) => {
            tracing::debug!(error = %e, "a 20 ms capture buffer was refused: the device's default");
            build_input(&device, supported.into(), format, channels, rate, on_frame)
                .map_err(|e| open_err(e.to_string()))?
        }
    };
    stream.play().map_err(|e| open_err(e.to_string()))?;
    Ok((stream, CaptureInfo { device: name, device_rate: rate, device_channels: channels }))
}

type SharedSink = std::sync::Arc<std::sync::Mutex<Box<dyn FnMut(Vec<f32>, Instant) + Send>>>;

/// The input stream: any format and channel count → 16 kHz mono frames to `on_frame`.
fn build_input(
    device: &cpal::Device,
    stream_config: cpal::StreamConfig,
    format: cpal::SampleFormat,
    channels: u16,
    rate: u32,
    on_frame: SharedSink,
) -> Result<cpal::Stream, String> {
    let mut resampler = StreamResampler::new(rate, SAMPLE_RATE_HZ).map_err(|e| e.to_string())?;
    let mut mono: Vec<f32> = Vec::new();
    let mut resampled: Vec<f32> = Vec::new();
    let mut pending: Vec<f32> = Vec::with_capacity(FRAME_SAMPLES * 2);
    // 16 kHz samples made so far, and the stream's origin on the wall clock: a callback
    // runs after its samples were captured, never before.
    let mut produced: u64 = 0;
    let mut origin: Option<StreamOrigin> = None;
    let mut deliver = move |interleaved: &mut dyn Iterator<Item = f32>| {
        let now = Instant::now();
        mono.clear();
        let mut acc = 0.0f32;
        let mut n = 0u16;
        for s in interleaved {
            acc += s;
            n += 1;
            if n == channels {
                mono.push(acc / f32::from(channels));
                acc = 0.0;
                n = 0;
            }
        }
        resampled.clear();
        resampler.process(&mono, &mut resampled);
        produced += resampled.len() as u64;
        let clock = match origin.as_mut() {
            Some(o) => {
                o.observe(now, produced, SAMPLE_RATE_HZ);
                *o
            }
            None => *origin.insert(StreamOrigin::new(now, produced, SAMPLE_RATE_HZ)),
        };
        pending.extend_from_slice(&resampled);
        while pending.len() >= FRAME_SAMPLES {
            let rest = pending.split_off(FRAME_SAMPLES);
            let frame = std::mem::replace(&mut pending, rest);
            let end = produced - pending.len() as u64;
            if let Ok(mut sink) = on_frame.lock() {
                sink(frame, clock.instant_of(end, SAMPLE_RATE_HZ));
            }
        }
    };
    let on_error = |e: cpal::Error| tracing::warn!(error = %e, "audio input error");
    match format {
        cpal::SampleFormat::F32 => device.build_input_stream(
            stream_config,
            move |data: &[f32], _: &cpal::InputCallbackInfo| deliver(&mut data.iter().copied()),
            on_error,
            None,
        ),
        cpal::SampleFormat::I16 => device.build_input_stream(
            stream_config,
            move |data: &[i16], _: &cpal::InputCallbackInfo| {
                deliver(&mut data.iter().map(|s| f32::from(*s) / 32_768.0))
            },
            on_error,
            None,
        ),
        cpal::SampleFormat::I32 => device.build_input_stream(
            stream_config,
            move |data: &[i32], _: &cpal::InputCallbackInfo| {
                deliver(&mut data.iter().map(|s| *s as f32 / 2_147_483_648.0))
            },
            on_error,
            None,
        ),
        cpal::SampleFormat::U8 => device.build_input_stream(
            stream_config,
            move |data: &[u8], _: &cpal::InputCallbackInfo| {
                deliver(&mut data.iter().map(|s| (f32::from(*s) - 128.0) / 128.0))
            },
            on_error,
            None,
        ),
        other => return Err(format!("unsupported sample format {other}")),
    }
    .map_err(|e| e.to_string())
}
