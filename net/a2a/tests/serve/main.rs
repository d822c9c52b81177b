//! `agent-intercom serve` over real sockets and a real SQLite store: every method of A2A 1.0,
//! 0.3 and the legacy 0.1 `tasks/send`, every error code, idempotent sends, honest cancel,
//! blocking sends completed by a local agent through the store, restarts, limits and the Agent
//! Card. The client is a plain HTTP/1.1 client over `TcpStream` (`client.rs`).

mod card;
mod client;
mod connections;
mod gateway;
mod handoff;
mod limits;
mod numbers;
mod oversize;
mod signed;
mod streams;
mod v03;
mod v1;
