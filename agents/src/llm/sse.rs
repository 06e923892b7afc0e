//! Server-sent events, parsed incrementally: both streaming wire formats (chat completions and
//! Anthropic Messages) arrive as SSE over a byte stream whose chunks may cut anywhere, even
//! inside a line or a UTF-8 character.

/// One dispatched event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Feed it chunks as they arrive; it returns the events completed by each chunk.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line not yet terminated.
    pending: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a chunk; returns every event it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < self.pending.len() {
            match self.pending[i] {
                b'\n' => {
                    let line = String::from_utf8_lossy(&self.pending[start..i]).into_owned();
                    self.line(&line, &mut events);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 == self.pending.len() {
                        // Could be the first half of a CRLF split across chunks: wait.
                        break;
                    }
                    let line = String::from_utf8_lossy(&self.pending[start..i]).into_owned();
                    self.line(&line, &mut events);
                    i += if self.pending[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.pending.drain(..start);
        events
    }

    /// End of stream: a last line or event without its terminating blank line is dispatched.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if !self.pending.is_empty() {
            let mut rest = std::mem::take(&mut self.pending);
            if rest.last() == Some(&b'\r') {
                rest.pop();
            }
            let line = String::from_utf8_lossy(&rest).into_owned();
            self.line(&line, &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                if data.ends_with('\n') {
                    data.pop();
                }
                events.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return; // comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {} // id, retry and unknown fields do not matter here
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(parser.push(chunk));
        }
        events.extend(parser.finish());
        events
    }

    fn data(d: &str) -> SseEvent {
        SseEvent { event: None, data: d.to_string() }
    }

    #[test]
    fn data_lines_and_done() {
        let events = all(&[b"data: {\"a\":1}\n\ndata: [DONE]\n\n"]);
        assert_eq!(events, vec![data("{\"a\":1}"), data("[DONE]")]);
    }

    #[test]
    fn named_events_and_crlf() {
        let events =
            all(&[b"event: ping\r\ndata: {}\r\n\r\nevent: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n"]);
        assert_eq!(
            events,
            vec![
                SseEvent { event: Some("ping".into()), data: "{}".into() },
                SseEvent { event: Some("message_stop".into()), data: "{\"type\":\"message_stop\"}".into() },
            ]
        );
    }

    #[test]
    fn events_split_anywhere_across_chunks() {
        let text = "event: a\r\ndata: héllo\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\n";
        let bytes = text.as_bytes();
        let whole = all(&[bytes]);
        assert_eq!(whole, vec![SseEvent { event: Some("a".into()), data: "héllo".into() }, data("x\ny")]);
        // Every split point, including inside "\r\n" and inside the two bytes of "é".
        for cut in 0..=bytes.len() {
            assert_eq!(all(&[&bytes[..cut], &bytes[cut..]]), whole, "cut at {cut}");
        }
        // One byte at a time.
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(all(&singles), whole);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let events = all(&[b": comment\nid: 7\nretry: 100\ndata:no-space\n\n"]);
        assert_eq!(events, vec![data("no-space")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_name_resets() {
        let events = all(&[b"event: lonely\n\ndata: d\n\n"]);
        assert_eq!(events, vec![data("d")]);
    }

    #[test]
    fn last_event_without_blank_line_is_flushed_at_the_end() {
        assert_eq!(all(&[b"data: tail"]), vec![data("tail")]);
        assert_eq!(all(&[b"data: tail\r"]), vec![data("tail")]);
        assert_eq!(all(&[b""]), vec![]);
    }

    #[test]
    fn lone_cr_ends_a_line() {
        assert_eq!(all(&[b"data: a\r\rdata: b\r", b"\r"]), vec![data("a"), data("b")]);
    }
}
