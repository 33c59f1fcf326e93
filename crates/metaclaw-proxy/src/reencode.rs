//! Re-encoding an OpenAI chat-completion chunk stream in another API's event grammar, event
//! by event as chunks arrive (Anthropic Messages, OpenAI Responses). `forward` drives any
//! encoder through this trait, so each dialect only knows its own events.

use bytes::{BufMut, BytesMut};
use serde_json::Value;

/// What one upstream SSE event did to the translated stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Relayed {
    /// The stream goes on.
    More,
    /// `[DONE]`: the stream ended normally.
    Done,
    /// The upstream sent an error chunk; the message was relayed as the client's error event.
    Broken(String),
}

/// A chat-completions stream translated into the client's event grammar.
pub(crate) trait Reencode: Send + 'static {
    /// The data of one upstream SSE event.
    fn on_event(&mut self, data: &str, out: &mut BytesMut) -> Relayed;
    /// The upstream stream broke off midway.
    fn on_broken(&mut self, message: &str, out: &mut BytesMut);
    /// The upstream stream ended without `[DONE]`.
    fn on_end(&mut self, out: &mut BytesMut);
}

/// One SSE frame with an event name.
pub(crate) fn write_event(out: &mut BytesMut, event: &str, data: &Value) {
    out.put_slice(b"event: ");
    out.put_slice(event.as_bytes());
    out.put_slice(b"\ndata: ");
    out.put_slice(data.to_string().as_bytes());
    out.put_slice(b"\n\n");
}
