//! `estimate`: a local count of a request's input tokens (contract §3.1: no provider call).
//! About four characters a token for text (three and a half for JSON), plus what the API
//! adds itself: the tool use system prompt, images by their size, thinking only where it
//! still counts.

use crate::json::Json;
use crate::util;

/// "When you use tools, we also automatically include a special system prompt for the model
/// which enables tool use": 346 tokens for Claude 4 models with `auto` tool choice
/// (https://docs.anthropic.com/en/docs/tool-use-pricing-and-tokens).
const TOOL_SYSTEM_PROMPT: usize = 346;

/// An image's pixel size from its first bytes (PNG, GIF, JPEG), when it is base64.
fn image_size(data: &str) -> Option<(u64, u64)> {
    let head: String = data.chars().take(65536).collect();
    let head = &head[..head.len() - head.len() % 4];
    let b = util::b64decode(head).ok()?;
    let be16 = |i: usize| Some(((*b.get(i)? as u64) << 8) | *b.get(i + 1)? as u64);
    if b.starts_with(b"\x89PNG") {
        let w = be16(16)? << 16 | be16(18)?;
        let h = be16(20)? << 16 | be16(22)?;
        return Some((w, h));
    }
    if b.starts_with(b"GIF8") {
        return Some((*b.get(6)? as u64 | (*b.get(7)? as u64) << 8, *b.get(8)? as u64 | (*b.get(9)? as u64) << 8));
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xFF {
                i += 1;
                continue;
            }
            let marker = b[i + 1];
            if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + be16(i + 2)? as usize;
        }
    }
    None
}

/// "tokens = (width px * height px)/750", after the resize to a long edge of at most 1568
/// pixels (https://platform.claude.com/docs/en/build-with-claude/vision).
fn image_tokens(block: &Json) -> usize {
    let src = block.get("source");
    let Some((w, h)) = (if src.get("kind").as_str() == Some("base64") { image_size(src.get("data").str_or("")) } else { None }) else {
        return 1200;
    };
    let (mut w, mut h) = (w as f64, h as f64);
    let long = w.max(h);
    if long > 1568.0 {
        w *= 1568.0 / long;
        h *= 1568.0 / long;
    }
    ((w * h) / 750.0).ceil().max(1.0) as usize
}

/// Text by its words: a plain word of letters is about a token for every five letters, one
/// with digits (ids, hex) one for every two characters, any other (capitals, identifiers,
/// punctuation) one for every two and a half.
pub fn text_tokens(text: &str) -> usize {
    let mut n = 0.0f64;
    for word in text.split_whitespace() {
        let core = word.trim_end_matches(|c: char| ".,;:!?'\")".contains(c));
        let punct = (word.len() - core.len()) as f64;
        let mut chars = core.chars();
        let plain = chars.next().is_some_and(char::is_alphabetic) && chars.all(char::is_lowercase);
        let len = core.chars().count() as f64;
        let digits = core.chars().any(|c| c.is_ascii_digit());
        n += if plain {
            (len / 5.0).ceil()
        } else if digits {
            (len / 2.0).ceil()
        } else {
            (len / 2.5).ceil()
        } + punct;
    }
    n.ceil() as usize
}

fn block_tokens(b: &Json, thinking_counts: bool) -> usize {
    match b.get("type").str_or("") {
        "text" => text_tokens(b.get("text").str_or("")),
        "thinking" if thinking_counts => text_tokens(b.get("text").str_or("")),
        "redacted_thinking" if thinking_counts => b.get("data").str_or("").len() / 8,
        "thinking" | "redacted_thinking" => 0,
        "tool_use" => (b.get("input").dump().len() + b.get("name").str_or("").len()) * 2 / 7 + 25,
        "tool_result" => b.get("content").as_arr().iter().map(|x| block_tokens(x, false)).sum::<usize>() + 20,
        "image" => image_tokens(b),
        _ => b.dump().len() * 2 / 7,
    }
}

pub fn estimate(params: &Json) -> Json {
    let messages = params.get("messages").as_arr();
    // thinking of earlier turns is stripped by the API; only that of the assistant turn a
    // tool result answers counts (https://platform.claude.com/docs/en/build-with-claude/extended-thinking)
    let continuing = messages.last().is_some_and(|m| m.get("role").as_str() == Some("tool"));
    let last_assistant = messages.iter().rposition(|m| m.get("role").as_str() == Some("assistant"));
    let mut tokens = 0usize;
    for (i, m) in messages.iter().enumerate() {
        let thinking_counts = continuing && Some(i) == last_assistant;
        tokens += 4 + m.get("content").as_arr().iter().map(|b| block_tokens(b, thinking_counts)).sum::<usize>();
    }
    let tools = params.get("tools").as_arr();
    if !tools.is_empty() {
        tokens += TOOL_SYSTEM_PROMPT;
        tokens += tools.iter().map(|t| t.dump().len() * 2 / 7).sum::<usize>();
    }
    Json::obj().with("tokens", Json::int(tokens as i64))
}
