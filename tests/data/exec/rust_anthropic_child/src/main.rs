//! An exec-protocol child (docs/exec-protocol.md, schemas/exec/v1/) for Anthropic's Messages
//! API, in Rust on the standard library alone: one JSON request line in, one answer line out.
//!
//! RUST_CHILD_DEFECT plants one defect for the tests that prove the suite catches it:
//! `stop` (max_tokens read as end_turn), `usage` (cache read and write swapped), `toolid`
//! (a parsed tool call's provider id altered), `model` (no model in the request body),
//! `order` (a parsed reply's first two blocks swapped).

mod errors;
mod estimate;
mod json;
mod parse;
mod read;
mod render;
mod state;
mod stream;
mod util;

use json::Json;
use state::{Fail, State, NAME, PROVIDER};
use std::collections::HashMap;
use std::io::{BufRead, Write};

pub fn defect(name: &str) -> bool {
    std::env::var("RUST_CHILD_DEFECT").map(|v| v == name).unwrap_or(false)
}

fn capabilities() -> Json {
    let yes = Json::Bool(true);
    let no = Json::Bool(false);
    Json::obj()
        .with("supports_thinking", yes.clone())
        .with("supports_images", yes.clone())
        .with("supports_tools", yes.clone())
        .with("supports_system_prompt", yes.clone())
        .with("supports_structured_output", no.clone())
        .with("supports_streaming", yes.clone())
        .with("supports_streaming_tool_calls", yes.clone())
        .with("supports_parallel_tool_calls", yes.clone())
        .with("supports_prompt_caching", yes)
        .with("supports_system_messages_in_list", no)
        .with("max_context_tokens", Json::int(200_000))
        .with("max_output_tokens", Json::int(64_000))
        .with("accepted_image_media_types", Json::Arr(render::MEDIA_TYPES.iter().map(|m| Json::str(m)).collect()))
}

fn hello(params: &Json) -> Result<Json, Fail> {
    if !params.get("protocol_versions").as_arr().iter().any(|v| v.as_i64() == Some(1)) {
        return Err(Fail::crash("this child speaks protocol version 1 only"));
    }
    let ops = ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"];
    let adapter = Json::obj()
        .with("name", Json::str(NAME))
        .with("provider", Json::str(PROVIDER))
        .with("wire_api", Json::str("anthropic-messages"))
        .with("language", Json::str("rust"))
        .with("language_version", Json::str("edition 2021, std only"))
        .with("capabilities", capabilities())
        .with("provider_tool_id", Json::str("^toolu_[A-Za-z0-9_]+$"))
        .with("operations", Json::Arr(ops.iter().map(|o| Json::str(o)).collect()))
        .with("cassette_folders", Json::Arr(vec![Json::str("anthropic")]))
        .with("tool_errors_in_band", Json::Null)
        .with("gaps", Json::Arr(Vec::new()));
    Ok(Json::obj().with("protocol_version", Json::int(1)).with("adapter", adapter))
}

fn tool_id_map(st: &mut State, params: &Json) -> Result<Json, Fail> {
    let session = params.get("session_id").str_or("");
    let args = params.get("args").as_arr();
    let arg = |i: usize| args.get(i).and_then(|a| a.as_str()).unwrap_or("").to_string();
    let value = match params.get("call").str_or("") {
        "canonical_for" => Json::Str(st.canonical_for(session, &arg(0))),
        "provider_for" => Json::Str(st.provider_for(session, &arg(0))),
        "get_provider" => st.map(session).provider(&arg(0)).map(Json::str).unwrap_or(Json::Null),
        "get_canonical" => st.map(session).canonical(&arg(0)).map(Json::str).unwrap_or(Json::Null),
        "bind" => {
            let (c, p) = (arg(0), arg(1));
            let map = st.map(session);
            let clash = map.provider(&c).is_some_and(|x| x != p) || map.canonical(&p).is_some_and(|x| x != c);
            if clash {
                return Err(Fail::invalid(&format!("binding {} to {} would break the map's injectivity", c, p)));
            }
            if map.provider(&c).is_none() {
                map.pairs.push((c, p));
            }
            Json::Null
        }
        "pairs" => Json::Arr(st.map(session).pairs.iter().map(|(c, p)| Json::Arr(vec![Json::str(c), Json::str(p)])).collect()),
        other => return Err(Fail::invalid(&format!("no tool_id_map call {}", other))),
    };
    Ok(Json::obj().with("value", value))
}

struct Child {
    st: State,
    streams: HashMap<String, stream::Stream>,
}

fn events_result(r: Result<Vec<Json>, (Vec<Json>, Fail)>) -> Result<Json, Fail> {
    match r {
        Ok(events) => Ok(Json::obj().with("events", Json::Arr(events))),
        Err((events, Fail(mut e))) => {
            e.set("events", Json::Arr(events));
            Err(Fail(e))
        }
    }
}

impl Child {
    fn stream_op(&mut self, op: &str, params: &Json) -> Result<Json, Fail> {
        let id = params.get("stream_id").str_or("").to_string();
        if op == "stream_open" {
            self.streams.insert(id, stream::Stream::open(params.get("context")));
            return Ok(Json::obj().with("events", Json::Arr(Vec::new())));
        }
        let Some(s) = self.streams.get_mut(&id) else {
            return Err(Fail::invalid(&format!("no open stream {}", id)));
        };
        if op == "stream_close" && params.get("abandon").truthy() {
            self.streams.remove(&id);
            return Ok(Json::obj().with("events", Json::Arr(Vec::new())));
        }
        if op == "stream_feed" {
            let data = util::b64decode(params.get("data").str_or("")).map_err(|e| Fail::crash(&e))?;
            return events_result(s.feed(&mut self.st, &data));
        }
        events_result(s.close(&mut self.st))
    }

    fn cancel(&mut self, params: &Json) -> Json {
        let rid = params.get("request_id").as_str();
        let delivered = params.get("delivered").as_i64().unwrap_or(0).max(0) as usize;
        let found = self.streams.values_mut().find(|s| s.request_id.as_deref() == rid && rid.is_some() && !s.over);
        match found {
            Some(s) => Json::obj().with("in_flight", Json::Bool(true)).with("events", s.cancel(delivered)),
            None => Json::obj().with("in_flight", Json::Bool(false)).with("events", Json::Arr(Vec::new())),
        }
    }

    fn call(&mut self, op: &str, params: &Json) -> Result<Json, Fail> {
        match op {
            "hello" => hello(params),
            "render" => render::render(&mut self.st, params),
            "parse" => parse::parse(&mut self.st, params),
            "read_request" => read::read_request(&mut self.st, params),
            "estimate" => Ok(estimate::estimate(params)),
            "tool_id_map" => tool_id_map(&mut self.st, params),
            "stream_open" | "stream_feed" | "stream_close" => self.stream_op(op, params),
            "cancel" => Ok(self.cancel(params)),
            "shutdown" => Ok(Json::obj()),
            other => Err(Fail::not_implemented(&format!("no operation {}", other))),
        }
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut child = Child { st: State::default(), streams: HashMap::new() };
    for (n, line) in stdin.lock().lines().enumerate() {
        let Ok(line) = line else {
            eprintln!("standard input line {} is not UTF-8", n + 1);
            std::process::exit(2);
        };
        let request = match json::parse(&line) {
            Ok(r @ Json::Obj(_)) => r,
            Ok(_) => {
                eprintln!("standard input line {} is not a JSON object", n + 1);
                std::process::exit(2);
            }
            Err(e) => {
                eprintln!("standard input line {} is not JSON: {}", n + 1, e);
                std::process::exit(2);
            }
        };
        let op = request.get("op").str_or("").to_string();
        child.st.logs.clear();
        let answer = match child.call(&op, request.get("params")) {
            Ok(result) => Json::obj().with("id", request.get("id").clone()).with("ok", Json::Bool(true)).with("result", result),
            Err(Fail(error)) => Json::obj().with("id", request.get("id").clone()).with("ok", Json::Bool(false)).with("error", error),
        }
        .with("logs", Json::Arr(std::mem::take(&mut child.st.logs)));
        if writeln!(out, "{}", answer.dump()).and_then(|_| out.flush()).is_err() {
            std::process::exit(1);
        }
        if op == "shutdown" {
            std::process::exit(0);
        }
    }
}
