//! What a child keeps between calls: the per-session tool id maps (spec §6.2) and the log
//! records of the call being answered.

use crate::json::Json;
use crate::util;
use std::collections::HashMap;

pub const NAME: &str = "rust-anthropic";
pub const PROVIDER: &str = "anthropic";

/// One session's bijection canonical `tu_<ULID>` <-> provider id.
#[derive(Default)]
pub struct ToolMap {
    pub pairs: Vec<(String, String)>,
}

impl ToolMap {
    pub fn provider(&self, canonical: &str) -> Option<&str> {
        self.pairs.iter().find(|(c, _)| c == canonical).map(|(_, p)| p.as_str())
    }
    pub fn canonical(&self, provider: &str) -> Option<&str> {
        self.pairs.iter().find(|(_, p)| p == provider).map(|(c, _)| c.as_str())
    }
}

#[derive(Default)]
pub struct State {
    pub maps: HashMap<String, ToolMap>,
    pub logs: Vec<Json>,
}

impl State {
    pub fn map(&mut self, session: &str) -> &mut ToolMap {
        self.maps.entry(session.to_string()).or_default()
    }
    /// The canonical id of a provider id, minted (a new `tu_<ULID>`) on first sight.
    pub fn canonical_for(&mut self, session: &str, provider: &str) -> String {
        let map = self.map(session);
        if let Some(c) = map.canonical(provider).filter(|_| !crate::defect("toolmap")) {
            return c.to_string();
        }
        let c = format!("tu_{}", util::ulid());
        map.pairs.push((c.clone(), provider.to_string()));
        c
    }
    /// The provider id of a canonical id, minted (`toolu_` and a digest of it) on first use.
    pub fn provider_for(&mut self, session: &str, canonical: &str) -> String {
        let map = self.map(session);
        if let Some(p) = map.provider(canonical) {
            return p.to_string();
        }
        let mut p = format!("toolu_{}", util::digest_id(canonical, 24));
        while map.canonical(&p).is_some() {
            p = format!("toolu_{}", util::digest_id(&p, 24));
        }
        map.pairs.push((canonical.to_string(), p.clone()));
        p
    }
    pub fn log(&mut self, level: &str, message: String, fields: Json) {
        self.logs.push(Json::obj().with("level", Json::str(level)).with("message", Json::Str(message)).with("fields", fields));
    }
    /// One §7.3 drop record with its five fields.
    pub fn dropped(&mut self, session: &str, message_id: &str, block_type: &str, reason: &str) {
        let fields = Json::obj()
            .with("event", Json::str("block_dropped"))
            .with("adapter", Json::str(NAME))
            .with("session_id", Json::str(session))
            .with("message_id", Json::str(message_id))
            .with("block_type", Json::str(block_type))
            .with("reason", Json::str(reason));
        let text = format!("{}: dropped {} block of message {} (session {}): {}", NAME, block_type, message_id, session, reason);
        self.log("warning", text, fields);
    }
    pub fn option_dropped(&mut self, option: &str, reason: &str) {
        let fields = Json::obj()
            .with("event", Json::str("option_dropped"))
            .with("adapter", Json::str(NAME))
            .with("option", Json::str(option))
            .with("reason", Json::str(reason));
        self.log("warning", format!("{}: dropped option {}: {}", NAME, option, reason), fields);
    }
}

/// A failed answer's typed error (docs/exec-protocol.md, Errors).
pub struct Fail(pub Json);

impl Fail {
    pub fn crash(message: &str) -> Fail {
        Fail(Json::obj().with("kind", Json::str("crash")).with("message", Json::str(message)).with("type", Json::str("Error")))
    }
    pub fn wire(message: &str) -> Fail {
        Fail(Json::obj().with("kind", Json::str("wire_format")).with("message", Json::str(message)))
    }
    pub fn invalid(message: &str) -> Fail {
        Fail(
            Json::obj()
                .with("kind", Json::str("adapter_error"))
                .with("error_class", Json::str("invalid_request"))
                .with("message", Json::str(message)),
        )
    }
    pub fn not_implemented(message: &str) -> Fail {
        Fail(Json::obj().with("kind", Json::str("not_implemented")).with("message", Json::str(message)))
    }
}
