//! `read_request`: a Messages API request body back to canonical messages, tools and
//! options; what canonical form cannot hold goes to `provider_raw` under this adapter's name.

use crate::json::Json;
use crate::parse::{canonical_block, routing};
use crate::render::wire_model;
use crate::state::{Fail, State, NAME, PROVIDER};
use crate::util;

const OWN_FIELDS: [&str; 8] = ["model", "max_tokens", "system", "messages", "tools", "stop_sequences", "temperature", "stream"];

struct Ctx<'a> {
    session: &'a str,
    model: &'a str,
}

fn blocks_of(content: &Json) -> Vec<Json> {
    match content {
        Json::Str(s) => vec![Json::obj().with("type", Json::str("text")).with("text", Json::str(s))],
        Json::Arr(a) => a.clone(),
        _ => Vec::new(),
    }
}

fn media_of_url(url: &str) -> &'static str {
    let u = url.to_lowercase();
    let path = u.split(['?', '#']).next().unwrap_or("");
    if path.ends_with(".jpg") || path.ends_with(".jpeg") {
        "image/jpeg"
    } else if path.ends_with(".gif") {
        "image/gif"
    } else if path.ends_with(".webp") {
        "image/webp"
    } else {
        "image/png"
    }
}

/// A wire block of a request in canonical form, and the wire fields it leaves over.
fn block(st: &mut State, ctx: &Ctx, wire: &Json) -> (Json, Json) {
    match wire.get("type").str_or("") {
        "image" => {
            let src = wire.get("source");
            let (kind, data, media) = match src.get("type").str_or("") {
                "base64" => ("base64", src.get("data").str_or(""), src.get("media_type").str_or("image/png").to_string()),
                "url" => ("url", src.get("url").str_or(""), media_of_url(src.get("url").str_or("")).to_string()),
                _ => return (wire.clone(), Json::obj()),
            };
            let mut extras = Json::obj();
            for (k, v) in wire.members() {
                if k != "type" && k != "source" {
                    extras.set(k, v.clone());
                }
            }
            let source = Json::obj().with("kind", Json::str(kind)).with("data", Json::str(data));
            (Json::obj().with("type", Json::str("image")).with("source", source).with("media_type", Json::Str(media)), extras)
        }
        "tool_result" => {
            let id = st.canonical_for(ctx.session, wire.get("tool_use_id").str_or(""));
            let content: Vec<Json> = blocks_of(wire.get("content")).iter().map(|b| block(st, ctx, b).0).collect();
            let mut extras = Json::obj();
            for (k, v) in wire.members() {
                if !matches!(k.as_str(), "type" | "tool_use_id" | "content" | "is_error") {
                    extras.set(k, v.clone());
                }
            }
            let out = Json::obj()
                .with("type", Json::str("tool_result"))
                .with("tool_use_id", Json::Str(id))
                .with("content", Json::Arr(content))
                .with("is_error", Json::Bool(wire.get("is_error").truthy()));
            (out, extras)
        }
        _ => canonical_block(st, ctx.session, wire),
    }
}

fn message(role: &str, session: &str, content: Vec<Json>, extras: Json, metadata: Json) -> Json {
    let mut metadata = metadata;
    if !extras.members().is_empty() {
        metadata.set("provider_raw", Json::obj().with(NAME, Json::obj().with("blocks", extras)));
    }
    Json::obj()
        .with("id", Json::Str(util::ulid()))
        .with("session_id", Json::str(session))
        .with("role", Json::str(role))
        .with("content", Json::Arr(content))
        .with("metadata", metadata)
        .with("created_at", Json::Str(util::now_rfc3339()))
        .with("schema_version", Json::int(1))
}

/// A user turn: its tool results become tool messages (one each), the rest user messages.
fn user_turn(st: &mut State, ctx: &Ctx, content: &Json, out: &mut Vec<Json>) {
    let mut run: Vec<Json> = Vec::new();
    let mut extras = Json::obj();
    let flush = |run: &mut Vec<Json>, extras: &mut Json, out: &mut Vec<Json>| {
        if !run.is_empty() {
            out.push(message("user", ctx.session, std::mem::take(run), std::mem::replace(extras, Json::obj()), Json::obj()));
        }
    };
    for wire in blocks_of(content) {
        let (c, x) = block(st, ctx, &wire);
        if c.get("type").as_str() == Some("tool_result") {
            flush(&mut run, &mut extras, out);
            let parent = c.get("tool_use_id").clone();
            let x = if x.members().is_empty() { Json::obj() } else { Json::obj().with("0", x) };
            out.push(message("tool", ctx.session, vec![c], x, Json::obj().with("parent_tool_use_id", parent)));
        } else {
            if !x.members().is_empty() {
                extras.set(&run.len().to_string(), x);
            }
            run.push(c);
        }
    }
    flush(&mut run, &mut extras, out);
}

fn assistant_turn(st: &mut State, ctx: &Ctx, content: &Json, out: &mut Vec<Json>) {
    let mut blocks = Vec::new();
    let mut extras = Json::obj();
    for wire in blocks_of(content) {
        let (c, x) = block(st, ctx, &wire);
        if !x.members().is_empty() {
            extras.set(&blocks.len().to_string(), x);
        }
        blocks.push(c);
    }
    if blocks.is_empty() {
        blocks.push(Json::obj().with("type", Json::str("text")).with("text", Json::str("")));
    }
    let metadata = Json::obj()
        .with("model", Json::str(ctx.model))
        .with("provider", Json::str(PROVIDER))
        .with("routing", routing(ctx.model))
        .with("status", Json::str("complete"));
    out.push(message("assistant", ctx.session, blocks, extras, metadata));
}

fn system(st: &mut State, ctx: &Ctx, body: &Json, raw: &mut Json, out: &mut Vec<Json>) {
    let sys = body.get("system");
    if sys.is_null() {
        return;
    }
    if matches!(sys, Json::Arr(_)) {
        raw.set("system_blocks", Json::Bool(true));
    }
    let mut blocks = Vec::new();
    let mut extras = Json::obj();
    for wire in blocks_of(sys) {
        let (c, x) = block(st, ctx, &wire);
        if !x.members().is_empty() {
            extras.set(&blocks.len().to_string(), x);
        }
        blocks.push(c);
    }
    out.push(message("system", ctx.session, blocks, extras, Json::obj()));
}

fn tools(body: &Json, raw: &mut Json) -> (Vec<Json>, Vec<Json>) {
    let mut canonical = Vec::new();
    let mut native = Vec::new();
    let mut tool_extras = Json::obj();
    for t in body.get("tools").as_arr() {
        if t.has("type") && t.get("type").as_str() != Some("custom") || !t.has("input_schema") {
            native.push(t.clone());
            continue;
        }
        let mut x = Json::obj();
        for (k, v) in t.members() {
            if !matches!(k.as_str(), "name" | "description" | "input_schema") {
                x.set(k, v.clone());
            }
        }
        if !x.members().is_empty() {
            tool_extras.set(t.get("name").str_or(""), x);
        }
        canonical.push(
            Json::obj()
                .with("name", t.get("name").clone())
                .with("description", Json::str(t.get("description").str_or("")))
                .with("input_schema", t.get("input_schema").clone())
                .with("side_effects", Json::str("none")),
        );
    }
    if !tool_extras.members().is_empty() {
        raw.set("tool_extras", tool_extras);
    }
    (canonical, native)
}

pub fn read_request(st: &mut State, params: &Json) -> Result<Json, Fail> {
    let body = params.get("body");
    if !body.is_obj() {
        return Err(Fail::invalid("the request body is not a JSON object"));
    }
    let session = params.get("session_id").as_str().map(str::to_string).unwrap_or_else(util::ulid);
    let model = format!("{}:{}", PROVIDER, wire_model(body.get("model").str_or("unknown")));
    let ctx = Ctx { session: &session, model: &model };
    let mut raw = Json::obj();
    let mut messages = Vec::new();
    system(st, &ctx, body, &mut raw, &mut messages);
    for m in body.get("messages").as_arr() {
        match m.get("role").str_or("") {
            "assistant" => assistant_turn(st, &ctx, m.get("content"), &mut messages),
            _ => user_turn(st, &ctx, m.get("content"), &mut messages),
        }
    }
    let (canonical_tools, native) = tools(body, &mut raw);
    let mut extra = Json::obj();
    for (k, v) in body.members() {
        if !OWN_FIELDS.contains(&k.as_str()) {
            extra.set(k, v.clone());
        }
    }
    let mut options = Json::obj()
        .with("model", Json::Str(model.clone()))
        .with("max_output_tokens", body.get("max_tokens").clone())
        .with("temperature", body.get("temperature").clone())
        .with("stop_sequences", Json::Arr(body.get("stop_sequences").as_arr().to_vec()))
        .with("stream", Json::Bool(body.get("stream").truthy()))
        .with("output_schema", Json::Null)
        .with("extra", extra)
        .with("provider_tools", Json::Arr(native))
        .with("critical_key", Json::str("critical"));
    options.set("provider_raw", if raw.members().is_empty() { Json::obj() } else { Json::obj().with(NAME, raw) });
    Ok(Json::obj().with("messages", Json::Arr(messages)).with("tools", Json::Arr(canonical_tools)).with("options", options))
}
