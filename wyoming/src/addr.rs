//! The addresses of the settings, as the user writes them (`10300`, `host:port`,
//! `tcp://host:port`, the way Wyoming URIs are written). The server stays on loopback unless
//! the user names an interface: the protocol has no authentication.

/// The port Wyoming satellites listen on by default (wyoming-satellite's `--uri`).
pub const DEFAULT_SATELLITE_PORT: u16 = 10700;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a Wyoming address ({expected})")]
pub struct AddrError {
    pub value: String,
    pub expected: &'static str,
}

fn strip_scheme(raw: &str) -> &str {
    let raw = raw.trim();
    raw.strip_prefix("tcp://").unwrap_or(raw).trim_end_matches('/')
}

/// Splits `host:port` (`[v6]:port` too); `None` when there is no valid port.
fn split(raw: &str) -> Option<(&str, u16)> {
    let (host, port) = raw.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    (!host.is_empty() && !host.contains(char::is_whitespace)).then_some((host, port))
}

fn join(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Where the server listens: a bare port is on loopback (`127.0.0.1`); `host:port` is taken
/// as written (`0.0.0.0:10300` to be reached from the network).
pub fn listen_addr(raw: &str) -> Result<String, AddrError> {
    let err = || AddrError { value: raw.to_string(), expected: "a port, or host:port such as 127.0.0.1:10300" };
    let s = strip_scheme(raw);
    if let Ok(port) = s.parse::<u16>() {
        return Ok(join("127.0.0.1", port));
    }
    split(s).map(|(host, port)| join(host, port)).ok_or_else(err)
}

/// A satellite to connect to: `host:port`, or a host alone on the default port 10700.
pub fn satellite_addr(raw: &str) -> Result<String, AddrError> {
    let err = || AddrError { value: raw.to_string(), expected: "host:port such as 192.168.1.20:10700" };
    let s = strip_scheme(raw);
    if s.is_empty() || s.parse::<u16>().is_ok() {
        return Err(err());
    }
    match split(s) {
        Some((host, port)) => Ok(join(host, port)),
        None if !s.contains([':', '/', ' ']) => Ok(join(s, DEFAULT_SATELLITE_PORT)),
        None => Err(err()),
    }
}

/// Whether a listen address only accepts connections from this machine.
pub fn is_loopback(addr: &str) -> bool {
    match split(addr) {
        Some((host, _)) => {
            host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_listens_on_loopback_and_an_interface_must_be_named() {
        assert_eq!(listen_addr("10300").unwrap(), "127.0.0.1:10300");
        assert_eq!(listen_addr(" tcp://0.0.0.0:10300 ").unwrap(), "0.0.0.0:10300");
        assert_eq!(listen_addr("[::1]:10300").unwrap(), "[::1]:10300");
        assert_eq!(listen_addr("localhost:0").unwrap(), "localhost:0");
        for bad in ["", "host", "host:port", ":10300", "70000", "a b:1"] {
            assert!(listen_addr(bad).is_err(), "{bad}");
        }
        assert!(is_loopback("127.0.0.1:10300") && is_loopback("[::1]:1") && is_loopback("localhost:1"));
        assert!(!is_loopback("0.0.0.0:10300") && !is_loopback("192.168.1.2:10300"));
    }

    #[test]
    fn a_satellite_is_a_host_with_the_default_port_unless_given() {
        assert_eq!(satellite_addr("cuisine.local").unwrap(), "cuisine.local:10700");
        assert_eq!(satellite_addr("tcp://192.168.1.20:10701").unwrap(), "192.168.1.20:10701");
        for bad in ["", "10700", "a b", "host:x"] {
            assert!(satellite_addr(bad).is_err(), "{bad}");
        }
    }
}
