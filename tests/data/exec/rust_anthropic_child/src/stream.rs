//! Streams: Anthropic's server-sent events
//! (https://platform.claude.com/docs/en/build-with-claude/streaming) to canonical events,
//! kept between feeds; a cancel answers from the events already returned.

use crate::errors;
use crate::json::{self, Json};
use crate::parse::{canonical_block, served_model, stop_reason, Usage};
use crate::state::{Fail, State};
use crate::util;

/// A block being streamed: its wire form so far (input as the raw JSON text).
struct Block {
    wire: Json,
    partial: String,
    tool_id: Option<String>,
    /// for a block no event carries: how many events had been returned when it ended
    silent_at: Option<usize>,
}

pub struct Stream {
    pub request_id: Option<String>,
    context: Json,
    message_id: String,
    session: String,
    buf: Vec<u8>,
    blocks: Vec<Block>,
    /// the stream's content_block index -> position in `blocks`
    index: Vec<(i64, usize)>,
    usage: Usage,
    saw_usage: bool,
    stop: Option<String>,
    pub events: Vec<Json>,
    pub over: bool,
    completed: bool,
    model: Option<String>,
}

fn event(kind: &str, message_id: &str) -> Json {
    Json::obj().with("type", Json::str(kind)).with("message_id", Json::str(message_id))
}

impl Stream {
    pub fn open(context: &Json) -> Stream {
        Stream {
            request_id: context.get("request_id").as_str().map(str::to_string),
            context: context.clone(),
            message_id: context.get("message_id").as_str().map(str::to_string).unwrap_or_else(util::ulid),
            session: context.get("session_id").str_or("").to_string(),
            buf: Vec::new(),
            blocks: Vec::new(),
            index: Vec::new(),
            usage: Usage::default(),
            saw_usage: false,
            stop: None,
            events: Vec::new(),
            over: false,
            completed: false,
            model: None,
        }
    }

    fn position(&self, wire_index: i64) -> Option<usize> {
        self.index.iter().find(|(i, _)| *i == wire_index).map(|(_, p)| *p)
    }

    /// Feeds a chunk; the events it completed (an Err carries those and the error).
    pub fn feed(&mut self, st: &mut State, data: &[u8]) -> Result<Vec<Json>, (Vec<Json>, Fail)> {
        self.buf.extend_from_slice(data);
        let mut out = Vec::new();
        while let Some((end, skip)) = frame_end(&self.buf) {
            let frame: Vec<u8> = self.buf.drain(..end + skip).take(end).collect();
            if let Err(f) = self.frame(st, &frame, &mut out) {
                self.over = true;
                return Err((out, f));
            }
        }
        Ok(out)
    }

    pub fn close(&mut self, st: &mut State) -> Result<Vec<Json>, (Vec<Json>, Fail)> {
        let rest = std::mem::take(&mut self.buf);
        let mut out = Vec::new();
        let result = if rest.iter().any(|b| !b.is_ascii_whitespace()) { self.frame(st, &rest, &mut out) } else { Ok(()) };
        self.over = true;
        if let Err(f) = result {
            return Err((out, f));
        }
        if !self.completed {
            let complete = self.complete("error");
            self.push(complete, &mut out);
            return Err((out, Fail::wire("the stream ended before its message_stop event")));
        }
        Ok(out)
    }

    fn push(&mut self, e: Json, out: &mut Vec<Json>) {
        self.events.push(e.clone());
        out.push(e);
    }

    fn frame(&mut self, st: &mut State, frame: &[u8], out: &mut Vec<Json>) -> Result<(), Fail> {
        let text = std::str::from_utf8(frame).map_err(|_| Fail::wire("an event that is not UTF-8"))?;
        let mut data = String::new();
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if let Some(v) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if data.is_empty() {
            return Ok(());
        }
        let payload = json::parse(&data).map_err(|e| Fail::wire(&format!("an event's data is not JSON: {}", e)))?;
        self.event(st, &payload, out)
    }

    fn event(&mut self, st: &mut State, p: &Json, out: &mut Vec<Json>) -> Result<(), Fail> {
        let id = self.message_id.clone();
        match p.get("type").str_or("") {
            "message_start" => {
                let m = p.get("message");
                let model = served_model(m.get("model"), &self.context);
                self.model = Some(model.clone());
                if m.get("usage").is_obj() {
                    self.usage.update(m.get("usage"));
                    self.saw_usage = true;
                }
                self.push(event("message_start", &id).with("role", Json::str("assistant")).with("model", Json::Str(model)), out);
            }
            "content_block_start" => self.block_start(st, p, out),
            "content_block_delta" => self.block_delta(p, out),
            "content_block_stop" => self.block_stop(p, out)?,
            "message_delta" => {
                if let Some(s) = p.get("delta").get("stop_reason").as_str() {
                    self.stop = Some(s.to_string());
                }
                if p.get("usage").is_obj() {
                    self.usage.update(p.get("usage"));
                    self.saw_usage = true;
                }
            }
            "message_stop" => {
                let reason = stop_reason(self.stop.as_deref().unwrap_or("end_turn"));
                let complete = self.complete(reason);
                self.push(complete, out);
            }
            "error" => {
                let complete = self.complete("error");
                self.push(complete, out);
                return Err(Fail(errors::adapter_error(None, &Json::Null, p, &self.context.get("request_id").clone())));
            }
            _ => {} // ping, and event types added later (the docs: handle unknown ones gracefully)
        }
        Ok(())
    }

    fn block_start(&mut self, st: &mut State, p: &Json, out: &mut Vec<Json>) {
        let cb = p.get("content_block").clone();
        let pos = self.blocks.len();
        self.index.push((p.get("index").as_i64().unwrap_or(pos as i64), pos));
        let mut block = Block { wire: cb.clone(), partial: String::new(), tool_id: None, silent_at: None };
        let id = self.message_id.clone();
        match cb.get("type").str_or("") {
            "text" => {
                let text = cb.get("text").str_or("").to_string();
                if !text.is_empty() {
                    let e = event("text_delta", &id).with("content_block_index", Json::int(pos as i64)).with("text", Json::Str(text));
                    self.blocks.push(block);
                    self.push(e, out);
                    return;
                }
            }
            "thinking" => {}
            "tool_use" => {
                let tid = st.canonical_for(&self.session, cb.get("id").str_or(""));
                block.tool_id = Some(tid.clone());
                let e = event("tool_use_start", &id)
                    .with("content_block_index", Json::int(pos as i64))
                    .with("tool_use_id", Json::Str(tid))
                    .with("tool_name", cb.get("name").clone());
                self.blocks.push(block);
                self.push(e, out);
                return;
            }
            _ => {} // redacted thinking, a server tool's blocks: no event carries them
        }
        self.blocks.push(block);
    }

    fn block_delta(&mut self, p: &Json, out: &mut Vec<Json>) {
        let Some(pos) = self.position(p.get("index").as_i64().unwrap_or(-1)) else { return };
        let d = p.get("delta");
        let id = self.message_id.clone();
        let at = Json::int(pos as i64);
        let b = &mut self.blocks[pos];
        let e = match d.get("type").str_or("") {
            "text_delta" => {
                let t = d.get("text").str_or("");
                let text = format!("{}{}", b.wire.get("text").str_or(""), t);
                b.wire.set("text", Json::Str(text));
                event("text_delta", &id).with("content_block_index", at).with("text", Json::str(t))
            }
            "thinking_delta" => {
                let t = d.get("thinking").str_or("");
                let text = format!("{}{}", b.wire.get("thinking").str_or(""), t);
                b.wire.set("thinking", Json::Str(text));
                event("thinking_delta", &id).with("content_block_index", at).with("text", Json::str(t))
            }
            "signature_delta" => {
                b.wire.set("signature", d.get("signature").clone());
                event("thinking_delta", &id)
                    .with("content_block_index", at)
                    .with("text", Json::str(""))
                    .with("signature", d.get("signature").clone())
            }
            "input_json_delta" => {
                let t = d.get("partial_json").str_or("");
                b.partial.push_str(t);
                match &b.tool_id {
                    Some(tid) => event("tool_use_input_delta", &id)
                        .with("content_block_index", at)
                        .with("tool_use_id", Json::str(tid))
                        .with("partial_json", Json::str(t)),
                    None => return,
                }
            }
            "citations_delta" => {
                let mut list = b.wire.get("citations").as_arr().to_vec();
                list.push(d.get("citation").clone());
                b.wire.set("citations", Json::Arr(list));
                return;
            }
            _ => return,
        };
        self.push(e, out);
    }

    fn block_stop(&mut self, p: &Json, out: &mut Vec<Json>) -> Result<(), Fail> {
        let Some(pos) = self.position(p.get("index").as_i64().unwrap_or(-1)) else { return Ok(()) };
        let id = self.message_id.clone();
        let delivered = self.events.len();
        let b = &mut self.blocks[pos];
        if b.wire.has("input") || !b.partial.is_empty() {
            let input = if b.partial.trim().is_empty() {
                if b.wire.get("input").is_obj() {
                    b.wire.get("input").clone()
                } else {
                    Json::obj()
                }
            } else {
                json::parse(&b.partial).map_err(|e| Fail::wire(&format!("a tool call's input is not JSON: {}", e)))?
            };
            b.wire.set("input", input.clone());
            if let Some(tid) = b.tool_id.clone() {
                let e = event("tool_use_end", &id)
                    .with("content_block_index", Json::int(pos as i64))
                    .with("tool_use_id", Json::Str(tid))
                    .with("final_input", input);
                self.push(e, out);
                return Ok(());
            }
        }
        let kind = b.wire.get("type").str_or("").to_string();
        if !matches!(kind.as_str(), "text" | "thinking" | "tool_use") {
            b.silent_at = Some(delivered);
        }
        Ok(())
    }

    fn content(&self, blocks: &[Json]) -> Vec<Json> {
        let mut st = State::default();
        let mut content: Vec<Json> = Vec::new();
        for (b, wire) in self.blocks.iter().zip(blocks) {
            let (mut c, _) = canonical_block(&mut st, &self.session, wire);
            if let Some(tid) = &b.tool_id {
                c.set("id", Json::str(tid));
            }
            content.push(c);
        }
        if content.is_empty() {
            content.push(Json::obj().with("type", Json::str("text")).with("text", Json::str("")));
        }
        content
    }

    fn complete(&mut self, reason: &str) -> Json {
        self.completed = true;
        let wires: Vec<Json> = self.blocks.iter().map(|b| b.wire.clone()).collect();
        let usage = if self.saw_usage { self.usage.tokens() } else { Json::Null };
        event("message_complete", &self.message_id)
            .with("stop_reason", Json::str(reason))
            .with("final_content", Json::Arr(self.content(&wires)))
            .with("usage", usage)
    }

    /// The events the stream yields after a cancel landing after `delivered` events.
    pub fn cancel(&mut self, delivered: usize) -> Json {
        let seen = &self.events[..delivered.min(self.events.len())];
        let mut wires: Vec<Option<Json>> = vec![None; self.blocks.len()];
        let mut partial: Vec<String> = vec![String::new(); self.blocks.len()];
        let mut open: Vec<(usize, String)> = Vec::new();
        for e in seen {
            let Some(pos) = e.get("content_block_index").as_i64().map(|i| i as usize) else { continue };
            if pos >= wires.len() {
                continue;
            }
            let w = wires[pos].get_or_insert_with(|| {
                let mut w = self.blocks[pos].wire.clone();
                for k in ["text", "thinking"] {
                    if w.has(k) {
                        w.set(k, Json::str(""));
                    }
                }
                w.remove("signature");
                w
            });
            match e.get("type").str_or("") {
                "text_delta" => {
                    let t = format!("{}{}", w.get("text").str_or(""), e.get("text").str_or(""));
                    w.set("text", Json::Str(t));
                }
                "thinking_delta" => {
                    let t = format!("{}{}", w.get("thinking").str_or(""), e.get("text").str_or(""));
                    w.set("thinking", Json::Str(t));
                    if e.has("signature") {
                        w.set("signature", e.get("signature").clone());
                    }
                }
                "tool_use_start" => open.push((pos, e.get("tool_use_id").str_or("").to_string())),
                "tool_use_input_delta" => partial[pos].push_str(e.get("partial_json").str_or("")),
                "tool_use_end" => {
                    w.set("input", e.get("final_input").clone());
                    open.retain(|(p, _)| *p != pos);
                }
                _ => {}
            }
        }
        for (pos, b) in self.blocks.iter().enumerate() {
            if matches!(b.silent_at, Some(n) if n < delivered) {
                wires[pos] = Some(b.wire.clone());
            }
        }
        let mut after = Vec::new();
        for (pos, tid) in &open {
            let input = json::parse(&partial[*pos]).ok().filter(Json::is_obj).unwrap_or_else(Json::obj);
            if let Some(w) = wires[*pos].as_mut() {
                w.set("input", input.clone());
            }
            after.push(
                event("tool_use_end", &self.message_id)
                    .with("content_block_index", Json::int(*pos as i64))
                    .with("tool_use_id", Json::str(tid))
                    .with("final_input", input),
            );
        }
        let kept: Vec<(usize, Json)> = wires.into_iter().enumerate().filter_map(|(i, w)| w.map(|w| (i, w))).collect();
        let mut st = State::default();
        let mut content: Vec<Json> = Vec::new();
        for (pos, wire) in &kept {
            let (mut c, _) = canonical_block(&mut st, &self.session, wire);
            if let Some(tid) = &self.blocks[*pos].tool_id {
                c.set("id", Json::str(tid));
            }
            content.push(c);
        }
        if content.is_empty() {
            content.push(Json::obj().with("type", Json::str("text")).with("text", Json::str("")));
        }
        let usage = if self.saw_usage { self.usage.tokens() } else { Json::Null };
        after.push(
            event("message_complete", &self.message_id)
                .with("stop_reason", Json::str("cancelled"))
                .with("final_content", Json::Arr(content))
                .with("usage", usage),
        );
        self.over = true;
        Json::Arr(after)
    }
}

/// Where the first event of `buf` ends (a blank line), and the length of the separator.
fn frame_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf.get(i + 1) == Some(&b'\n') {
                return Some((i, 2));
            }
            if buf.get(i + 1) == Some(&b'\r') && buf.get(i + 2) == Some(&b'\n') {
                return Some((i, 3));
            }
        }
        i += 1;
    }
    None
}
