//! Which client an e-mail is about (spec §3.4). A forward always carries the founder's
//! address in its envelope; the real sender only lives in the forwarded body. Three rules
//! in order: envelope → forwarded body → unknown, and unknown on a forward fails closed.

use super::mail::{forwarded_from, split_cover, EmailAddress, Mail};
use super::store::{AtlasStore, Client, StoreResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientSource {
    Envelope,
    ForwardedBody,
    Unknown,
}

impl ClientSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientSource::Envelope => "envelope",
            ClientSource::ForwardedBody => "forwarded-body",
            ClientSource::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClientResolution {
    pub client: Option<Client>,
    pub source: ClientSource,
    /// The founder's envelope or a forward marker: the caller must treat `Unknown` as a
    /// closed failure (no client routing, no silent fallback).
    pub is_forward: bool,
    /// The quoted original's sender, when one was read from the body.
    pub forwarded_from: Option<EmailAddress>,
}

impl ClientResolution {
    /// Unknown client on a forward: fail closed.
    pub fn fails_closed(&self) -> bool {
        self.is_forward && self.source == ClientSource::Unknown
    }
}

/// The founder, as configured (`ATLAS_FOUNDER_EMAIL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Founder(pub EmailAddress);

impl Founder {
    pub fn is(&self, addr: &EmailAddress) -> bool {
        &self.0 == addr
    }
    /// An address of the founder's own company (never a client). A founder on a public
    /// webmail domain only excludes their own address.
    pub fn is_own(&self, addr: &EmailAddress) -> bool {
        self.is(addr) || (!self.0.is_public_webmail() && addr.domain() == self.0.domain())
    }
}

pub async fn resolve(
    store: &dyn AtlasStore,
    envelope: Option<&EmailAddress>,
    mail: &Mail,
    founder: Option<&Founder>,
) -> StoreResult<ClientResolution> {
    let from_founder = matches!((envelope, founder), (Some(e), Some(f)) if f.is(e));
    let is_forward = from_founder || mail.is_forward();
    // 1. A non-founder envelope that is a client.
    if let Some(env) = envelope {
        if !founder.is_some_and(|f| f.is_own(env)) {
            if let Some(client) = store.client_for(env).await? {
                return Ok(ClientResolution {
                    client: Some(client),
                    source: ClientSource::Envelope,
                    is_forward,
                    forwarded_from: None,
                });
            }
        }
    }
    // 2. The founder's envelope or a forward marker: the quoted original's De:/From:.
    let mut quoted_from = None;
    if is_forward {
        let split = split_cover(&mail.body);
        let quoted = if split.quoted.is_empty() { &mail.body } else { &split.quoted };
        quoted_from = forwarded_from(quoted).filter(|a| !founder.is_some_and(|f| f.is_own(a)));
        if let Some(addr) = &quoted_from {
            if let Some(client) = store.client_for(addr).await? {
                return Ok(ClientResolution {
                    client: Some(client),
                    source: ClientSource::ForwardedBody,
                    is_forward,
                    forwarded_from: quoted_from,
                });
            }
        }
    }
    // 3. Unknown.
    Ok(ClientResolution { client: None, source: ClientSource::Unknown, is_forward, forwarded_from: quoted_from })
}
