//! What the screen shows and how keys change it: the latest snapshot (or why there is none),
//! the filter, the selected row, the list or one session's details.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::model::{Offline, Session, Snapshot};

/// The broker as last heard of.
pub enum Link {
    /// The last read succeeded.
    Up,
    /// The last read failed (`why`), since `since`: the screen says so and keeps trying.
    Down { since: Instant, why: String },
}

/// Which screen is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// The tables.
    List,
    /// One session's details, by id.
    Details(String),
}

/// A row of the sessions table: a connected session or an offline recipient.
#[derive(Clone, Copy)]
pub enum Row<'a> {
    Live(&'a Session),
    Offline(&'a Offline),
}

impl Row<'_> {
    pub fn id(&self) -> &str {
        match self {
            Row::Live(s) => &s.id,
            Row::Offline(o) => &o.id,
        }
    }

    fn matches(&self, needle: &str) -> bool {
        let hay: Vec<&str> = match self {
            Row::Live(s) => vec![
                &s.id,
                s.name.as_deref().unwrap_or(""),
                &s.group,
                &s.model,
                &s.cwd,
                s.status.as_deref().unwrap_or(""),
                &s.origin,
            ],
            Row::Offline(o) => vec![&o.id, "offline"],
        };
        hay.iter().any(|h| h.to_lowercase().contains(needle))
    }
}

/// The watcher's state.
pub struct App {
    pub socket: String,
    pub snapshot: Option<Snapshot>,
    pub link: Link,
    pub filter: String,
    /// Typing into the filter.
    pub editing: bool,
    pub selected: usize,
    /// The selected row's id, so the selection follows its row across refreshes.
    selected_id: Option<String>,
    pub view: View,
    pub quit: bool,
}

impl App {
    pub fn new(socket: String, first: Snapshot) -> App {
        App {
            socket,
            snapshot: Some(first),
            link: Link::Up,
            filter: String::new(),
            editing: false,
            selected: 0,
            selected_id: None,
            view: View::List,
            quit: false,
        }
    }

    /// A read of the broker: a new snapshot, or why there is none.
    pub fn update(&mut self, read: Result<Snapshot, String>) {
        match read {
            Ok(snapshot) => {
                self.snapshot = Some(snapshot);
                self.link = Link::Up;
            }
            Err(why) => {
                self.snapshot = None;
                if let Link::Down { why: old, .. } = &mut self.link {
                    *old = why;
                } else {
                    self.link = Link::Down {
                        since: Instant::now(),
                        why,
                    };
                }
            }
        }
        self.follow_selection();
    }

    /// The sessions table's rows, filtered.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let Some(s) = &self.snapshot else {
            return Vec::new();
        };
        let needle = self.filter.to_lowercase();
        s.sessions
            .iter()
            .map(Row::Live)
            .chain(s.offline.iter().map(Row::Offline))
            .filter(|r| needle.is_empty() || r.matches(&needle))
            .collect()
    }

    fn follow_selection(&mut self) {
        let ids: Vec<String> = self.rows().iter().map(|r| r.id().to_string()).collect();
        if let Some(at) = self
            .selected_id
            .as_deref()
            .and_then(|id| ids.iter().position(|r| r == id))
        {
            self.selected = at;
        }
        self.selected = self.selected.min(ids.len().saturating_sub(1));
        // While there is nothing to show (the broker is down) the selection is kept for later.
        if let Some(id) = ids.into_iter().nth(self.selected) {
            self.selected_id = Some(id);
        }
    }

    fn move_by(&mut self, delta: isize) {
        let len = self.rows().len();
        if len == 0 {
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(len - 1);
        self.selected_id = self.rows().get(self.selected).map(|r| r.id().to_string());
    }

    /// Handles one key.
    pub fn key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('d')) {
            self.quit = true;
            return;
        }
        if self.editing {
            match key.code {
                KeyCode::Enter => self.editing = false,
                KeyCode::Esc => {
                    self.editing = false;
                    self.filter.clear();
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) if !ctrl => self.filter.push(c),
                _ => {}
            }
            self.follow_selection();
            return;
        }
        match (&self.view, key.code) {
            (_, KeyCode::Char('q')) => self.quit = true,
            (View::Details(_), KeyCode::Esc | KeyCode::Backspace) => self.view = View::List,
            (View::Details(_), _) => {}
            (View::List, KeyCode::Char('/')) => self.editing = true,
            (View::List, KeyCode::Esc) => {
                self.filter.clear();
                self.follow_selection();
            }
            (View::List, KeyCode::Up | KeyCode::Char('k')) => self.move_by(-1),
            (View::List, KeyCode::Down | KeyCode::Char('j')) => self.move_by(1),
            (View::List, KeyCode::PageUp) => self.move_by(-10),
            (View::List, KeyCode::PageDown) => self.move_by(10),
            (View::List, KeyCode::Home) => self.move_by(isize::MIN / 2),
            (View::List, KeyCode::End) => self.move_by(isize::MAX / 2),
            (View::List, KeyCode::Enter) => {
                if let Some(row) = self.rows().get(self.selected) {
                    self.view = View::Details(row.id().to_string());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(app: &mut App, code: KeyCode) {
        app.key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn snapshot(names: &[&str]) -> Snapshot {
        Snapshot {
            sessions: names
                .iter()
                .map(|n| Session {
                    id: format!("id-{n}"),
                    name: Some(n.to_string()),
                    ..Session::default()
                })
                .collect(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn filter_move_details_and_quit() {
        let mut app = App::new("s".into(), snapshot(&["alpha", "beta", "gamma"]));
        press(&mut app, KeyCode::Down);
        press(&mut app, KeyCode::Down);
        press(&mut app, KeyCode::Down);
        assert_eq!(app.selected, 2);
        press(&mut app, KeyCode::Char('/'));
        for c in "ET".chars() {
            press(&mut app, KeyCode::Char(c));
        }
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.rows().len(), 1);
        assert_eq!(app.rows()[0].id(), "id-beta");
        assert_eq!(app.selected, 0);
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.view, View::Details("id-beta".into()));
        press(&mut app, KeyCode::Down);
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.view, View::List);
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.rows().len(), 3);
        assert!(!app.quit);
        press(&mut app, KeyCode::Char('q'));
        assert!(app.quit);
    }

    #[test]
    fn the_selection_follows_its_row_and_a_lost_broker_empties_the_table() {
        let mut app = App::new("s".into(), snapshot(&["alpha", "beta"]));
        press(&mut app, KeyCode::Down);
        app.update(Ok(snapshot(&["aardvark", "alpha", "beta"])));
        assert_eq!(app.rows()[app.selected].id(), "id-beta");
        app.update(Err("gone".into()));
        assert!(app.rows().is_empty() && matches!(app.link, Link::Down { .. }));
        app.update(Ok(snapshot(&["beta"])));
        assert!(matches!(app.link, Link::Up));
        assert_eq!(app.selected, 0);
        let mut ctrl_c = App::new("s".into(), snapshot(&[]));
        ctrl_c.key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(ctrl_c.quit);
    }
}
