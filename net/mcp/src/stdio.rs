//! Standard input and output for rmcp, with the answers JSON-RPC asks for where rmcp gives none.
//!
//! rmcp reads newline-delimited JSON-RPC and drops, without a word, a line that is not UTF-8 or
//! not JSON, and one longer than its limit: the client never learns why its request went
//! unanswered. Here a thread reads stdin first: such a line is answered with `-32700` (not JSON)
//! or `-32600` (too long) and told on stderr; JSON that is no JSON-RPC message of a client is
//! answered with `-32600`, its reason and its id when it has one (rmcp's answer has neither); the
//! rest goes to rmcp as it came. Every line on stdout is written whole, under stdout's lock, so
//! these answers never cut into rmcp's.

use std::io::{BufRead, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt, DuplexStream};

/// The longest line read, in bytes (rmcp's own limit).
pub const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// What rmcp reads (the lines that passed) and where it writes.
pub fn transport() -> std::io::Result<(DuplexStream, LineOut)> {
    let (for_rmcp, mut from_reader) = tokio::io::duplex(64 * 1024);
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("agent-intercom-mcp-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            read_lines(&mut stdin.lock(), |line| {
                runtime.block_on(from_reader.write_all(line)).is_ok()
            });
            // Dropping the writer is rmcp's end of input.
            let _ = runtime.block_on(from_reader.shutdown());
        })?;
    Ok((for_rmcp, LineOut::default()))
}

/// Reads `input` line by line, each within [`MAX_LINE`]; hands each good line (with its `\n`)
/// to `pass` until it returns false, and answers the others on stdout.
fn read_lines(input: &mut impl BufRead, mut pass: impl FnMut(&[u8]) -> bool) {
    let mut line = Vec::new();
    loop {
        match read_line(input, &mut line) {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong) => {
                let why = format!("a line longer than {MAX_LINE} bytes was dropped");
                log!("{why}");
                answer(INVALID_REQUEST, &why, Value::Null);
            }
            Ok(Line::Whole) => match check(&line) {
                Ok(()) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if !pass(&line) {
                        return;
                    }
                }
                Err((code, why, id)) => {
                    log!("a line on stdin {why}: answered {code}");
                    answer(code, &why, id);
                }
            },
        }
    }
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

/// The next line into `line` (cleared first), never holding more than [`MAX_LINE`] bytes: a
/// longer one is read to its end and dropped.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Line> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if line.is_empty() {
                Line::Eof
            } else {
                Line::Whole
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |at| at + 1);
        if !too_long && line.len() + take > MAX_LINE {
            too_long = true;
            line.clear();
        }
        if !too_long {
            line.extend_from_slice(&available[..take]);
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}

/// Whether rmcp can take `line`; else the code, reason and id to answer with.
fn check(line: &[u8]) -> Result<(), (i64, String, Value)> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    if text.is_empty() {
        return Ok(());
    }
    let Ok(text) = std::str::from_utf8(text) else {
        return Err((PARSE_ERROR, "is not JSON (not UTF-8)".into(), Value::Null));
    };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| (PARSE_ERROR, format!("is not JSON ({e})"), Value::Null))?;
    // A notification rmcp does not know is rmcp's to ignore.
    if value.get("method").is_some() && value.get("id").is_none() {
        return Ok(());
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(_) => Ok(()),
        Err(e) => {
            let id = match value.get("id") {
                Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
                _ => Value::Null,
            };
            Err((
                INVALID_REQUEST,
                format!("is not a JSON-RPC request ({e})"),
                id,
            ))
        }
    }
}

/// Writes one error response on stdout, whole.
fn answer(code: i64, why: &str, id: Value) {
    let message = if code == PARSE_ERROR {
        format!("Parse error: the line {why}")
    } else {
        format!("Invalid request: {why}")
    };
    let response = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut bytes = response.to_string().into_bytes();
    bytes.push(b'\n');
    let _ = write_whole(&bytes);
}

fn write_whole(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// rmcp's stdout: what it writes goes out a whole line at a time, under stdout's lock.
#[derive(Default)]
pub struct LineOut {
    pending: Vec<u8>,
}

impl LineOut {
    fn write_lines(&mut self) -> std::io::Result<()> {
        let Some(last) = self.pending.iter().rposition(|b| *b == b'\n') else {
            return Ok(());
        };
        let lines: Vec<u8> = self.pending.drain(..=last).collect();
        tokio::task::block_in_place(|| write_whole(&lines))
    }
}

impl AsyncWrite for LineOut {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.pending.extend_from_slice(buf);
        Poll::Ready(this.write_lines().map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(self.get_mut().write_lines())
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let rest = std::mem::take(&mut this.pending);
        Poll::Ready(if rest.is_empty() {
            Ok(())
        } else {
            tokio::task::block_in_place(|| write_whole(&rest))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_checked() {
        let long = vec![b'x'; MAX_LINE + 10];
        let mut input: Vec<u8> = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nlast");
        let mut reader = std::io::BufReader::with_capacity(1000, &input[..]);
        let mut line = Vec::new();
        assert!(matches!(read_line(&mut reader, &mut line), Ok(Line::Whole)));
        assert!(check(&line).is_ok());
        assert!(matches!(
            read_line(&mut reader, &mut line),
            Ok(Line::TooLong)
        ));
        assert!(matches!(read_line(&mut reader, &mut line), Ok(Line::Whole)));
        assert_eq!(line, b"last");
        assert!(matches!(read_line(&mut reader, &mut line), Ok(Line::Eof)));
        assert_eq!(check(b"\xff\n").unwrap_err().0, PARSE_ERROR);
        assert_eq!(check(b"{\n").unwrap_err().0, PARSE_ERROR);
        let (code, _, id) = check(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#).unwrap_err();
        assert_eq!((code, id), (INVALID_REQUEST, json!(7)));
        assert_eq!(check(b"[1]").unwrap_err().2, Value::Null);
        assert!(check(br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#).is_ok());
        assert!(check(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\"}").is_ok());
        assert!(check(b"\r\n").is_ok());
    }
}
