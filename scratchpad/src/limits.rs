//! Rate limits (token buckets shared across processes) and cost accounting.

use agent_intercom_core::scratchpad;
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, params};

use crate::{Store, io};

/// Requests per minute at each level; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// All agents together.
    pub global_per_min: Option<u32>,
    /// One agent.
    pub agent_per_min: Option<u32>,
    /// One tool (across agents).
    pub tool_per_min: Option<u32>,
}

impl RateLimits {
    /// Reads `LEAN_CTX_RATE_LIMIT_{GLOBAL,AGENT,TOOL}_PER_MIN` (or the `LCTX_RATE_LIMIT_...`
    /// aliases; the LEAN_CTX_ name wins when both are set) from `env`. A value that is not a
    /// whole number is an error naming the variable.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<RateLimits, Error> {
        let read = |level: &str| -> Result<Option<u32>, Error> {
            for prefix in ["LEAN_CTX", "LCTX"] {
                let name = format!("{prefix}_RATE_LIMIT_{level}_PER_MIN");
                if let Some(value) = env(&name) {
                    return match value.trim().parse::<u32>() {
                        Ok(n) if n >= 1 => Ok(Some(n)),
                        _ => Err(Error::new(
                            ErrorCode::InvalidArgument,
                            format!(
                                "{name} must be a whole number of requests per minute, at least 1 \
                                 (unset it for no limit)"
                            ),
                        )),
                    };
                }
            }
            Ok(None)
        };
        Ok(RateLimits {
            global_per_min: read("GLOBAL")?,
            agent_per_min: read("AGENT")?,
            tool_per_min: read("TOOL")?,
        })
    }
}

/// The answer of [`Store::take_rate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateDecision {
    /// One token was taken at every limited level.
    Allowed,
    /// Refused; nothing was consumed at any level.
    Refused {
        /// When to retry (rounded up, never 0).
        retry_after_ms: i64,
        /// The levels that refused ("global", "agent", "tool").
        levels: Vec<&'static str>,
    },
}

/// Token usage of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cached input tokens.
    pub cached_tokens: u64,
}

/// Prices per million tokens, in micro-dollars (integers: no rounding drift across processes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pricing {
    /// Per million input tokens.
    pub input_per_million_micros: u64,
    /// Per million output tokens.
    pub output_per_million_micros: u64,
    /// Per million cached tokens.
    pub cached_per_million_micros: u64,
}

impl Pricing {
    /// Cost of a usage, in micro-dollars (rounded up per call).
    pub fn cost_micros(&self, u: &Usage) -> u64 {
        let total = u.input_tokens as u128 * self.input_per_million_micros as u128
            + u.output_tokens as u128 * self.output_per_million_micros as u128
            + u.cached_tokens as u128 * self.cached_per_million_micros as u128;
        total.div_ceil(1_000_000).min(u64::MAX as u128) as u64
    }
}

/// Accumulated cost of one agent with one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostRow {
    /// Agent.
    pub agent: String,
    /// Tool.
    pub tool: String,
    /// Totals.
    pub usage: Usage,
    /// Calls recorded.
    pub calls: u64,
    /// Micro-dollars.
    pub cost_micros: u64,
}

impl Store {
    /// Takes one token at every limited level for `agent` calling `tool`, atomically across
    /// processes. When any level is empty, nothing is taken anywhere and the answer says when to
    /// retry (the longest wait among the refusing levels, rounded up, never 0).
    pub fn take_rate(
        &mut self,
        agent: &str,
        tool: &str,
        limits: &RateLimits,
    ) -> Result<RateDecision, Error> {
        for (name, limit) in [
            ("global", limits.global_per_min),
            ("agent", limits.agent_per_min),
            ("tool", limits.tool_per_min),
        ] {
            if limit == Some(0) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "the {name} rate limit must be at least 1 per minute (omit it for no limit)"
                    ),
                ));
            }
        }
        let now = self.clock.now_ms();
        let levels: Vec<(&'static str, String, u32)> = [
            ("global", "global".to_string(), limits.global_per_min),
            ("agent", format!("agent:{agent}"), limits.agent_per_min),
            ("tool", format!("tool:{tool}"), limits.tool_per_min),
        ]
        .into_iter()
        .filter_map(|(level, key, limit)| limit.map(|l| (level, key, l)))
        .collect();
        let tx = self.write()?;
        let mut buckets = Vec::new();
        for (level, key, per_min) in &levels {
            let stored: Option<(i64, i64)> = tx
                .query_row(
                    "SELECT milli_tokens, refilled_at FROM buckets WHERE key = ?1",
                    [key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(io)?;
            let bucket = match stored {
                Some((milli_tokens, refilled_at)) => scratchpad::Bucket {
                    milli_tokens,
                    refilled_at,
                }
                .refilled(*per_min, now),
                None => scratchpad::Bucket::full(*per_min, now),
            };
            buckets.push((*level, key.clone(), *per_min, bucket));
        }
        let refusing: Vec<(&'static str, i64)> = buckets
            .iter()
            .filter(|(_, _, _, b)| b.milli_tokens < 1000)
            .map(|(level, _, per_min, b)| (*level, b.wait_ms(*per_min, now)))
            .collect();
        if !refusing.is_empty() {
            tx.rollback().map_err(io)?;
            let retry_after_ms = refusing.iter().map(|(_, w)| *w).max().unwrap_or(1).max(1);
            return Ok(RateDecision::Refused {
                retry_after_ms,
                levels: refusing.into_iter().map(|(l, _)| l).collect(),
            });
        }
        for (_, key, _, b) in &buckets {
            tx.execute(
                "INSERT INTO buckets (key, milli_tokens, refilled_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET milli_tokens = excluded.milli_tokens, \
                 refilled_at = excluded.refilled_at",
                params![key, b.milli_tokens - 1000, b.refilled_at],
            )
            .map_err(io)?;
        }
        tx.commit().map_err(io)?;
        Ok(RateDecision::Allowed)
    }

    /// Adds one call's usage and cost to the totals of (agent, tool), atomically across processes,
    /// and returns the call's cost as recorded. Stored integers are SQLite's 64-bit ones: a
    /// value, and every total, saturates at `i64::MAX` (an overflowing sum would otherwise turn
    /// into an unreadable float).
    pub fn record_cost(
        &mut self,
        agent: &str,
        tool: &str,
        usage: &Usage,
        pricing: &Pricing,
    ) -> Result<u64, Error> {
        let clamp = |v: u64| v.min(i64::MAX as u64) as i64;
        let cost = clamp(pricing.cost_micros(usage));
        self.conn
            .execute(
                // An integer sum past i64::MAX is a float in SQLite; min() brings it back.
                "INSERT INTO costs (agent, tool, input_tokens, output_tokens, cached_tokens, \
                 calls, cost_micros) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)
                 ON CONFLICT (agent, tool) DO UPDATE SET
                   input_tokens = min(input_tokens + excluded.input_tokens, 9223372036854775807),
                   output_tokens = min(output_tokens + excluded.output_tokens, 9223372036854775807),
                   cached_tokens = min(cached_tokens + excluded.cached_tokens, 9223372036854775807),
                   calls = min(calls + 1, 9223372036854775807),
                   cost_micros = min(cost_micros + excluded.cost_micros, 9223372036854775807)",
                params![
                    agent,
                    tool,
                    clamp(usage.input_tokens),
                    clamp(usage.output_tokens),
                    clamp(usage.cached_tokens),
                    cost
                ],
            )
            .map_err(io)?;
        Ok(cost as u64)
    }

    /// Totals per (agent, tool), ordered by agent then tool.
    pub fn costs(&mut self) -> Result<Vec<CostRow>, Error> {
        let mut stmt = self
            .conn
            // CAST: totals an older version let overflow into floats read back saturated.
            .prepare(
                "SELECT agent, tool, CAST(input_tokens AS INTEGER), CAST(output_tokens AS INTEGER),
                 CAST(cached_tokens AS INTEGER), CAST(calls AS INTEGER), \
                 CAST(cost_micros AS INTEGER)
                 FROM costs ORDER BY agent, tool",
            )
            .map_err(io)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(CostRow {
                    agent: r.get(0)?,
                    tool: r.get(1)?,
                    usage: Usage {
                        input_tokens: r.get::<_, i64>(2)? as u64,
                        output_tokens: r.get::<_, i64>(3)? as u64,
                        cached_tokens: r.get::<_, i64>(4)? as u64,
                    },
                    calls: r.get::<_, i64>(5)? as u64,
                    cost_micros: r.get::<_, i64>(6)? as u64,
                })
            })
            .map_err(io)?;
        rows.collect::<Result<_, _>>().map_err(io)
    }
}
