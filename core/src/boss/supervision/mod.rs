//! Supervision (`./boss`): lifecycle subscriptions and their targets, authenticated activity,
//! active-operation and external-wait leases, smart-inactivity suppression, lifecycle triggers,
//! inactivity edges, subscriber rebind migrations, the supervisor ACL, and the supervision
//! vector corpus (`./boss/vectors`).
//!
//! Each function of the TypeScript core's `supervision.ts` is an operation `boss.<name>` with
//! the same checks in the same order, paths and messages. The parsers return fresh objects in the
//! TypeScript member order (built here as [`Js`] trees, written as JSON); the parts the
//! TypeScript core hands back as the caller's own objects (an old delivery group, a claim, an
//! equivalence key inside a migration record) are written back as the caller gave them.
//!
//! Modules, in the TypeScript order: [`subscription`] (targets, predicates, subscriptions,
//! triggers, inactivity edges), [`lease`] (activity, leases, renewals, smart inactivity),
//! [`evidence`] (a migration link's evidence), [`rebind`] (subscriber rebind migrations), [`acl`]
//! (`authorizeSupervisorSubscription`), [`vectors`] (the corpus and its hash). The delivery-group
//! and claim records a link carries, `deliveryGroupId` and the intent aggregate are
//! [`crate::boss::delivery`]'s, called where `supervision.ts` calls `boss-wire.ts`.

pub mod acl;
pub mod evidence;
pub mod lease;
pub mod rebind;
pub mod subscription;
pub mod vectors;

use super::{JsonObject, string_array_json};
use crate::boss::store::{self, StoreVersion};
use crate::contract::read::{self, Read, fail};
use crate::contract::value::write_json_string;
use crate::contract::{Args, Failure, Js, JsObject, JsStr, Op, Out, Proto, ops};

/// `orc.lifecycle-subscription.v1`.
pub const LIFECYCLE_SUBSCRIPTION_VERSION: &str = "orc.lifecycle-subscription.v1";
/// `orc.activity-record.v1`.
pub const ACTIVITY_RECORD_VERSION: &str = "orc.activity-record.v1";
/// `orc.active-operation-lease.v1`.
pub const ACTIVE_OPERATION_LEASE_VERSION: &str = "orc.active-operation-lease.v1";
/// `orc.external-wait-lease.v1`.
pub const EXTERNAL_WAIT_LEASE_VERSION: &str = "orc.external-wait-lease.v1";
/// `orc.subscriber-rebind-migration.v1`.
pub const SUBSCRIBER_REBIND_MIGRATION_VERSION: &str = "orc.subscriber-rebind-migration.v1";
/// `LIFECYCLE_TRIGGER_SCHEMA_VERSION`.
pub const LIFECYCLE_TRIGGER_SCHEMA_VERSION: i64 = 1;
/// `orc.lifecycle-trigger.v1`.
pub const LIFECYCLE_TRIGGER_VERSION: &str = "orc.lifecycle-trigger.v1";
/// The default ceiling of an external wait: two hours, in milliseconds.
pub const MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT: i64 = 2 * 60 * 60 * 1_000;

/// `SUBSCRIPTION_STATES`.
pub const SUBSCRIPTION_STATES: &[&str] =
    &["armed", "triggered", "suspended", "cancelled", "expired"];
/// `INACTIVITY_MODES`.
pub const INACTIVITY_MODES: &[&str] = &["smart", "raw"];
/// `ACTIVITY_BASES`.
pub const ACTIVITY_BASES: &[&str] = &["meaningful", "liveness"];
/// `SUPERVISED_ROLES`.
pub const SUPERVISED_ROLES: &[&str] =
    &["boss", "manager", "adversary", "scout", "worker", "council"];
/// `ACTIVITY_KINDS`.
pub const ACTIVITY_KINDS: &[&str] = &["meaningful", "liveness"];
/// `ACTIVITY_TYPES`.
pub const ACTIVITY_TYPES: &[&str] = &[
    "turn",
    "tool",
    "progress",
    "checkpoint",
    "assignment",
    "state_transition",
    "heartbeat",
    "health_confirmation",
];
/// `OPERATION_LEASE_STATES`.
pub const OPERATION_LEASE_STATES: &[&str] = &["active", "settled", "cancelled", "expired"];
/// `WAIT_SOURCE_KINDS`.
pub const WAIT_SOURCE_KINDS: &[&str] = &[
    "process",
    "timer",
    "file",
    "port",
    "url",
    "webhook",
    "async_tool",
    "other",
];
/// `WAIT_LEASE_STATES`.
pub const WAIT_LEASE_STATES: &[&str] = &["active", "fired", "cancelled", "expired"];
/// `REBIND_MIGRATION_STATES`.
pub const REBIND_MIGRATION_STATES: &[&str] =
    &["prepared", "projected", "committed", "aborted", "blocked"];
/// `SUPERVISOR_PRINCIPAL_KINDS`.
pub const SUPERVISOR_PRINCIPAL_KINDS: &[&str] = &[
    "ordinary_owner",
    "boss",
    "manager",
    "controller",
    "worker",
    "scout",
    "adversary",
    "council",
];

/// A fresh plain object under construction, its members in insertion order (the order of the
/// TypeScript object literal it stands for).
#[derive(Debug, Default)]
pub(crate) struct Rec(Vec<(JsStr, Js)>);

impl Rec {
    pub(crate) fn new() -> Rec {
        Rec(Vec::new())
    }

    /// A member.
    pub(crate) fn put(mut self, key: &str, value: Js) -> Rec {
        self.0.push((
            JsStr {
                text: key.to_string(),
                lone: None,
            },
            value,
        ));
        self
    }

    /// A member when present (`...(x === undefined ? {} : { x })`).
    pub(crate) fn opt(self, key: &str, value: Option<Js>) -> Rec {
        match value {
            Some(v) => self.put(key, v),
            None => self,
        }
    }

    pub(crate) fn build(self) -> Js {
        Js::Object(JsObject {
            proto: Proto::Plain,
            members: self.0,
            symbols: false,
        })
    }
}

/// The members of a record read where the TypeScript parsers read them: `<path>.<key>`.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'v, 'p> {
    value: &'v Js,
    path: &'p str,
}

/// The members of `value`, a record at `path`.
pub(crate) fn fields<'v, 'p>(value: &'v Js, path: &'p str) -> Fields<'v, 'p> {
    Fields { value, path }
}

impl<'v> Fields<'v, '_> {
    /// The path of a member.
    pub(crate) fn at(&self, key: &str) -> String {
        read::member(self.path, key)
    }

    /// A member as JavaScript reads it (`undefined` when absent).
    pub(crate) fn get(&self, key: &str) -> &'v Js {
        read::field(self.value, key)
    }

    pub(crate) fn string(&self, key: &str) -> Read<&'v str> {
        read::string(self.get(key), &self.at(key))
    }

    pub(crate) fn optional_string(&self, key: &str) -> Read<Option<&'v str>> {
        read::optional_string(self.get(key), &self.at(key))
    }

    pub(crate) fn integer(&self, key: &str, minimum: i64) -> Read<i64> {
        read::integer(self.get(key), &self.at(key), minimum)
    }

    pub(crate) fn optional_integer(&self, key: &str, minimum: i64) -> Read<Option<i64>> {
        read::optional_integer(self.get(key), &self.at(key), minimum)
    }

    pub(crate) fn timestamp(&self, key: &str) -> Read<&'v str> {
        read::timestamp(self.get(key), &self.at(key))
    }

    pub(crate) fn optional_timestamp(&self, key: &str) -> Read<Option<&'v str>> {
        read::optional_timestamp(self.get(key), &self.at(key))
    }

    pub(crate) fn boolean(&self, key: &str) -> Read<bool> {
        read::boolean(self.get(key), &self.at(key))
    }

    pub(crate) fn one_of<'a>(&self, key: &str, allowed: &[&'a str]) -> Read<&'a str> {
        read::one_of(self.get(key), allowed, &self.at(key))
    }

    /// `readEnum` of a member that may be absent.
    pub(crate) fn optional_one_of<'a>(
        &self,
        key: &str,
        allowed: &[&'a str],
    ) -> Read<Option<&'a str>> {
        read::optional(self.get(key), |v| read::one_of(v, allowed, &self.at(key)))
    }
}

/// A number value.
pub(crate) fn num(n: i64) -> Js {
    Js::Num(n as f64)
}

/// An array of strings.
pub(crate) fn strs<S: AsRef<str>>(items: &[S]) -> Js {
    Js::array(items.iter().map(|s| Js::str(s.as_ref())).collect())
}

/// A fresh value as the operation's answer.
pub(crate) fn answer(value: &Js) -> Out {
    Out::Json(
        value
            .to_json()
            .expect("a supervision projection is plain JSON data"),
    )
}

/// `assertUnproxied`: a proxy is refused before anything reads it.
pub(crate) fn unproxied(value: &Js, path: &str) -> Read<()> {
    match value {
        Js::Proxy => fail(path, "Proxy values are not supported"),
        _ => Ok(()),
    }
}

/// The supervision module's own dense-array reader: no proxy, then a dense array of own
/// enumerable data elements without other keys.
pub(crate) fn own_dense_array<'v>(value: &'v Js, path: &str) -> Read<Vec<&'v Js>> {
    unproxied(value, path)?;
    read::dense_array(value, path)
}

/// `Date.parse` of a timestamp a reader already accepted.
pub(crate) fn millis(timestamp: &str) -> i64 {
    read::parse_timestamp(timestamp).expect("a validated timestamp")
}

/// `a === b` where both are primitives of a projection (strings, numbers, booleans, undefined);
/// objects never compare equal.
pub(crate) fn same(a: &Js, b: &Js) -> bool {
    match (a, b) {
        (Js::Undefined, Js::Undefined) | (Js::Null, Js::Null) => true,
        (Js::Bool(x), Js::Bool(y)) => x == y,
        (Js::Num(x), Js::Num(y)) => x == y,
        (Js::Str(x), Js::Str(y)) => x == y,
        _ => false,
    }
}

/// A member of a projection, `undefined` when absent.
pub(crate) fn get<'v>(value: &'v Js, key: &str) -> &'v Js {
    read::field(value, key)
}

/// A string member of a projection.
pub(crate) fn text<'v>(value: &'v Js, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Js::as_str)
}

/// An integer member of a projection.
pub(crate) fn int(value: &Js, key: &str) -> Option<i64> {
    value.get(key).and_then(Js::safe_integer)
}

/// `validateVersionedStoreRecord(value, version, parse)` as JSON ([`store::validate`]); the
/// version is written as JSON where it can be (the Node binding puts the caller's own value
/// there).
fn store_answer(
    value: &Js,
    version: &'static str,
    parse: fn(&Js) -> Read<Js>,
) -> Result<Out, Failure> {
    Ok(Out::Json(store::validate(
        value,
        StoreVersion::Text(version),
        |v| {
            let parsed = parse(v)?;
            let json = parsed
                .to_json()
                .expect("a supervision projection is plain JSON data");
            Ok(Out::Json(json))
        },
    )))
}

/// `validateLifecycleSubscriptionStore`: a proxy is corrupt before the gate looks at it.
fn subscription_store(a: Args<'_>) -> Result<Out, Failure> {
    if matches!(a.get(0), Js::Proxy) {
        let mut out = String::from(r#"{"ok":false,"status":"corrupt","path":"$","message":"#);
        write_json_string(&mut out, "$: Proxy values are not supported");
        out.push_str(r#","preserveExisting":true,"mutationAllowed":false}"#);
        return Ok(Out::Json(out));
    }
    store_answer(
        a.get(0),
        LIFECYCLE_SUBSCRIPTION_VERSION,
        subscription::parse_lifecycle_subscription,
    )
}

/// This module's constants, added to `./boss`'s constant object (with the corpus's schema
/// version and its hash, computed from the corpus file).
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    let list = |items: &[&str]| string_array_json(items);
    o.int("SUPERVISION_VECTOR_SCHEMA_VERSION", vectors::SCHEMA_VERSION)
        .str("SUPERVISION_VECTORS_HASH", vectors::vectors_hash())
        .str(
            "LIFECYCLE_SUBSCRIPTION_VERSION",
            LIFECYCLE_SUBSCRIPTION_VERSION,
        )
        .str("ACTIVITY_RECORD_VERSION", ACTIVITY_RECORD_VERSION)
        .str(
            "ACTIVE_OPERATION_LEASE_VERSION",
            ACTIVE_OPERATION_LEASE_VERSION,
        )
        .str("EXTERNAL_WAIT_LEASE_VERSION", EXTERNAL_WAIT_LEASE_VERSION)
        .str(
            "SUBSCRIBER_REBIND_MIGRATION_VERSION",
            SUBSCRIBER_REBIND_MIGRATION_VERSION,
        )
        .int(
            "LIFECYCLE_TRIGGER_SCHEMA_VERSION",
            LIFECYCLE_TRIGGER_SCHEMA_VERSION,
        )
        .str("LIFECYCLE_TRIGGER_VERSION", LIFECYCLE_TRIGGER_VERSION)
        .int(
            "MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT",
            MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT,
        )
        .raw("SUBSCRIPTION_STATES", &list(SUBSCRIPTION_STATES))
        .raw("INACTIVITY_MODES", &list(INACTIVITY_MODES))
        .raw("ACTIVITY_BASES", &list(ACTIVITY_BASES))
        .raw("SUPERVISED_ROLES", &list(SUPERVISED_ROLES))
        .raw("ACTIVITY_KINDS", &list(ACTIVITY_KINDS))
        .raw("ACTIVITY_TYPES", &list(ACTIVITY_TYPES))
        .raw("OPERATION_LEASE_STATES", &list(OPERATION_LEASE_STATES))
        .raw("WAIT_SOURCE_KINDS", &list(WAIT_SOURCE_KINDS))
        .raw("WAIT_LEASE_STATES", &list(WAIT_LEASE_STATES))
        .raw("REBIND_MIGRATION_STATES", &list(REBIND_MIGRATION_STATES))
        .raw(
            "SUPERVISOR_PRINCIPAL_KINDS",
            &list(SUPERVISOR_PRINCIPAL_KINDS),
        )
}

fn parsed(result: Read<Js>) -> Result<Out, Failure> {
    result.map(|v| answer(&v))
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseLifecycleTarget",
        run: |a| {
            let path = ops::path(a, 1, "$")?;
            parsed(subscription::parse_lifecycle_target(a.get(0), &path))
        },
    },
    Op {
        name: "boss.parseLifecycleSubscription",
        run: |a| parsed(subscription::parse_lifecycle_subscription(a.get(0))),
    },
    Op {
        name: "boss.parseAuthenticatedActivity",
        run: |a| parsed(lease::parse_authenticated_activity(a.get(0))),
    },
    Op {
        name: "boss.parseActiveOperationLease",
        run: |a| parsed(lease::parse_active_operation_lease(a.get(0))),
    },
    Op {
        name: "boss.parseExternalWaitLease",
        run: |a| parsed(lease::parse_external_wait_lease_with(a.get(0), a.get(1))),
    },
    Op {
        name: "boss.validateActiveOperationLeaseRenewal",
        run: |a| parsed(lease::validate_operation_renewal(a.get(0), a.get(1))),
    },
    Op {
        name: "boss.validateExternalWaitLeaseRenewal",
        run: |a| parsed(lease::validate_wait_renewal(a.get(0), a.get(1), a.get(2))),
    },
    Op {
        name: "boss.isSmartInactivitySuppressed",
        run: |a| lease::is_smart_inactivity_suppressed(a.get(0)).map(|b| Out::Json(b.to_string())),
    },
    Op {
        name: "boss.parseLifecycleTrigger",
        run: |a| parsed(subscription::parse_lifecycle_trigger(a.get(0))),
    },
    Op {
        name: "boss.parseInactivityEdgeKey",
        run: |a| parsed(subscription::parse_inactivity_edge_key(a.get(0))),
    },
    Op {
        name: "boss.inactivityTransitionId",
        run: |a| parsed(subscription::inactivity_transition_id(a.get(0)).map(Js::str)),
    },
    Op {
        name: "boss.rebindMigrationEvidenceDigest",
        run: |a| parsed(evidence::evidence_digest(a.get(0)).map(Js::str)),
    },
    Op {
        name: "boss.parseSubscriberRebindMigration",
        run: |a| parsed(rebind::parse_subscriber_rebind_migration(a.get(0))),
    },
    Op {
        name: "boss.authorizeSupervisorSubscription",
        run: |a| Ok(answer(&acl::authorize(a.get(0), a.get(1)).to_js())),
    },
    Op {
        name: "boss.aggregateDeliveryIntent",
        run: |a| parsed(crate::boss::delivery::effective_delivery_intent(a.get(0)).map(Js::str)),
    },
    Op {
        name: "boss.validateLifecycleSubscriptionStore",
        run: subscription_store,
    },
    Op {
        name: "boss.validateAuthenticatedActivityStore",
        run: |a| {
            store_answer(
                a.get(0),
                ACTIVITY_RECORD_VERSION,
                lease::parse_authenticated_activity,
            )
        },
    },
    Op {
        name: "boss.validateActiveOperationLeaseStore",
        run: |a| {
            store_answer(
                a.get(0),
                ACTIVE_OPERATION_LEASE_VERSION,
                lease::parse_active_operation_lease,
            )
        },
    },
    Op {
        name: "boss.validateExternalWaitLeaseStore",
        run: |a| {
            store_answer(
                a.get(0),
                EXTERNAL_WAIT_LEASE_VERSION,
                lease::parse_external_wait_lease,
            )
        },
    },
    Op {
        name: "boss.validateLifecycleTriggerStore",
        run: |a| {
            store_answer(
                a.get(0),
                LIFECYCLE_TRIGGER_VERSION,
                subscription::parse_lifecycle_trigger,
            )
        },
    },
    Op {
        name: "boss.validateSubscriberRebindMigrationStore",
        run: |a| {
            store_answer(
                a.get(0),
                SUBSCRIBER_REBIND_MIGRATION_VERSION,
                rebind::parse_subscriber_rebind_migration,
            )
        },
    },
    Op {
        name: "boss.supervisionVectors",
        run: |_| Ok(Out::Json(vectors::exports_json())),
    },
    Op {
        name: "boss.stateForSupervisorAclVector",
        run: |_| Ok(Out::Json(vectors::acl_state_json())),
    },
];
