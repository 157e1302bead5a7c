//! `parse`: a whole Messages API response to a canonical assistant message.

use crate::defect;
use crate::errors;
use crate::json::Json;
use crate::state::{Fail, State, NAME, PROVIDER};
use crate::util;

/// The record's stop-reason map (`turnspec wire show anthropic-messages`, Stop reasons).
pub fn stop_reason(wire: &str) -> &'static str {
    match wire {
        "max_tokens" | "model_context_window_exceeded" if !defect("stop") => "max_tokens",
        "stop_sequence" => "stop_sequence",
        "tool_use" => "tool_use",
        _ => "end_turn", // end_turn, pause_turn, refusal
    }
}

/// The four disjoint buckets of a usage object (contract §7.2).
#[derive(Clone, Copy, Default)]
pub struct Usage {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

impl Usage {
    /// Counts the object names replace those known (a stream's later usage is cumulative).
    pub fn update(&mut self, usage: &Json) {
        let read = |k: &str| usage.get(k).as_i64();
        if let Some(n) = read("input_tokens") {
            self.input = n;
        }
        if let Some(n) = read("output_tokens") {
            self.output = n;
        }
        let (r, w) = if defect("usage") {
            ("cache_creation_input_tokens", "cache_read_input_tokens")
        } else {
            ("cache_read_input_tokens", "cache_creation_input_tokens")
        };
        if let Some(n) = read(r) {
            self.cache_read = n;
        }
        if let Some(n) = read(w) {
            self.cache_write = n;
        }
    }
    pub fn tokens(&self) -> Json {
        Json::obj()
            .with("input_tokens", Json::int(self.input))
            .with("output_tokens", Json::int(self.output))
            .with("cached_input_tokens", Json::int(self.cache_read))
            .with("cache_creation_input_tokens", Json::int(self.cache_write))
    }
}

/// A wire content block in canonical form, and the wire fields canonical form cannot hold.
pub fn canonical_block(st: &mut State, session: &str, block: &Json) -> (Json, Json) {
    let mut extras = Json::obj();
    let out = match block.get("type").str_or("") {
        "text" => {
            for (k, v) in block.members() {
                if k != "type" && k != "text" {
                    extras.set(k, v.clone());
                }
            }
            Json::obj().with("type", Json::str("text")).with("text", Json::str(block.get("text").str_or("")))
        }
        "thinking" => Json::obj()
            .with("type", Json::str("thinking"))
            .with("text", Json::str(block.get("thinking").str_or("")))
            .with("signature", block.get("signature").clone()),
        "redacted_thinking" => Json::obj().with("type", Json::str("redacted_thinking")).with("data", block.get("data").clone()),
        "tool_use" => {
            let wire_id = block.get("id").str_or("");
            let id =
                if defect("toolid") { st.canonical_for(session, &format!("{}x", wire_id)) } else { st.canonical_for(session, wire_id) };
            let input = if block.get("input").is_obj() { block.get("input").clone() } else { Json::obj() };
            for (k, v) in block.members() {
                if !matches!(k.as_str(), "type" | "id" | "name" | "input") {
                    extras.set(k, v.clone());
                }
            }
            Json::obj()
                .with("type", Json::str("tool_use"))
                .with("id", Json::Str(id))
                .with("name", block.get("name").clone())
                .with("input", input)
        }
        _ => block.clone(), // a server tool's call or result, kept whole as an unknown block
    };
    (out, extras)
}

pub fn routing(model: &str) -> Json {
    Json::obj().with("mode", Json::str("default")).with("chosen_model", Json::str(model)).with("reason", Json::str("no routing engine"))
}

pub fn served_model(wire: &Json, context: &Json) -> String {
    match wire.as_str() {
        Some(m) if !m.is_empty() => format!("{}:{}", PROVIDER, m),
        _ => context.get("model").as_str().map(str::to_string).unwrap_or_else(|| format!("{}:unknown", PROVIDER)),
    }
}

pub fn full_usage(u: &Usage, context: &Json) -> Json {
    u.tokens()
        .with("cost_usd", Json::str("0"))
        .with("pricing_version", Json::str("unpriced"))
        .with("latency_ms", Json::int(context.get("latency_ms").as_i64().unwrap_or(0).max(0)))
}

fn body_of(response: &Json) -> Result<Json, Fail> {
    if response.has("body_base64") {
        let bytes = util::b64decode(response.get("body_base64").str_or("")).map_err(|e| Fail::wire(&e))?;
        let text = String::from_utf8_lossy(&bytes);
        return Ok(crate::json::parse(&text).unwrap_or(Json::Str(text.into_owned())));
    }
    Ok(response.get("body").clone())
}

pub fn parse(st: &mut State, params: &Json) -> Result<Json, Fail> {
    let response = params.get("response");
    let context = params.get("context");
    let status = response.get("status").as_i64().unwrap_or(200);
    let headers = response.get("headers");
    let body = body_of(response)?;
    if status >= 400 || body.get("type").as_str() == Some("error") || !body.is_obj() {
        return Err(Fail(errors::adapter_error(Some(status), headers, &body, context.get("request_id"))));
    }
    let session = context.get("session_id").str_or("").to_string();
    let mut content = Vec::new();
    let mut blocks_raw = Json::obj();
    for (i, b) in body.get("content").as_arr().iter().enumerate() {
        let (c, extras) = canonical_block(st, &session, b);
        if !extras.members().is_empty() {
            blocks_raw.set(&i.to_string(), extras);
        }
        content.push(c);
    }
    if defect("order") && content.len() > 1 {
        content.swap(0, 1);
    }
    if content.is_empty() {
        content.push(Json::obj().with("type", Json::str("text")).with("text", Json::str("")));
    }
    let model = served_model(body.get("model"), context);
    let mut usage = Usage::default();
    let usage_json = if body.get("usage").is_obj() {
        usage.update(body.get("usage"));
        full_usage(&usage, context)
    } else {
        Json::Null
    };
    let mut raw = Json::obj().with("stop_reason", body.get("stop_reason").clone());
    if !body.get("stop_sequence").is_null() {
        raw.set("stop_sequence", body.get("stop_sequence").clone());
    }
    if !blocks_raw.members().is_empty() {
        raw.set("blocks", blocks_raw);
    }
    let metadata = Json::obj()
        .with("model", Json::str(&model))
        .with("provider", Json::str(PROVIDER))
        .with("routing", routing(&model))
        .with("usage", usage_json)
        .with("status", Json::str("complete"))
        .with("provider_raw", Json::obj().with(NAME, raw));
    Ok(Json::obj().with("message", message(context, content, metadata)))
}

pub fn message(context: &Json, content: Vec<Json>, metadata: Json) -> Json {
    let id = context.get("message_id").as_str().map(str::to_string).unwrap_or_else(util::ulid);
    let created = context.get("created_at").as_str().map(str::to_string).unwrap_or_else(util::now_rfc3339);
    Json::obj()
        .with("id", Json::Str(id))
        .with("session_id", context.get("session_id").clone())
        .with("role", Json::str("assistant"))
        .with("content", Json::Arr(content))
        .with("metadata", metadata)
        .with("created_at", Json::Str(created))
        .with("schema_version", Json::int(1))
}
