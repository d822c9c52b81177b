use super::*;

#[test]
fn plain_json_keeps_javascript_order_and_last_duplicate() {
    let v = Js::parse_json(r#"{"b":1,"10":2,"9":3,"b":4}"#).unwrap();
    let Js::Object(o) = &v else { panic!() };
    let keys: Vec<&str> = o.members.iter().map(|(k, _)| k.text.as_str()).collect();
    assert_eq!(keys, ["9", "10", "b"]);
    assert_eq!(v.get("b"), Some(&Js::Num(4.0)));
}

#[test]
fn snapshot_markers() {
    let v = Js::parse_snapshot(r#"[!u,N,I,-I,-0,b"12",f,s,p,h,_,{#"a":1},{@},{!}]"#).unwrap();
    let Js::Array(a) = &v else { panic!() };
    assert!(a.extra_keys);
    assert_eq!(a.items[0], Some(Js::Undefined));
    assert!(matches!(a.items[1], Some(Js::Num(n)) if n.is_nan()));
    assert_eq!(a.items[3], Some(Js::Num(f64::NEG_INFINITY)));
    assert!(matches!(a.items[4], Some(Js::Num(n)) if n == 0.0 && n.is_sign_negative()));
    assert_eq!(a.items[5], Some(Js::BigInt("12".into())));
    assert_eq!(a.items[10], None);
    assert!(matches!(&a.items[11], Some(Js::Object(o)) if o.proto == Proto::Null));
    assert!(matches!(&a.items[12], Some(Js::Object(o)) if o.proto == Proto::Other));
    assert!(matches!(&a.items[13], Some(Js::Object(o)) if o.symbols));
    assert!(Js::parse_json("u").is_err());
    assert!(Js::parse_json("[_]").is_err());
}

#[test]
fn lone_surrogates_are_kept_by_kind() {
    let Js::Str(s) = Js::parse_json(r#""a\ud800b""#).unwrap() else {
        panic!()
    };
    assert_eq!(s.lone, Some(Lone::High));
    let Js::Str(s) = Js::parse_json(r#""\udc00\ud83d\ude00""#).unwrap() else {
        panic!()
    };
    assert_eq!(s.lone, Some(Lone::Low));
    assert!(s.text.ends_with('😀'));
    let Js::Str(s) = Js::parse_json(r#""\ud83d\ude00""#).unwrap() else {
        panic!()
    };
    assert_eq!((s.text.as_str(), s.lone), ("😀", None));
}

#[test]
fn numbers_print_as_javascript_does() {
    for (n, text) in [
        (1.0, "1"),
        (-1.5, "-1.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (123.456, "123.456"),
        (9007199254740993.0, "9007199254740992"),
        (f64::NAN, "NaN"),
        (-0.0, "0"),
    ] {
        assert_eq!(number_to_string(n), text);
    }
}

#[test]
fn js_string_and_json() {
    let v = Js::parse_json(r#"[1,null,"a",[2,3],{"x":1}]"#).unwrap();
    assert_eq!(v.js_string(), "1,,a,2,3,[object Object]");
    assert_eq!(v.to_json().unwrap(), r#"[1,null,"a",[2,3],{"x":1}]"#);
    assert_eq!(Js::parse_snapshot("[p]").unwrap().to_json(), None);
}

#[test]
fn malformed_text_is_refused() {
    for text in ["", "[1,", "{\"a\"}", "01", "1.", "\"\\x\"", "[1] 2", "tru"] {
        assert!(Js::parse_json(text).is_err(), "{text}");
    }
    let deep = "[".repeat(MAX_PARSE_DEPTH + 1) + &"]".repeat(MAX_PARSE_DEPTH + 1);
    assert!(Js::parse_json(&deep).is_err());
}

#[test]
fn kept_values_move_in_and_out() {
    let mut kept = vec![Js::array(vec![Js::Num(1.0)]), Js::str("k")];
    kept.reverse();
    let mut next = || kept.pop();
    let (mut v, slots) = Js::parse_snapshot_kept(r#"[r,{"a":[u,r]}]"#, &mut next).unwrap();
    assert_eq!(slots, vec![vec![0], vec![1, 0, 1]]);
    assert_eq!(v.take_at(&slots[1]), Some(Js::str("k")));
    assert_eq!(v.take_at(&slots[0]), Some(Js::array(vec![Js::Num(1.0)])));
    assert_eq!(
        v,
        Js::parse_snapshot(r#"[u,{"a":[u,u]}]"#).unwrap(),
        "taking leaves undefined"
    );
    // With nothing left to give, `r` is an error; without a source it is not a marker at all.
    let mut none = || None;
    assert!(Js::parse_snapshot_kept("[r]", &mut none).is_err());
    assert!(Js::parse_snapshot("[r]").is_err());
}

#[test]
fn a_syntax_error_says_what_and_where() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "unexpected end of text"),
        ("[1,2", 4, "expected ',' or ']'"),
        ("[1] x", 4, "unexpected text after the value"),
        (r#"{"a":1,"b":}"#, 11, "unexpected character"),
        (r#"{"a" 1}"#, 5, "expected ':'"),
        (r#"["abc"#, 5, "unterminated string"),
        ("[1.]", 3, "invalid number"),
        (r#"["\q"]"#, 4, "invalid escape"),
        ("[r]", 1, "unexpected character"),
    ];
    for &(text, offset, message) in cases {
        let error = Js::parse_snapshot(text).unwrap_err();
        assert_eq!((error.offset, error.message), (offset, message), "{text:?}");
    }
    // `r` with nothing left to give.
    let mut none = || None;
    let error = Js::parse_snapshot_kept("[r]", &mut none).unwrap_err();
    assert_eq!((error.offset, error.message), (1, "no kept value for r"));
    // Trailing text after a value read with kept values.
    let mut one = Some(Js::Null);
    let mut give = || one.take();
    let error = Js::parse_snapshot_kept("[r] ]", &mut give).unwrap_err();
    assert_eq!(
        (error.offset, error.message),
        (4, "unexpected text after the value")
    );
}

#[test]
fn numbers_read_exactly() {
    let cases: &[(&str, f64)] = &[
        ("0", 0.0),
        ("7", 7.0),
        ("-12", -12.0),
        ("123456789012345", 123_456_789_012_345.0),
        ("9007199254740993", 9_007_199_254_740_992.0),
        ("1e3", 1000.0),
        ("0.5", 0.5),
        ("-2.5E-3", -0.0025),
    ];
    for &(text, expected) in cases {
        let Js::Num(n) = Js::parse_json(text).unwrap() else {
            panic!("{text}")
        };
        assert_eq!(n.to_bits(), expected.to_bits(), "{text}");
    }
    let Js::Num(n) = Js::parse_json("-0").unwrap() else {
        panic!("-0")
    };
    assert!(n == 0.0 && n.is_sign_negative());
}
