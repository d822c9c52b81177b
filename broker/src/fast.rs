//! The frame sent most often, read without a `serde_json::Value`.
//!
//! Every delivered message is acknowledged by its receiver with
//! `{"type":"message_received","deliveryId":"…"}`: half of all the frames a busy broker reads.
//! [`parse_ack`] reads that frame straight into its one field. It takes only the plain form
//! (exactly those two members, no escape in the text, no byte the lone-surrogate holding of
//! [`crate::jstext`] would rewrite, an id within the limit); any other frame, including every
//! malformed one, is left to the general path ([`crate::wire::parse_client_frame`]), which reads
//! the frames this one accepts the same way (see the tests).

use serde::Deserialize;

use crate::config::BrokerConfig;
use crate::wire::js_len;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ack<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(rename = "deliveryId", borrow)]
    delivery_id: &'a str,
}

/// The delivery id of a plain `message_received` frame; None for any other frame.
pub fn parse_ack(payload: &[u8], config: &BrokerConfig) -> Option<String> {
    // 0xEF leads U+FDD0, which jstext holds; a backslash starts an escape. An object only: the
    // derived reader would also take the two fields as an array.
    if payload.iter().any(|&b| b == 0xEF || b == b'\\')
        || payload.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{')
    {
        return None;
    }
    let ack: Ack<'_> = serde_json::from_slice(payload).ok()?;
    (ack.kind == "message_received" && js_len(ack.delivery_id) <= config.max_message_id_len)
        .then(|| ack.delivery_id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ClientFrame, parse_client_frame};

    fn general(payload: &[u8], config: &BrokerConfig) -> Option<ClientFrame> {
        let value = crate::jstext::parse_frame(payload).ok()?;
        parse_client_frame(&value, config).ok()
    }

    #[test]
    fn the_plain_acknowledgement_reads_as_the_general_path_reads_it() {
        let config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
        let long = "d".repeat(config.max_message_id_len);
        let plain = [
            r#"{"type":"message_received","deliveryId":"5f0c"}"#.to_string(),
            r#" { "deliveryId" : "x" , "type" : "message_received" } "#.to_string(),
            r#"{"type":"message_received","deliveryId":""}"#.to_string(),
            format!(r#"{{"type":"message_received","deliveryId":"{long}"}}"#),
            "{\"type\":\"message_received\",\"deliveryId\":\"caf\u{e9} \u{1f600}\"}".to_string(),
        ];
        for payload in plain {
            let id = parse_ack(payload.as_bytes(), &config).expect(&payload);
            assert_eq!(
                general(payload.as_bytes(), &config),
                Some(ClientFrame::MessageReceived { delivery_id: id }),
                "{payload}"
            );
        }
    }

    #[test]
    fn every_other_frame_is_left_to_the_general_path() {
        let config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
        let too_long = "d".repeat(config.max_message_id_len + 1);
        let others = [
            // Other kinds, other shapes.
            r#"{"type":"send","deliveryId":"x"}"#.to_string(),
            r#"{"type":"message_received"}"#.to_string(),
            r#"{"type":"message_received","deliveryId":7}"#.to_string(),
            r#"{"type":"message_received","deliveryId":"x","extra":1}"#.to_string(),
            r#"{"type":"message_received","deliveryId":"x","deliveryId":"y"}"#.to_string(),
            r#"["message_received","x"]"#.to_string(),
            r#"{"type":"message_received","deliveryId":"x""#.to_string(),
            format!(r#"{{"type":"message_received","deliveryId":"{too_long}"}}"#),
            // Escapes and held characters: the general path decides them.
            r#"{"type":"message_received","deliveryId":"\ud800"}"#.to_string(),
            r#"{"type":"message_received","deliveryId":"a\"b"}"#.to_string(),
            "{\"type\":\"message_received\",\"deliveryId\":\"\u{fdd0}\"}".to_string(),
        ];
        for payload in others {
            assert_eq!(parse_ack(payload.as_bytes(), &config), None, "{payload}");
        }
        assert_eq!(parse_ack(b"\xff\xfe", &config), None);
    }
}
