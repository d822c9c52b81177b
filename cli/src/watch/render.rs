//! Drawing the screen: a header (the broker, its uptime and store size, the counts), the
//! sessions table, the asks in flight, the traffic sparklines and a footer with the keys; or one
//! session's details. Columns and panes that do not fit the terminal are left out.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Cell, Paragraph, Row as TableRow, Sparkline, Table, TableState, Wrap,
};

use super::input::{App, Link, Row, View};
use super::model::{Snapshot, bytes, duration};

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &App) {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header_line(app)), header);
    f.render_widget(Paragraph::new(footer_line(app)), footer);
    let Some(snapshot) = &app.snapshot else {
        return down(f, body, app);
    };
    match &app.view {
        View::Details(id) => details(f, body, app, snapshot, id),
        View::List => tables(f, body, app, snapshot),
    }
}

/// Two lines: the broker (or that it is down), then the counts.
fn header_line(app: &App) -> Text<'static> {
    let title = Span::from(" agent-intercom watch ").bold().reversed();
    let Some(s) = &app.snapshot else {
        let why = Span::from(" broker not running: reconnecting ")
            .bold()
            .red();
        return Text::from(Line::from(vec![title, why]));
    };
    let broker = format!(
        " broker pid {} · up {} · store {} · {}",
        s.pid,
        duration(s.uptime_ms),
        bytes(s.store_bytes),
        app.socket
    );
    let groups: Vec<String> = s.groups.iter().map(|(l, n)| format!("{l}: {n}")).collect();
    let asks = match s.deferred_asks {
        0 => format!("{} asks", s.asks_total),
        d => format!("{} asks ({d} deferred)", s.asks_total),
    };
    let counts = format!(
        " {} sessions{} · {asks} · {} queued",
        s.sessions_total,
        if groups.is_empty() {
            String::new()
        } else {
            format!(" ({})", groups.join(", "))
        },
        s.queued_messages,
    );
    Text::from(vec![
        Line::from(vec![title, Span::from(broker)]),
        Line::from(counts),
    ])
}

fn footer_line(app: &App) -> Line<'static> {
    if app.editing {
        return Line::from(vec![
            Span::from(format!(" filter: {}▏", app.filter)).bold(),
            Span::from("  enter keep · esc clear").dim(),
        ]);
    }
    let keys = match app.view {
        View::List => " q quit · / filter · ↑↓ move · enter details",
        View::Details(_) => " esc back · q quit",
    };
    let mut spans = vec![Span::from(keys).dim()];
    if !app.filter.is_empty() {
        spans.push(Span::from(format!("   filter: {}", app.filter)).bold());
    }
    Line::from(spans)
}

fn down(f: &mut Frame, area: Rect, app: &App) {
    let (since, why) = match &app.link {
        Link::Down { since, why } => (since.elapsed().as_millis() as u64, why.as_str()),
        Link::Up => (0, ""),
    };
    let text = Text::from(vec![
        Line::from(""),
        Line::from(format!(" The broker is not running at {}.", app.socket)).bold(),
        Line::from(format!(
            " Down for {}; trying again every second, and showing it again as soon as one starts.",
            duration(since)
        )),
        Line::from(""),
        Line::from(format!(" {why}")).dim(),
    ]);
    let block = Block::bordered().title(" broker not running ").red();
    f.render_widget(
        Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
        area,
    );
}

fn tables(f: &mut Frame, area: Rect, app: &App, s: &Snapshot) {
    let asks_height = (s.asks.len() as u16 + 3).clamp(4, (area.height / 3).max(4));
    let traffic_height = if area.height >= 18 { 5 } else { 0 };
    let [sessions, asks, traffic] = Layout::vertical([
        Constraint::Min(4),
        Constraint::Length(asks_height),
        Constraint::Length(traffic_height),
    ])
    .areas(area);
    sessions_table(f, sessions, app, s);
    asks_table(f, asks, s);
    if traffic_height > 0 {
        traffic_pane(f, traffic, s);
    }
}

/// A column of the sessions table: its title, width, the narrowest screen it shows on, and
/// its cell for a row.
struct Column {
    title: &'static str,
    width: Constraint,
    from_width: u16,
    cell: fn(&Row<'_>) -> String,
}

const COLUMNS: [Column; 9] = [
    Column {
        title: "GROUP",
        width: Constraint::Length(9),
        from_width: 0,
        cell: |r| match r {
            Row::Live(s) => s.group.clone(),
            Row::Offline(_) => "offline".into(),
        },
    },
    Column {
        title: "NAME",
        width: Constraint::Length(16),
        from_width: 0,
        cell: |r| match r {
            Row::Live(s) => s.name.clone().unwrap_or_else(|| "—".into()),
            Row::Offline(_) => "—".into(),
        },
    },
    Column {
        title: "ID",
        width: Constraint::Length(8),
        from_width: 50,
        cell: |r| match r {
            Row::Live(s) => s.short_id.clone(),
            Row::Offline(o) => o.short_id.clone(),
        },
    },
    Column {
        title: "MODEL",
        width: Constraint::Length(14),
        from_width: 90,
        cell: |r| match r {
            Row::Live(s) => s.model.clone(),
            Row::Offline(_) => String::new(),
        },
    },
    Column {
        title: "WHERE",
        width: Constraint::Length(6),
        from_width: 70,
        cell: |r| match r {
            Row::Live(s) => s.origin.clone(),
            Row::Offline(_) => String::new(),
        },
    },
    Column {
        title: "IDLE",
        width: Constraint::Length(6),
        from_width: 40,
        cell: |r| match r {
            Row::Live(s) => duration(s.idle_ms),
            Row::Offline(_) => String::new(),
        },
    },
    Column {
        title: "QUEUED",
        width: Constraint::Length(6),
        from_width: 0,
        cell: |r| match r {
            Row::Live(s) => s.queued.to_string(),
            Row::Offline(o) => o.queued.to_string(),
        },
    },
    Column {
        title: "STATUS",
        width: Constraint::Fill(1),
        from_width: 60,
        cell: |r| match r {
            Row::Live(s) => s.status.clone().unwrap_or_default(),
            Row::Offline(o) => format!("offline, {} waiting", bytes(o.queued_bytes)),
        },
    },
    Column {
        title: "CWD",
        width: Constraint::Fill(1),
        from_width: 110,
        cell: |r| match r {
            Row::Live(s) => s.cwd.clone(),
            Row::Offline(_) => String::new(),
        },
    },
];

fn sessions_table(f: &mut Frame, area: Rect, app: &App, s: &Snapshot) {
    let columns: Vec<&Column> = COLUMNS
        .iter()
        .filter(|c| area.width >= c.from_width)
        .collect();
    let rows = app.rows();
    let body = rows.iter().map(|r| {
        let row = TableRow::new(columns.iter().map(|c| Cell::from((c.cell)(r))));
        match r {
            Row::Offline(_) => row.dim(),
            Row::Live(_) => row,
        }
    });
    let header = TableRow::new(columns.iter().map(|c| Cell::from(c.title))).bold();
    let title = format!(
        " Sessions ({} connected, {} offline with queued messages) ",
        s.sessions_total,
        s.offline.len()
    );
    let table = Table::new(body, columns.iter().map(|c| c.width))
        .header(header)
        .block(Block::bordered().title(title))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected((!rows.is_empty()).then_some(app.selected));
    f.render_stateful_widget(table, area, &mut state);
}

fn asks_table(f: &mut Frame, area: Rect, s: &Snapshot) {
    let rows = s.asks.iter().map(|a| {
        let state = if a.deferred { "deferred" } else { "waiting" };
        let row = TableRow::new(vec![
            Cell::from(format!("{} → {}", a.from.label(), a.to.label())),
            Cell::from(duration(a.age_ms)),
            Cell::from(duration(a.expires_in_ms)),
            Cell::from(state),
        ]);
        if a.deferred { row.yellow() } else { row }
    });
    let widths = [
        Constraint::Fill(1),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(9),
    ];
    let header = TableRow::new(vec!["ASKER → ASKED", "AGE", "EXPIRES", "STATE"]).bold();
    let title = format!(" Asks in flight ({}) ", s.asks_total);
    let table = Table::new(rows, widths)
        .header(header)
        .block(Block::bordered().title(title));
    f.render_widget(table, area);
}

fn traffic_pane(f: &mut Frame, area: Rect, s: &Snapshot) {
    let [left, right] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(area);
    let minutes = duration(s.interval_ms * s.messages.len() as u64);
    let per = duration(s.interval_ms);
    for (area, name, series, total) in [
        (left, "messages", &s.messages, s.total_messages),
        (right, "asks", &s.ask_rates, s.total_asks),
    ] {
        // The newest intervals that fit, ending with the current one.
        let fits = area.width.saturating_sub(2) as usize;
        let data = &series[series.len().saturating_sub(fits)..];
        let now = series.last().copied().unwrap_or(0);
        let title = format!(" {name} per {per} · {minutes} · now {now} · total {total} ");
        let spark = Sparkline::default()
            .block(Block::bordered().title(title))
            .data(data)
            .style(Style::new().cyan());
        f.render_widget(spark, area);
    }
}

fn field(name: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::from(format!(" {name:<18}")).bold(),
        Span::from(value),
    ])
}

fn details(f: &mut Frame, area: Rect, app: &App, s: &Snapshot, id: &str) {
    let mut lines = Vec::new();
    let row = app.rows().into_iter().find(|r| r.id() == id);
    match row {
        Some(Row::Live(x)) => {
            lines.push(field("name", x.name.clone().unwrap_or_else(|| "—".into())));
            lines.push(field("id", x.id.clone()));
            lines.push(field("group", x.group.clone()));
            lines.push(field("model", x.model.clone()));
            lines.push(field("working directory", x.cwd.clone()));
            lines.push(field(
                "status",
                x.status.clone().unwrap_or_else(|| "—".into()),
            ));
            lines.push(field("idle", duration(x.idle_ms)));
            let origin = match &x.remote_host {
                Some(host) => format!("{} (host {host})", x.origin),
                None => x.origin.clone(),
            };
            lines.push(field("origin", origin));
            lines.push(field("pid", x.pid.clone()));
            lines.push(field("queued for it", x.queued.to_string()));
            lines.push(field("asks it waits on", x.asking.to_string()));
        }
        Some(Row::Offline(o)) => {
            lines.push(field("id", o.id.clone()));
            lines.push(field("state", "offline (known, not connected)".into()));
            lines.push(field("queued for it", o.queued.to_string()));
            lines.push(field("queued bytes", bytes(o.queued_bytes)));
        }
        None => lines.push(Line::from(format!(" {id} is no longer connected.")).bold()),
    }
    let involved: Vec<_> = s
        .asks
        .iter()
        .filter(|a| a.from.id == id || a.to.id == id)
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(format!(" Asks in flight involving it: {}", involved.len())).bold());
    for a in involved {
        let state = if a.deferred { "deferred" } else { "waiting" };
        lines.push(Line::from(format!(
            "   {} → {}  {}  {state}",
            a.from.label(),
            a.to.label(),
            duration(a.age_ms)
        )));
    }
    let block = Block::bordered().title(" Session ");
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}
