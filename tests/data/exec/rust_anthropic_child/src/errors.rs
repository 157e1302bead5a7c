//! Error answers: contract §6.1's classes from Anthropic's `error.type` (`turnspec wire show
//! anthropic-messages`, Errors; https://platform.claude.com/docs/en/api/errors), else from
//! contract §6.2's HTTP status table.

use crate::json::Json;

/// Anthropic's `error.type` hints, as the record's table gives them.
fn class_of_type(kind: &str, message: &str) -> Option<&'static str> {
    match kind {
        "overloaded_error" | "rate_limit_error" => Some("rate_limit"),
        "authentication_error" | "permission_error" => Some("auth"),
        "api_error" => Some("server_error"),
        "invalid_request_error" if overflow_wording(message) => Some("context_overflow"),
        _ => None,
    }
}

/// The record's overflow wording: `context|tokens exceeds|prompt is too long`.
fn overflow_wording(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("context") || m.contains("tokens exceeds") || m.contains("prompt is too long")
}

/// Contract §6.2's default class of an HTTP status.
pub fn class_of_status(status: i64) -> &'static str {
    match status {
        401 | 403 => "auth",
        408 => "network",
        413 => "context_overflow",
        429 => "rate_limit",
        500..=599 => "server_error",
        400..=499 => "invalid_request",
        _ => "other",
    }
}

pub fn retryable(class: &str) -> bool {
    matches!(class, "rate_limit" | "server_error" | "network")
}

/// A header's value, by name in any case (a recording may hold a list of values).
pub fn header<'a>(headers: &'a Json, name: &str) -> Option<&'a str> {
    for (k, v) in headers.members() {
        if k.eq_ignore_ascii_case(name) {
            return match v {
                Json::Str(s) => Some(s),
                Json::Arr(a) => a.first().and_then(|x| x.as_str()),
                _ => None,
            };
        }
    }
    None
}

fn retry_after(headers: &Json) -> Option<f64> {
    if let Some(ms) = header(headers, "retry-after-ms").and_then(|s| s.trim().parse::<f64>().ok()) {
        return Some(ms / 1000.0);
    }
    header(headers, "retry-after").and_then(|s| s.trim().parse::<f64>().ok())
}

fn num(x: f64) -> Json {
    if x.fract() == 0.0 {
        Json::Num(format!("{}", x as i64))
    } else {
        Json::Num(format!("{}", x))
    }
}

/// The adapter_error of an error body (HTTP status `status`, None for one inside a stream).
pub fn adapter_error(status: Option<i64>, headers: &Json, body: &Json, fallback_request_id: &Json) -> Json {
    let err = body.get("error");
    let kind = err.get("type").str_or("");
    let message = err.get("message").as_str().map(str::to_string).unwrap_or_else(|| {
        if body.is_null() {
            format!("HTTP {}", status.unwrap_or(0))
        } else {
            body.dump()
        }
    });
    let class = match class_of_type(kind, &message) {
        Some(c) => c,
        None => match status {
            Some(s) => {
                let c = class_of_status(s);
                if c == "invalid_request" && overflow_wording(&message) && kind == "invalid_request_error" {
                    "context_overflow"
                } else {
                    c
                }
            }
            None => match kind {
                "invalid_request_error" | "not_found_error" => "invalid_request",
                "request_too_large" => "context_overflow",
                _ => "other",
            },
        },
    };
    let request_id = header(headers, "request-id")
        .map(Json::str)
        .or_else(|| body.get("request_id").as_str().map(Json::str))
        .unwrap_or_else(|| fallback_request_id.clone());
    let mut out = Json::obj()
        .with("kind", Json::str("adapter_error"))
        .with("error_class", Json::str(class))
        .with("message", Json::Str(message))
        .with("provider_status", status.map(Json::int).unwrap_or(Json::Null))
        .with("request_id", request_id)
        .with("retryable", Json::Bool(retryable(class)));
    if let Some(s) = retry_after(headers) {
        out.set("retry_after_seconds", num(s));
    }
    out
}
