//! `render`: canonical messages, tools and options to a Messages API request
//! (https://platform.claude.com/docs/en/api/messages/create).

use crate::defect;
use crate::json::Json;
use crate::state::{Fail, State, NAME, PROVIDER};

pub const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Block types of the Messages API that canonical form has no type for: read back whole as
/// unknown blocks, sent back as they came.
pub const WIRE_ONLY_BLOCKS: [&str; 13] = [
    "document",
    "search_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
    "tool_search_tool_result",
    "tool_reference",
];

/// The wire model name: the canonical id without this adapter's `anthropic:` prefix only.
pub fn wire_model(model: &str) -> String {
    match model.split_once(':') {
        Some((p, rest)) if p == PROVIDER => rest.to_string(),
        _ => model.to_string(),
    }
}

/// This adapter's entry of a `provider_raw` object.
pub fn own(raw: &Json) -> &Json {
    raw.get(NAME)
}

struct Msg<'a> {
    session: &'a str,
    id: &'a str,
    from_us: bool,
    extras: &'a Json,
}

fn critical(message: &Json, key: &str, index: usize) -> bool {
    match message.get("metadata").get(key) {
        Json::Bool(b) => *b,
        Json::Arr(a) => a.iter().any(|x| x.as_i64() == Some(index as i64)),
        _ => false,
    }
}

/// A block the wire cannot carry: a critical one fails the render, any other is a §7.3 drop.
fn drop_block(st: &mut State, m: &Msg, block_type: &str, reason: &str, is_critical: bool) -> Result<(), Fail> {
    if is_critical {
        let text = format!("{}: block {} of message {} is marked critical and cannot be sent: {}", NAME, block_type, m.id, reason);
        return Err(Fail(
            Json::obj()
                .with("kind", Json::str("critical_block"))
                .with("message", Json::Str(text))
                .with("adapter", Json::str(NAME))
                .with("session_id", Json::str(m.session))
                .with("message_id", Json::str(m.id))
                .with("block_type", Json::str(block_type))
                .with("reason", Json::str(reason)),
        ));
    }
    st.dropped(m.session, m.id, block_type, reason);
    Ok(())
}

fn image(block: &Json) -> Result<Json, String> {
    let media = block.get("media_type").str_or("").to_lowercase();
    if !MEDIA_TYPES.contains(&media.as_str()) {
        return Err(format!("media type {} is not in the declared accepted_image_media_types", media));
    }
    let src = block.get("source");
    let data = src.get("data").str_or("");
    let source = match src.get("kind").str_or("") {
        "base64" => Json::obj().with("type", Json::str("base64")).with("media_type", Json::Str(media)).with("data", Json::str(data)),
        "url" => Json::obj().with("type", Json::str("url")).with("url", Json::str(data)),
        other => return Err(format!("an image source of kind {} has no form on this wire", other)),
    };
    Ok(Json::obj().with("type", Json::str("image")).with("source", source))
}

/// Extra wire fields a read_request kept for block `index` (cache_control, citations, ...).
fn with_extras(mut wire: Json, m: &Msg, index: usize) -> Json {
    for (k, v) in m.extras.get("blocks").get(&index.to_string()).members() {
        wire.set(k, v.clone());
    }
    wire
}

fn tool_result(st: &mut State, m: &Msg, block: &Json) -> Result<Json, String> {
    let id = st.provider_for(m.session, block.get("tool_use_id").str_or(""));
    let mut content = Vec::new();
    for inner in block.get("content").as_arr() {
        match inner.get("type").str_or("") {
            "text" => content.push(Json::obj().with("type", Json::str("text")).with("text", inner.get("text").clone())),
            "image" => content.push(image(inner)?),
            t if WIRE_ONLY_BLOCKS.contains(&t) => content.push(inner.clone()),
            t => return Err(format!("a tool result cannot carry a {} block", t)),
        }
    }
    let mut out = Json::obj().with("type", Json::str("tool_result")).with("tool_use_id", Json::Str(id)).with("content", Json::Arr(content));
    if block.get("is_error").truthy() {
        out.set("is_error", Json::Bool(true));
    }
    Ok(out)
}

/// One canonical block on the wire, or why it cannot go.
fn block(st: &mut State, m: &Msg, block: &Json) -> Result<Json, String> {
    let kind = block.get("type").str_or("");
    match kind {
        "text" => Ok(Json::obj().with("type", Json::str("text")).with("text", block.get("text").clone())),
        "image" => image(block),
        "tool_use" => {
            let id = st.provider_for(m.session, block.get("id").str_or(""));
            let input = if block.get("input").is_obj() { block.get("input").clone() } else { Json::obj() };
            Ok(Json::obj()
                .with("type", Json::str("tool_use"))
                .with("id", Json::Str(id))
                .with("name", block.get("name").clone())
                .with("input", input))
        }
        "tool_result" => tool_result(st, m, block),
        "thinking" | "redacted_thinking" if !m.from_us => Err("thinking of another provider's message".to_string()),
        "thinking" => match block.get("signature").as_str() {
            Some(sig) => Ok(Json::obj()
                .with("type", Json::str("thinking"))
                .with("thinking", block.get("text").clone())
                .with("signature", Json::str(sig))),
            None => Err("thinking with no signature cannot go back to the API".to_string()),
        },
        "redacted_thinking" => Ok(Json::obj().with("type", Json::str("redacted_thinking")).with("data", block.get("data").clone())),
        t if WIRE_ONLY_BLOCKS.contains(&t) => Ok(block.clone()),
        t => Err(format!("no {} block on this wire", t)),
    }
}

/// A message's content on the wire (None when nothing of it is left).
fn content(st: &mut State, message: &Json, critical_key: &str) -> Result<Vec<Json>, Fail> {
    let meta = message.get("metadata");
    let provider = meta.get("provider");
    let m = Msg {
        session: message.get("session_id").str_or(""),
        id: message.get("id").str_or(""),
        from_us: provider.is_null() || provider.as_str() == Some(PROVIDER),
        extras: own(meta.get("provider_raw")),
    };
    let mut out = Vec::new();
    for (i, b) in message.get("content").as_arr().iter().enumerate() {
        match block(st, &m, b) {
            Ok(wire) => out.push(with_extras(wire, &m, i)),
            Err(reason) => drop_block(st, &m, b.get("type").str_or("unknown"), &reason, critical(message, critical_key, i))?,
        }
    }
    Ok(out)
}

fn system(st: &mut State, messages: &[&Json], as_blocks: bool, critical_key: &str) -> Result<Option<Json>, Fail> {
    let mut blocks = Vec::new();
    for message in messages {
        for b in content(st, message, critical_key)? {
            if b.get("type").as_str() == Some("text") {
                blocks.push(b);
            } else {
                let m = Msg {
                    session: message.get("session_id").str_or(""),
                    id: message.get("id").str_or(""),
                    from_us: true,
                    extras: &Json::Null,
                };
                drop_block(st, &m, b.get("type").str_or("unknown"), "a system prompt holds text only", false)?;
            }
        }
    }
    if blocks.is_empty() {
        return Ok(None);
    }
    if as_blocks {
        return Ok(Some(Json::Arr(blocks)));
    }
    let texts: Vec<&str> = blocks.iter().map(|b| b.get("text").str_or("")).collect();
    Ok(Some(Json::Str(texts.join("\n\n"))))
}

fn tools(params: &Json, raw: &Json) -> Option<Json> {
    let mut out = Vec::new();
    for t in params.get("tools").as_arr() {
        let mut wire = Json::obj().with("name", t.get("name").clone());
        let description = t.get("description").str_or("");
        if !description.is_empty() {
            wire.set("description", Json::str(description));
        }
        wire.set("input_schema", t.get("input_schema").clone());
        for (k, v) in raw.get("tool_extras").get(t.get("name").str_or("")).members() {
            wire.set(k, v.clone());
        }
        out.push(wire);
    }
    out.extend(params.get("options").get("provider_tools").as_arr().iter().cloned());
    if out.is_empty() {
        None
    } else {
        Some(Json::Arr(out))
    }
}

pub fn render(st: &mut State, params: &Json) -> Result<Json, Fail> {
    let options = params.get("options");
    let raw = own(options.get("provider_raw"));
    let critical_key = options.get("critical_key").str_or("critical").to_string();
    let all = params.get("messages").as_arr();
    let systems: Vec<&Json> = all.iter().filter(|m| m.get("role").as_str() == Some("system")).collect();
    let mut body = Json::obj();
    if !defect("model") {
        body.set("model", Json::Str(wire_model(options.get("model").str_or(""))));
    }
    body.set("max_tokens", options.get("max_output_tokens").as_i64().map(Json::int).unwrap_or(Json::int(4096)));
    if let Some(s) = system(st, &systems, raw.get("system_blocks").truthy(), &critical_key)? {
        body.set("system", s);
    }
    let mut wire_messages = Vec::new();
    for m in all.iter().filter(|m| m.get("role").as_str() != Some("system")) {
        let role = if m.get("role").as_str() == Some("assistant") { "assistant" } else { "user" };
        let blocks = content(st, m, &critical_key)?;
        if !blocks.is_empty() {
            wire_messages.push(Json::obj().with("role", Json::str(role)).with("content", Json::Arr(blocks)));
        }
    }
    body.set("messages", Json::Arr(wire_messages));
    if let Some(t) = tools(params, raw) {
        body.set("tools", t);
    }
    let stops = options.get("stop_sequences").as_arr();
    if !stops.is_empty() {
        body.set("stop_sequences", Json::Arr(stops.to_vec()));
    }
    if !options.get("temperature").is_null() {
        body.set("temperature", options.get("temperature").clone());
    }
    if options.get("stream").truthy() {
        body.set("stream", Json::Bool(true));
    }
    if !options.get("output_schema").is_null() {
        st.option_dropped("output_schema", "supports_structured_output is false: no structured output is asked of the API");
    }
    for (k, v) in options.get("extra").members() {
        body.set(k, v.clone());
    }
    let headers = Json::obj().with("anthropic-version", Json::str("2023-06-01")).with("content-type", Json::str("application/json"));
    Ok(Json::obj().with("method", Json::str("POST")).with("path", Json::str("/v1/messages")).with("headers", headers).with("body", body))
}
