//! Structured fields (RFC 9651, which keeps RFC 8941's Dictionary, Inner List, String and Byte
//! Sequence unchanged) read strictly, on `sfv`'s parser.
//!
//! RFC 9651 lets a later dictionary key or parameter overwrite an earlier one of the same name.
//! For a signature that is a trap (two parsers that keep different duplicates see different
//! signatures), so every key and parameter repeated here is a refusal.

use std::fmt;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, InnerListVisitor, ItemVisitor, ParameterVisitor,
};
use sfv::{BareItem, BareItemFromInput, ItemSerializer, Key, KeyRef, Parser};

/// Parameters, in the order they were written.
pub(crate) type Params = Vec<(Key, BareItem)>;

/// An item with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    pub bare: BareItem,
    pub params: Params,
}

/// A dictionary member's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Member {
    Item(Item),
    Inner(Vec<Item>, Params),
}

/// A dictionary, members in order.
pub(crate) type Dictionary = Vec<(Key, Member)>;

/// A key written twice.
#[derive(Debug)]
struct Repeated(&'static str, String);

impl fmt::Display for Repeated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} {:?} is written twice", self.0, self.1)
    }
}

impl std::error::Error for Repeated {}

fn placeholder() -> Item {
    Item {
        bare: BareItem::Boolean(false),
        params: Vec::new(),
    }
}

struct Dict(Dictionary);

impl<'de> DictionaryVisitor<'de> for Dict {
    type Out = Dictionary;
    type Error = Repeated;

    fn entry(&mut self, key: &'de KeyRef) -> Result<impl EntryVisitor<'de>, Repeated> {
        if self.0.iter().any(|(k, _)| k.as_str() == key.as_str()) {
            return Err(Repeated("dictionary key", key.as_str().to_string()));
        }
        self.0.push((key.to_owned(), Member::Item(placeholder())));
        Ok(Slot(self.0.last_mut().map(|(_, member)| member)))
    }

    fn finish(self) -> Result<Dictionary, Repeated> {
        Ok(self.0)
    }
}

/// Where one dictionary member goes (always `Some`: the member was just pushed).
struct Slot<'a>(Option<&'a mut Member>);

impl<'de> EntryVisitor<'de> for Slot<'_> {
    type Error = Repeated;

    fn item(self) -> Result<impl ItemVisitor<'de>, Repeated> {
        Ok(ItemSlot(self.0.and_then(|member| match member {
            Member::Item(item) => Some(item),
            Member::Inner(..) => None,
        })))
    }

    fn inner_list(self) -> Result<impl InnerListVisitor<'de>, Repeated> {
        Ok(InnerSlot(self.0.and_then(|member| {
            *member = Member::Inner(Vec::new(), Vec::new());
            match member {
                Member::Inner(items, params) => Some((items, params)),
                Member::Item(_) => None,
            }
        })))
    }
}

struct ItemSlot<'a>(Option<&'a mut Item>);

impl<'de> ItemVisitor<'de> for ItemSlot<'_> {
    type Out = ();
    type Error = Repeated;

    fn bare_item(
        self,
        bare: BareItemFromInput<'de>,
    ) -> Result<impl ParameterVisitor<'de, Out = ()>, Repeated> {
        Ok(ParamSlot(self.0.map(|item| {
            item.bare = bare.into();
            &mut item.params
        })))
    }
}

struct ParamSlot<'a>(Option<&'a mut Params>);

impl<'de> ParameterVisitor<'de> for ParamSlot<'_> {
    type Out = ();
    type Error = Repeated;

    fn parameter(
        &mut self,
        key: &'de KeyRef,
        value: BareItemFromInput<'de>,
    ) -> Result<(), Repeated> {
        if let Some(params) = self.0.as_deref_mut() {
            if params.iter().any(|(k, _)| k.as_str() == key.as_str()) {
                return Err(Repeated("parameter", key.as_str().to_string()));
            }
            params.push((key.to_owned(), value.into()));
        }
        Ok(())
    }

    fn finish(self) -> Result<(), Repeated> {
        Ok(())
    }
}

struct InnerSlot<'a>(Option<(&'a mut Vec<Item>, &'a mut Params)>);

impl<'de> InnerListVisitor<'de> for InnerSlot<'_> {
    type Error = Repeated;

    fn item(&mut self) -> Result<impl ItemVisitor<'de>, Repeated> {
        Ok(ItemSlot(self.0.as_mut().and_then(|(items, _)| {
            items.push(placeholder());
            items.last_mut()
        })))
    }

    fn finish(self) -> Result<impl ParameterVisitor<'de>, Repeated> {
        Ok(ParamSlot(self.0.map(|(_, params)| params)))
    }
}

/// A Dictionary field value; the message says what is wrong.
pub(crate) fn dictionary(text: &[u8]) -> Result<Dictionary, String> {
    Parser::new(text)
        .parse_dictionary_with_visitor(Dict(Vec::new()))
        .map_err(|e| format!("not a structured-field Dictionary: {e}"))
}

/// An Item field value (a component identifier as written alone).
pub(crate) fn item(text: &[u8]) -> Result<Item, String> {
    let mut out = placeholder();
    Parser::new(text)
        .parse_item_with_visitor(ItemSlot(Some(&mut out)))
        .map_err(|e| format!("not a structured-field Item: {e}"))?;
    Ok(out)
}

/// Appends the serialization of a bare item.
pub(crate) fn write_bare(out: &mut String, bare: &BareItem) {
    let _ = ItemSerializer::with_buffer(out).bare_item(bare).finish();
}

/// Appends `;key[=value]` for each parameter (a true Boolean is written as the key alone).
pub(crate) fn write_params(out: &mut String, params: &Params) {
    for (key, value) in params {
        out.push(';');
        out.push_str(key.as_str());
        if *value != BareItem::Boolean(true) {
            out.push('=');
            write_bare(out, value);
        }
    }
}

/// Appends an item with its parameters.
pub(crate) fn write_item(out: &mut String, item: &Item) {
    write_bare(out, &item.bare);
    write_params(out, &item.params);
}

/// Appends a member's value (the text after `key=` in a dictionary).
pub(crate) fn write_member(out: &mut String, member: &Member) {
    match member {
        Member::Item(item) => write_item(out, item),
        Member::Inner(items, params) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_item(out, item);
            }
            out.push(')');
            write_params(out, params);
        }
    }
}

/// Appends a whole dictionary (a member whose value is a parameterless-or-not true Boolean
/// is written as its key and parameters, RFC 9651 §4.1.2).
pub(crate) fn write_dictionary(out: &mut String, dict: &Dictionary) {
    for (i, (key, member)) in dict.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(key.as_str());
        match member {
            Member::Item(item) if item.bare == BareItem::Boolean(true) => {
                write_params(out, &item.params)
            }
            _ => {
                out.push('=');
                write_member(out, member);
            }
        }
    }
}

/// A key, when `text` is one (lowercase, digits, `_-.*`, starting with a letter or `*`).
pub(crate) fn key(text: &str) -> Option<Key> {
    Key::from_string(text.to_string()).ok()
}

/// A String bare item, when `text` is printable ASCII.
pub(crate) fn string(text: &str) -> Option<BareItem> {
    sfv::String::from_string(text.to_string())
        .ok()
        .map(BareItem::String)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_refused_at_every_level() {
        assert!(dictionary(b"a=1, b=2").is_ok());
        let e = dictionary(b"a=1, a=2").unwrap_err();
        assert!(e.contains("dictionary key \"a\""), "{e}");
        let e = dictionary(b"a=1;x;x=2").unwrap_err();
        assert!(e.contains("parameter \"x\""), "{e}");
        let e = dictionary(b"a=(\"x\";p \"y\");q=1;q=2").unwrap_err();
        assert!(e.contains("parameter \"q\""), "{e}");
        assert!(item(b"\"@m\";req;req").is_err());
    }

    #[test]
    fn members_serialize_back_canonically() {
        let text = b"sig=(  \"a\"   \"b\";req );created=1;keyid=\"k\", flag;x, n=:AAE=:";
        let dict = dictionary(text).unwrap();
        let mut out = String::new();
        write_dictionary(&mut out, &dict);
        assert_eq!(
            out,
            "sig=(\"a\" \"b\";req);created=1;keyid=\"k\", flag;x, n=:AAE=:"
        );
        assert!(matches!(dict[0].1, Member::Inner(ref items, _) if items.len() == 2));
    }
}
