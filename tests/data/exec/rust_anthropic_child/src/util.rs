//! What std does not give: base64 decoding, ULIDs (crockford base32, monotonic), RFC 3339 time.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn b64decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' => continue,
            _ => return Err(format!("not base64: {:?}", c as char)),
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

thread_local! {
    static LAST: Cell<(u64, u128)> = const { Cell::new((0, 0)) };
    static SEED: Cell<u64> = const { Cell::new(0) };
}

fn random64() -> u64 {
    SEED.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let t = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
            x = t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15;
        }
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// A ULID, monotonic within this process (the same millisecond increments the random part).
pub fn ulid() -> String {
    let ms = now_ms();
    let (last_ms, last_rand) = LAST.with(|l| l.get());
    let rand: u128 =
        if ms <= last_ms { last_rand + 1 } else { ((random64() as u128) << 16 | (random64() as u128 & 0xFFFF)) & ((1u128 << 80) - 1) };
    let ms = ms.max(last_ms);
    LAST.with(|l| l.set((ms, rand)));
    let value: u128 = (ms as u128) << 80 | rand;
    let mut out = [0u8; 26];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (25 - i);
        *slot = CROCKFORD[((value >> shift) & 31) as usize];
    }
    String::from_utf8(out.to_vec()).unwrap()
}

/// An id of Crockford characters derived from text (FNV-1a, stretched), for ids minted from content.
pub fn digest_id(text: &str, len: usize) -> String {
    let mut out = String::new();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut round = 0u64;
    while out.len() < len {
        for b in text.bytes().chain(round.to_le_bytes()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        for i in 0..12 {
            if out.len() < len {
                out.push(CROCKFORD[((h >> (5 * i)) & 31) as usize] as char);
            }
        }
        round += 1;
    }
    out
}

/// Now as RFC 3339 UTC with six fractional digits and `Z`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let micros = d.subsec_micros();
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Howard Hinnant's civil_from_days
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", year, month, day, rem / 3600, rem % 3600 / 60, rem % 60, micros)
}
