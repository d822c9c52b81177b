//! Known answers, error paths, and the two canonicalizers held equal.

mod known {
    use super::super::*;

    fn code(text: &str) -> ErrorCode {
        canonical_json_of_text(text).unwrap_err().code()
    }

    #[test]
    fn known_answer() {
        assert_eq!(
            canonical_hash_of_text("boss-test-v1", r#"{"b":2,"a":1}"#).unwrap(),
            "4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2"
        );
    }

    #[test]
    fn sorts_and_escapes_like_javascript() {
        assert_eq!(
            canonical_json_of_text(
                r#" { "b" : [1, {"d":null,"c":true}], "a":"x\u0001\/\u007f\u2028" } "#
            )
            .unwrap(),
            "{\"a\":\"x\\u0001/\u{7f}\u{2028}\",\"b\":[1,{\"c\":true,\"d\":null}]}"
        );
        assert_eq!(
            canonical_json_of_text(r#""\b\f\n\r\t\"\\\u001f""#).unwrap(),
            r#""\b\f\n\r\t\"\\\u001f""#
        );
        // U+FF61 sorts after U+1F600 in UTF-8 byte order but before it in UTF-16 order.
        assert_eq!(
            canonical_json_of_text("{\"\u{ff61}\":1,\"\u{1f600}\":2}").unwrap(),
            "{\"\u{1f600}\":2,\"\u{ff61}\":1}"
        );
    }

    #[test]
    fn integer_like_keys_follow_javascript() {
        assert_eq!(
            canonical_json_of_text(
                r#"{"b":1,"10":2,"9":3,"a":4,"01":5,"-1":6,"4294967295":7,"4294967294":8}"#
            )
            .unwrap(),
            r#"{"9":3,"10":2,"4294967294":8,"-1":6,"01":5,"4294967295":7,"a":4,"b":1}"#
        );
    }

    #[test]
    fn rejections_have_stable_codes() {
        assert_eq!(code("1.5"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("1.0"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("1e3"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("-0"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("9007199254740992"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("-9007199254740992"), ErrorCode::UnsupportedNumber);
        assert_eq!(
            code("123456789012345678901234567890"),
            ErrorCode::UnsupportedNumber
        );
        assert_eq!(
            canonical_json_of_text("-9007199254740991").unwrap(),
            "-9007199254740991"
        );
        assert_eq!(code(r#""\ud800""#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#""\udc00x""#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#"{"\ud800\u0041":1}"#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#"{"a":1,"a":1}"#), ErrorCode::DuplicateKey);
        for bad in [
            "",
            "{",
            "[1,]",
            "01",
            "1.",
            "tru",
            "\"a",
            "\"\u{1}\"",
            "{\"a\" 1}",
            "[1] x",
            "\"\\x\"",
        ] {
            assert_eq!(code(bad), ErrorCode::InvalidJson, "{bad:?}");
        }
        assert_eq!(code(&"[".repeat(MAX_DEPTH + 1)), ErrorCode::NestingTooDeep);
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(canonical_json_of_text(&deep_ok).is_ok());
    }

    #[test]
    fn errors_carry_a_path() {
        let err = canonical_json_of_text(r#"{"a":[0,{"b":1.5}]}"#).unwrap_err();
        assert!(
            err.message().starts_with("$.a[1].b: number must be"),
            "{}",
            err.message()
        );
        let err = canonical_json_of_text(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(
            err.message().starts_with("$.a: key appears more than once"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn domain_rules() {
        for bad in ["", "a b", "tab\t", "é"] {
            assert_eq!(
                canonical_hash_of_text(bad, "1").unwrap_err().code(),
                ErrorCode::InvalidDomain
            );
        }
        let frame =
            canonical_frame("d", &Value::Object(vec![("é".into(), Value::Int(1))])).unwrap();
        assert_eq!(
            frame,
            "agent-intercom-canonical-frame-v1:1:d:8:{\"é\":1}".as_bytes()
        );
    }

    #[test]
    fn value_encoder_checks_ranges() {
        assert_eq!(
            canonical_json(&Value::Int(MAX_SAFE_INTEGER + 1))
                .unwrap_err()
                .code(),
            ErrorCode::UnsupportedNumber
        );
        assert_eq!(
            canonical_json(&Value::Int(i64::MIN)).unwrap_err().code(),
            ErrorCode::UnsupportedNumber
        );
    }

    #[test]
    fn utf16_order() {
        assert_eq!(compare_utf16("a", "ab"), Ordering::Less);
        assert_eq!(compare_utf16("\u{e000}", "\u{10000}"), Ordering::Greater);
        assert_eq!(compare_utf16("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(compare_utf16("Z", "a"), Ordering::Less);
    }
}

mod streaming {
    use super::super::encode::plain_prefix;
    use super::super::*;

    /// A small deterministic generator of JSON texts, valid and invalid, to hold the streaming
    /// canonicalizer equal to parse-then-encode.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }

        fn doc(&mut self, depth: usize, out: &mut String) {
            let choice = if depth > 4 {
                self.next() % 4
            } else {
                self.next() % 7
            };
            match choice {
                0 => out.push_str(self.pick(&[
                    "0",
                    "-1",
                    "42",
                    "9007199254740991",
                    "1.5",
                    "-0",
                    "1e2",
                    "007",
                ])),
                1 => out.push_str(self.pick(&["true", "false", "null", "nul"])),
                2 | 3 => out.push_str(self.pick(&[
                    "\"a\"",
                    "\"\"",
                    "\"\\u00e9\\n\"",
                    "\"\\ud83d\\ude00\"",
                    "\"\\ud800\"",
                    "\"é\u{2028}\"",
                    "\"\\/\\u001F\"",
                    "\"10\"",
                ])),
                4 => {
                    out.push('[');
                    for i in 0..self.next() % 4 {
                        if i > 0 {
                            out.push_str(self.pick(&[",", " , ", ","]));
                        }
                        self.doc(depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..self.next() % 5 {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(self.pick(&[
                            "\"b\"",
                            "\"a\"",
                            "\"10\"",
                            "\"9\"",
                            "\"\\u0061\"",
                            "\"\u{ff61}\"",
                            "\"\u{1f600}\"",
                            "\"\\ud800\"",
                        ]));
                        out.push_str(self.pick(&[":", " : "]));
                        self.doc(depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
    }

    #[test]
    fn streaming_equals_parse_then_encode() {
        let mut generator = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut ok, mut err) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            generator.doc(0, &mut text);
            let streamed = canonical_json_of_text(&text);
            let via_tree = parse(&text).and_then(|v| canonical_json(&v));
            match (&streamed, &via_tree) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{text}");
                    ok += 1;
                }
                (Err(_), Err(_)) => {
                    // A document with several problems may report any one of them.
                    err += 1;
                }
                _ => panic!("{text}: {streamed:?} vs {via_tree:?}"),
            }
        }
        assert!(ok > 1000 && err > 1000, "{ok} ok, {err} errors");
    }

    #[test]
    fn plain_prefix_finds_every_special_byte_at_every_offset() {
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for len in 0..40 {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    bytes.extend_from_slice("é\u{7f}".as_bytes());
                    if at < len {
                        bytes[at] = special;
                    }
                    let expected = if at < len { at } else { bytes.len() };
                    assert_eq!(
                        plain_prefix(&bytes),
                        expected,
                        "special {special:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn corpus_streams_identically() {
        let text = crate::corpus::CORPUS_JSON;
        assert_eq!(
            canonical_json_of_text(text).unwrap(),
            canonical_json(&parse(text).unwrap()).unwrap()
        );
    }
}
