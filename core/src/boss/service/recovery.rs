//! The legacy admin migration record, the broker journal recovery record, and the four store
//! validators of `boss-service.ts` (`validateVersionedStoreRecord` around a record parser).

use super::identity::{identity_record, provider_attestation};
use super::{
    BROKER_IDENTITY_RECORD_VERSION, BROKER_JOURNAL_RECOVERY_VERSION,
    BROKER_PROVIDER_ATTESTATION_VERSION, LEGACY_ADMIN_MIGRATION_VERSION,
};
use crate::boss::wire::{is_number, is_string};
use crate::boss::{JsonObject, string_array_json};
use crate::contract::read::{
    self, exact_record, fail, field, hex_digest, integer, one_of, string, string_array, timestamp,
};
use crate::contract::{Args, Failure, Js, Op, Out};

fn version_check(v: &Js, expected: &str) -> read::Read<()> {
    let version = field(v, "version");
    if !is_string(version, expected) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    Ok(())
}

/// Whether `path` is a canonical absolute POSIX path strictly beneath `root` (what
/// `path.posix.normalize` leaves unchanged, with no backslash, NUL or trailing slash).
fn contained(path: &str, root: &str) -> bool {
    let canonical = path.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
    });
    canonical
        && !path.contains(['\\', '\0'])
        && path
            .strip_prefix(root)
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
}

/// `parseLegacyAdminMigrationRecord`, as the fresh record's JSON.
pub(crate) fn legacy_admin_migration(v: &Js) -> read::Read<String> {
    exact_record(
        v,
        &[
            "version",
            "ownerUid",
            "legacyAdminDigest",
            "remoteAccessRegistrationsImported",
            "remoteAccessSemanticsVersion",
            "legacyAdminState",
            "compatibilityProxyMode",
            "bossFeatureAdvertisedByProxy",
            "protectedRegistryPath",
            "migratedAt",
            "auditEventId",
        ],
        &[],
        "$",
    )?;
    version_check(v, LEGACY_ADMIN_MIGRATION_VERSION)?;
    if !is_number(field(v, "remoteAccessSemanticsVersion"), 2) {
        return fail(
            "$.remoteAccessSemanticsVersion",
            "must preserve remote-access-v1 semantics v2",
        );
    }
    if !is_string(field(v, "legacyAdminState"), "revoked_and_removed")
        || !is_string(field(v, "compatibilityProxyMode"), "ordinary_data_only")
        || !matches!(field(v, "bossFeatureAdvertisedByProxy"), Js::Bool(false))
    {
        return fail(
            "$",
            "legacy proxy must be ordinary-only and the old admin credential must be revoked \
             and removed",
        );
    }
    let owner = integer(field(v, "ownerUid"), "$.ownerUid", 0)?;
    let registry = string(field(v, "protectedRegistryPath"), "$.protectedRegistryPath")?;
    if !contained(
        registry,
        &format!("/var/lib/agent-intercom/brokers/{owner}"),
    ) {
        return fail(
            "$.protectedRegistryPath",
            "must be a canonical path strictly contained under the exact protected per-owner \
             broker state root",
        );
    }
    let digest = hex_digest(field(v, "legacyAdminDigest"), "$.legacyAdminDigest")?;
    let imported = integer(
        field(v, "remoteAccessRegistrationsImported"),
        "$.remoteAccessRegistrationsImported",
        0,
    )?;
    let migrated = timestamp(field(v, "migratedAt"), "$.migratedAt")?;
    let audit = string(field(v, "auditEventId"), "$.auditEventId")?;
    Ok(JsonObject::new()
        .str("version", LEGACY_ADMIN_MIGRATION_VERSION)
        .int("ownerUid", owner)
        .str("legacyAdminDigest", digest)
        .int("remoteAccessRegistrationsImported", imported)
        .int("remoteAccessSemanticsVersion", 2)
        .str("legacyAdminState", "revoked_and_removed")
        .str("compatibilityProxyMode", "ordinary_data_only")
        .bool("bossFeatureAdvertisedByProxy", false)
        .str("protectedRegistryPath", registry)
        .str("migratedAt", migrated)
        .str("auditEventId", audit)
        .finish())
}

/// `parseBrokerJournalRecoveryRecord`, as the fresh record's JSON.
pub(crate) fn journal_recovery(v: &Js) -> read::Read<String> {
    exact_record(
        v,
        &[
            "version",
            "providerDigest",
            "bootInstance",
            "brokerGeneration",
            "committedBrokerRevision",
            "recoveredAuthorityTransitionIds",
            "state",
            "recoveredAt",
        ],
        &["reason"],
        "$",
    )?;
    version_check(v, BROKER_JOURNAL_RECOVERY_VERSION)?;
    let ids_path = "$.recoveredAuthorityTransitionIds";
    let ids = string_array(field(v, "recoveredAuthorityTransitionIds"), ids_path)?;
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != ids.len() {
        return fail(ids_path, "must not contain duplicates");
    }
    let state = one_of(field(v, "state"), &["reconciled", "quarantined"], "$.state")?;
    let reason = read::optional_string(field(v, "reason"), "$.reason")?;
    if (state == "quarantined") != reason.is_some() {
        return fail("$.reason", "is required exactly for quarantined recovery");
    }
    let digest = hex_digest(field(v, "providerDigest"), "$.providerDigest")?;
    let boot = string(field(v, "bootInstance"), "$.bootInstance")?;
    let generation = integer(field(v, "brokerGeneration"), "$.brokerGeneration", 1)?;
    let revision = integer(
        field(v, "committedBrokerRevision"),
        "$.committedBrokerRevision",
        0,
    )?;
    let recovered = timestamp(field(v, "recoveredAt"), "$.recoveredAt")?;
    Ok(JsonObject::new()
        .str("version", BROKER_JOURNAL_RECOVERY_VERSION)
        .str("providerDigest", digest)
        .str("bootInstance", boot)
        .int("brokerGeneration", generation)
        .int("committedBrokerRevision", revision)
        .raw("recoveredAuthorityTransitionIds", &string_array_json(&ids))
        .str("state", state)
        .opt_str("reason", reason)
        .str("recoveredAt", recovered)
        .finish())
}

/// `validateVersionedStoreRecord(value, expected, parse)` with the whole result as JSON: the
/// Boss modules' one gate ([`crate::boss::store`]) over a parser answering fresh JSON.
fn validate(value: &Js, expected: &'static str, parse: fn(&Js) -> read::Read<String>) -> String {
    crate::boss::store::validate(
        value,
        crate::boss::store::StoreVersion::Text(expected),
        |v| parse(v).map(Out::Json),
    )
}

fn attestation_json(v: &Js) -> read::Read<String> {
    provider_attestation(v).map(|a| a.json)
}

fn identity_json(v: &Js) -> read::Read<String> {
    identity_record(v).map(|i| i.json)
}

fn json_op(a: Args<'_>, parse: fn(&Js) -> read::Read<String>) -> Result<Out, Failure> {
    parse(a.get(0)).map(Out::Json)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseLegacyAdminMigrationRecord",
        run: |a| json_op(a, legacy_admin_migration),
    },
    Op {
        name: "boss.parseBrokerJournalRecoveryRecord",
        run: |a| json_op(a, journal_recovery),
    },
    Op {
        name: "boss.validateBrokerProviderAttestationStore",
        run: |a| {
            let expected = BROKER_PROVIDER_ATTESTATION_VERSION;
            Ok(Out::Json(validate(a.get(0), expected, attestation_json)))
        },
    },
    Op {
        name: "boss.validateBrokerIdentityStore",
        run: |a| {
            let expected = BROKER_IDENTITY_RECORD_VERSION;
            Ok(Out::Json(validate(a.get(0), expected, identity_json)))
        },
    },
    Op {
        name: "boss.validateLegacyAdminMigrationStore",
        run: |a| {
            let expected = LEGACY_ADMIN_MIGRATION_VERSION;
            Ok(Out::Json(validate(
                a.get(0),
                expected,
                legacy_admin_migration,
            )))
        },
    },
    Op {
        name: "boss.validateBrokerJournalRecoveryStore",
        run: |a| {
            let expected = BROKER_JOURNAL_RECOVERY_VERSION;
            Ok(Out::Json(validate(a.get(0), expected, journal_recovery)))
        },
    },
];

#[cfg(test)]
mod tests {
    use super::contained;

    #[test]
    fn registry_paths() {
        let root = "/var/lib/agent-intercom/brokers/1000";
        assert!(contained(&format!("{root}/registry.json"), root));
        assert!(contained(&format!("{root}/a/..b"), root));
        for bad in [
            "/var/lib/agent-intercom/brokers/1000/../1001/registry.json",
            "/var/lib/agent-intercom/brokers/1000/./registry.json",
            "/var/lib/agent-intercom/brokers/1000//registry.json",
            "/var/lib/agent-intercom/brokers/1000-extra/registry.json",
            "/var/lib/agent-intercom/brokers/1000",
            "/var/lib/agent-intercom/brokers/1000/",
            "//var/lib/agent-intercom/brokers/1000/registry.json",
            "/var/lib/agent-intercom/brokers/1000\\registry.json",
            "/var/lib/agent-intercom/brokers/1000/registry\0.json",
        ] {
            assert!(!contained(bad, root), "{bad}");
        }
    }
}
