//! The streaming canonicalizer: validates a JSON text and writes its canonical form in one pass,
//! rewriting only the objects whose keys are out of order.

use std::borrow::Cow;

use super::encode::{Fault, Seg, check_depth, write_string};
use super::parse::Parser;
use super::*;

/// An object member already written to the output: `"key":value` occupies `start..end`.
pub(super) struct Member<'a> {
    key: Cow<'a, str>,
    start: usize,
    end: usize,
}

/// The streaming canonicalizer behind [`canonical_json_of_text`].
pub(super) struct Canon<'a> {
    pub(super) parser: Parser<'a>,
    pub(super) out: String,
    /// Members of the objects being read, innermost last.
    pub(super) members: Vec<Member<'a>>,
    pub(super) scratch: String,
}

impl<'a> Canon<'a> {
    pub(super) fn value(&mut self, depth: usize) -> Result<(), Fault> {
        let start = self.parser.pos;
        match self.parser.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let s = self.parser.string()?;
                write_string(&s, &mut self.out);
                Ok(())
            }
            Some(_) => {
                // Literals and numbers are written exactly as validated: their accepted
                // spelling is already the canonical one.
                self.parser.value(depth)?;
                self.out.push_str(&self.parser.text[start..self.parser.pos]);
                Ok(())
            }
            None => Err(self.parser.syntax("unexpected end of input")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Fault> {
        check_depth(depth)?;
        self.parser.pos += 1;
        self.out.push('[');
        self.parser.skip_ws();
        if self.parser.peek() == Some(b']') {
            self.parser.pos += 1;
            self.out.push(']');
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.parser.skip_ws();
            if index > 0 {
                self.out.push(',');
            }
            self.value(depth + 1).map_err(|f| f.at(Seg::Index(index)))?;
            index += 1;
            self.parser.skip_ws();
            match self.parser.peek() {
                Some(b',') => self.parser.pos += 1,
                Some(b']') => {
                    self.parser.pos += 1;
                    self.out.push(']');
                    return Ok(());
                }
                _ => return Err(self.parser.syntax("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Fault> {
        check_depth(depth)?;
        self.parser.pos += 1;
        self.out.push('{');
        let base = self.members.len();
        self.parser.skip_ws();
        if self.parser.peek() == Some(b'}') {
            self.parser.pos += 1;
            self.out.push('}');
            return Ok(());
        }
        loop {
            self.parser.skip_ws();
            if self.parser.peek() != Some(b'"') {
                return Err(self.parser.syntax("expected a string key"));
            }
            let key = self
                .parser
                .string()
                .map_err(|f| f.at(Seg::Key("[key]".into())))?;
            self.parser.skip_ws();
            self.parser.expect(b':', "expected ':'")?;
            self.parser.skip_ws();
            if self.members.len() > base {
                self.out.push(',');
            }
            let start = self.out.len();
            write_string(&key, &mut self.out);
            self.out.push(':');
            if let Err(fault) = self.value(depth + 1) {
                return Err(fault.at(Seg::Key(key.into_owned())));
            }
            self.members.push(Member {
                key,
                start,
                end: self.out.len(),
            });
            self.parser.skip_ws();
            match self.parser.peek() {
                Some(b',') => self.parser.pos += 1,
                Some(b'}') => {
                    self.parser.pos += 1;
                    break;
                }
                _ => return Err(self.parser.syntax("expected ',' or '}'")),
            }
        }
        let members = &mut self.members[base..];
        if !members
            .windows(2)
            .all(|w| compare_keys(&w[0].key, &w[1].key) == Ordering::Less)
        {
            let region = members[0].start;
            members.sort_by(|x, y| compare_keys(&x.key, &y.key));
            if let Some(pair) = members.windows(2).find(|w| w[0].key == w[1].key) {
                return Err(
                    Fault::new(ErrorCode::DuplicateKey, "key appears more than once")
                        .at(Seg::Key(pair[0].key.to_string())),
                );
            }
            self.scratch.clear();
            self.scratch.push_str(&self.out[region..]);
            self.out.truncate(region);
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out
                    .push_str(&self.scratch[m.start - region..m.end - region]);
            }
        }
        self.members.truncate(base);
        self.out.push('}');
        Ok(())
    }
}
