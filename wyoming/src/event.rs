//! The Wyoming wire format, read and written exactly as the reference implementation does
//! (the `wyoming` package, `event.py`): one JSON header line with `type`, an optional inline
//! `data` object, `data_length` bytes of more JSON data merged over it, then
//! `payload_length` bytes of payload (PCM for audio). What comes off the wire is untrusted:
//! every length is bounded, and a malformed event is an error that names what was wrong.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The version of the reference implementation whose events Arthur speaks; written in every
/// header as `version` (peers do not check it).
pub const PROTOCOL_VERSION: &str = "1.10.2";

/// A header line longer than this is refused (the reference writes a few hundred bytes).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Extra JSON data longer than this is refused (`info` of a big server is a few tens of KiB).
pub const MAX_DATA_BYTES: usize = 1024 * 1024;
/// A payload longer than this is refused: an audio chunk is a few KiB (Home Assistant sends
/// 1,024 samples); 8 MiB is minutes of 16-bit audio in one chunk.
pub const MAX_PAYLOAD_BYTES: usize = 8 * 1024 * 1024;

/// One event: its type, its data (a JSON object) and its payload.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    pub kind: String,
    pub data: Map<String, Value>,
    pub payload: Option<Vec<u8>>,
}

/// Why an event could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("connection error: {0}")]
    Io(#[from] std::io::Error),
    #[error("event header longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("event header is not a JSON object with a string `type`: {0}")]
    BadHeader(String),
    #[error("event data of {len} bytes is over the limit of {MAX_DATA_BYTES}")]
    DataTooLong { len: u64 },
    #[error("event data is not a JSON object: {0}")]
    BadData(String),
    #[error("event payload of {len} bytes is over the limit of {MAX_PAYLOAD_BYTES}")]
    PayloadTooLong { len: u64 },
    #[error("connection closed in the middle of an event")]
    Truncated,
}

impl Event {
    /// An event of this type with no data.
    pub fn new(kind: &str) -> Self {
        Self { kind: kind.to_string(), data: Map::new(), payload: None }
    }

    /// An event of this type with `data` (a JSON object; anything else gives no data).
    pub fn with_data(kind: &str, data: Value) -> Self {
        let data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self { kind: kind.to_string(), data, payload: None }
    }

    pub fn with_payload(mut self, payload: Vec<u8>) -> Self {
        self.payload = Some(payload);
        self
    }

    pub fn is(&self, kind: &str) -> bool {
        self.kind == kind
    }

    /// A string field of the data (`None` when absent, null or not a string).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.data.get(key).and_then(Value::as_str)
    }

    /// The payload, empty when there is none.
    pub fn payload(&self) -> &[u8] {
        self.payload.as_deref().unwrap_or(&[])
    }
}

/// Reads the next event; `Ok(None)` when the peer closed the connection between events.
/// Blank lines between events are skipped.
pub async fn read_event<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<Event>, WireError> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut *reader).take(MAX_HEADER_BYTES as u64 + 1).read_until(b'\n', &mut line).await?;
        if read == 0 {
            return Ok(None);
        }
        if line.len() > MAX_HEADER_BYTES {
            return Err(WireError::HeaderTooLong);
        }
        if line.last() != Some(&b'\n') {
            return Err(WireError::Truncated);
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    let header: Value = serde_json::from_slice(&line).map_err(|e| WireError::BadHeader(e.to_string()))?;
    let Value::Object(mut header) = header else {
        return Err(WireError::BadHeader("not an object".into()));
    };
    let kind = match header.remove("type") {
        Some(Value::String(kind)) if !kind.is_empty() => kind,
        _ => return Err(WireError::BadHeader("no `type`".into())),
    };
    let mut data = match header.remove("data") {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(WireError::BadHeader("`data` is not an object".into())),
    };
    let length = |key: &str| -> Result<u64, WireError> {
        match header.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| WireError::BadHeader(format!("`{key}` is not a length"))),
        }
    };
    let (data_length, payload_length) = (length("data_length")?, length("payload_length")?);
    if data_length > MAX_DATA_BYTES as u64 {
        return Err(WireError::DataTooLong { len: data_length });
    }
    if payload_length > MAX_PAYLOAD_BYTES as u64 {
        return Err(WireError::PayloadTooLong { len: payload_length });
    }
    if data_length > 0 {
        let bytes = read_exact(reader, data_length as usize).await?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(more)) => data.extend(more),
            Ok(_) => return Err(WireError::BadData("not an object".into())),
            Err(e) => return Err(WireError::BadData(e.to_string())),
        }
    }
    let payload = if payload_length > 0 { Some(read_exact(reader, payload_length as usize).await?) } else { None };
    Ok(Some(Event { kind, data, payload }))
}

async fn read_exact<R: AsyncBufRead + Unpin>(reader: &mut R, len: usize) -> Result<Vec<u8>, WireError> {
    let mut buf = vec![0; len];
    match reader.read_exact(&mut buf).await {
        Ok(_) => Ok(buf),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(WireError::Truncated),
        Err(e) => Err(e.into()),
    }
}

/// The bytes of one event as the reference writes them: the header line (type, version,
/// lengths), then the data as its own JSON object, then the payload.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut header = Map::new();
    header.insert("type".into(), Value::String(event.kind.clone()));
    header.insert("version".into(), Value::String(PROTOCOL_VERSION.into()));
    let data = (!event.data.is_empty()).then(|| Value::Object(event.data.clone()).to_string().into_bytes());
    if let Some(data) = &data {
        header.insert("data_length".into(), Value::from(data.len()));
    }
    let payload = event.payload.as_deref().filter(|p| !p.is_empty());
    if let Some(payload) = payload {
        header.insert("payload_length".into(), Value::from(payload.len()));
    }
    let mut out = Value::Object(header).to_string().into_bytes();
    out.push(b'\n');
    out.extend(data.unwrap_or_default());
    out.extend_from_slice(payload.unwrap_or_default());
    out
}

/// Writes one event and flushes it.
pub async fn write_event<W: AsyncWrite + Unpin>(writer: &mut W, event: &Event) -> std::io::Result<()> {
    writer.write_all(&encode(event)).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Option<Event>, WireError>> {
        let mut reader = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let r = read_event(&mut reader).await;
            let stop = !matches!(r, Ok(Some(_)));
            out.push(r);
            if stop {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn an_event_round_trips_with_data_and_payload() {
        let event = Event::with_data("audio-chunk", json!({"rate": 16000, "width": 2, "channels": 1}))
            .with_payload(vec![1, 2, 3, 4]);
        let bytes = encode(&event);
        let header = std::str::from_utf8(&bytes[..bytes.iter().position(|b| *b == b'\n').unwrap()]).unwrap();
        let header: Value = serde_json::from_str(header).unwrap();
        assert_eq!(header["type"], "audio-chunk");
        assert_eq!(header["payload_length"], 4);
        assert!(header.get("data").is_none(), "data goes after the header, as the reference writes it");
        let read = read_all(&bytes).await;
        assert_eq!(read[0].as_ref().unwrap().as_ref().unwrap(), &event);
        assert!(matches!(read[1], Ok(None)), "end of stream between events");
    }

    #[tokio::test]
    async fn inline_data_and_extra_data_are_merged_the_extra_winning() {
        let extra = br#"{"text": "bonjour", "language": "fr"}"#;
        let mut bytes = format!(
            "{{\"type\": \"transcript\", \"data\": {{\"text\": \"old\", \"context\": {{}}}}, \"data_length\": {}}}\n",
            extra.len()
        )
        .into_bytes();
        bytes.extend_from_slice(extra);
        bytes.extend_from_slice(b"\n{\"type\": \"describe\"}\n");
        let read = read_all(&bytes).await;
        let first = read[0].as_ref().unwrap().as_ref().unwrap();
        assert_eq!(first.str("text"), Some("bonjour"));
        assert_eq!(first.data["context"], json!({}));
        assert!(read[1].as_ref().unwrap().as_ref().unwrap().is("describe"), "a blank line between events is skipped");
    }

    #[tokio::test]
    async fn malformed_or_oversized_input_is_a_named_error() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"not json\n".to_vec(), "BadHeader"),
            (b"[1, 2]\n".to_vec(), "BadHeader"),
            (b"{\"data\": {}}\n".to_vec(), "BadHeader"),
            (b"{\"type\": \"x\", \"data_length\": -3}\n".to_vec(), "BadHeader"),
            (format!("{{\"type\": \"x\", \"payload_length\": {}}}\n", MAX_PAYLOAD_BYTES + 1).into_bytes(), "Payload"),
            (format!("{{\"type\": \"x\", \"data_length\": {}}}\n", MAX_DATA_BYTES + 1).into_bytes(), "DataTooLong"),
            (b"{\"type\": \"x\", \"data_length\": 5}\n[1,2]".to_vec(), "BadData"),
            (b"{\"type\": \"x\", \"payload_length\": 10}\nabc".to_vec(), "Truncated"),
            (b"{\"type\": \"x\"".to_vec(), "Truncated"),
            (vec![b' '; MAX_HEADER_BYTES + 10], "HeaderTooLong"),
        ];
        for (bytes, expected) in cases {
            let read = read_all(&bytes).await;
            let err = read.last().unwrap().as_ref().unwrap_err();
            assert!(format!("{err:?}").contains(expected), "{expected}: got {err:?}");
        }
    }
}
